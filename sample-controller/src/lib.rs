//! The sample controller: Foo and Icecream, driven by the code kube-codegen generates.
//!
//! `src/apis` is hand-written; `src/generated` is written by `hack/update-codegen.sh` and
//! checked by `hack/verify-codegen.sh`. The controllers read through generated listers,
//! write through the generated clientset, and run on `kube_codegen_runtime`'s controllers
//! and manager over the generated informer factory.

pub mod apis;
pub mod controller;
pub mod embedded;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;
pub mod run;
pub mod webhook;
