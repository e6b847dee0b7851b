//! What kube-apiserver and apiextensions-apiserver accept, as functions from JSON to field
//! errors in the real servers' words: name formats, object metadata, custom resources
//! against their schema, and CRDs themselves; and what it stores for built-in objects
//! (their defaults, in [`defaults`]).
//!
//! `fake-apiserver` applies these on every write; `kube-codegen-runtime` checks every CRD it
//! builds with them, so that a CRD the generator emits is one a cluster accepts.

pub mod base64;
pub mod builtin;
#[cfg(feature = "cel")]
pub mod cel;
pub mod conversion;
pub mod crd;
pub mod crd_schema;
pub mod defaults;
pub mod field;
pub mod formats;
pub mod json;
pub mod kinds;
pub mod meta;
pub mod names;
pub mod schema;
pub mod version;
