//! +groupName=shop.example.com
pub mod gadget;
