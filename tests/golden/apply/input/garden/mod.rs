//! The garden group.

pub mod v1;
