//! +groupName=filters.example.com
pub mod types;
