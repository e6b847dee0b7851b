//! Third-party CRDs (the YAML in `crds/`) imported with `kube-codegen import` into annotated
//! API types (`src/apis`), and the typed clients, listers, informers and apply
//! configurations `kube-codegen generate` writes for them (`src/generated`).
//!
//! Regenerate both with `hack/update-codegen.sh`; `tests/round_trip.rs` checks that the CRDs
//! built from the imported types give back the schemas of `crds/`.

// Written by `kube-codegen import` (rustfmt would make them drift from `--verify`).
#[rustfmt::skip]
#[allow(missing_docs)]
pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;
