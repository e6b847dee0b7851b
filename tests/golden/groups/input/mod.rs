//! Several groups and versions in one tree, and `+groupGoName`.
pub mod apps;
pub mod extensions;
