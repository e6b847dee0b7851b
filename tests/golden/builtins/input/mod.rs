//! Built-in kinds declared with `+genclient` type aliases, next to nothing else.
pub mod apps;
pub mod core;
