//! The crate of `imported-compile` (hack/bench-build.sh): CRDs imported with `kube-codegen
//! import` (`apis`) and the clients, listers, informers and apply configurations `kube-codegen
//! generate` writes for them (`generated`), as examples/imported has them.

#[allow(missing_docs)]
pub mod apis;
pub mod generated;
