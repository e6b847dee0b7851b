//! The sample controller's API types and the typed clients generated from them.
//!
//! `src/apis` is hand-written; `src/generated` is written by `hack/update-codegen.sh` and
//! checked by `hack/verify-codegen.sh`. The controllers themselves come next.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;
