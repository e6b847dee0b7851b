//! Raw attributes: what the user wrote, read into typed values but not yet validated.

pub mod genclient;
pub mod kube;
pub mod marker;
pub mod package;
