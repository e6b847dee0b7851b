//! The built-in kinds the server knows (`apiserver_rules::builtin`, generated from the
//! Kubernetes API), and how the server reads their bodies: Go's JSON decoder ([`decode`])
//! and protobuf ([`protobuf`]).

pub mod decode;
pub mod protobuf;

pub use apiserver_rules::builtin::*;
