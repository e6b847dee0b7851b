//! Core group.

pub mod v1;
