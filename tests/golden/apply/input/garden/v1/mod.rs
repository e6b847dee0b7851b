//! Version `v1` of `garden.example.com`.
//!
//! +groupName=garden.example.com

pub mod greenhouse;
pub mod planter;
pub mod shed;
