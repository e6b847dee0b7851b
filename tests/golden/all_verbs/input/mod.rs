//! A namespaced kind with status and scale: every verb plus the scale methods.
pub mod widgets;
