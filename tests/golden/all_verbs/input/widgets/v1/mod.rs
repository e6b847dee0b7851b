//! +groupName=widgets.example.com
pub mod widget;
