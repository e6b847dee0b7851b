//! +groupName=apps.example.com
pub mod app;
