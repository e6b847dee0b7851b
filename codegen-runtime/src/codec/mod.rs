//! Generated JSON codecs: a line per field in place of serde's derives, for what the
//! generator writes in bulk.
//!
//! - [`apply`]: how apply configurations are read from and written as JSON objects
//!   ([`apply_codec!`](crate::apply_codec!)).
//! - [`imported`]: how the types `kube-codegen import` writes are read and written
//!   ([`struct_codec!`](crate::struct_codec!), [`enum_codec!`](crate::enum_codec!)).

pub mod apply;
pub mod imported;
