//! What kube-apiserver accepts, as functions from JSON to field errors with the real
//! server's wording: name formats, object metadata, field errors and their messages.
//!
//! The server uses these on every write; they are public so that tools which emit
//! Kubernetes objects (`kube-codegen` checks the CRDs it writes) apply the same rules.

pub mod crd;
pub mod crd_schema;
pub mod field;
pub mod formats;
pub mod meta;
pub mod names;
pub mod schema;
