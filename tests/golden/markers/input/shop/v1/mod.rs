//! Version `v1` of `shop.example.com`.
//!
//! +groupName=shop.example.com

pub mod coupon;
pub mod order;
