//! +groupName=ext.example.com
pub mod gadget;
pub mod gizmo;
