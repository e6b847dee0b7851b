//! `#[derive(GenClient)]`: a typed Kubernetes client expanded next to kube's `CustomResource`.
//!
//! Put it on the spec struct, beside `#[derive(CustomResource)]`; it reads the same
//! `#[kube(...)]` attribute and the `+genclient` options, and expands `FooClient` in place.
//! See [`GenClient`] for the complete reference.

extern crate proc_macro;

use proc_macro::TokenStream;

#[doc = include_str!("../REFERENCE.md")]
#[proc_macro_derive(GenClient, attributes(genclient, kube))]
pub fn derive_gen_client(input: TokenStream) -> TokenStream {
    kube_codegen_core::derive_gen_client(input.into()).into()
}

/// Reads the `+kubebuilder:` markers of a struct below a spec or status, so that the spec's
/// CRD gets them: `#[derive(CrdMarkers)]` next to `JsonSchema`.
///
/// The markers are checked at compile time against the struct's own fields, as on the spec;
/// the `GenClient` derive of the spec that uses the struct (directly, in a `Vec`, a map or an
/// `Option`) applies them when it builds the CRD (`Foo::crd_with_markers()`). A struct with
/// markers but without this derive makes `crd_with_markers()` fail, naming the marker.
#[proc_macro_derive(CrdMarkers)]
pub fn derive_crd_markers(input: TokenStream) -> TokenStream {
    kube_codegen_core::derive_crd_markers(input.into()).into()
}

/// The apply configuration of a struct or enum used by a spec marked
/// `+kubebuilder:ac:generate=true`: `XApplyConfiguration` (every field optional, with
/// `with_*` builders) for a struct, the enum itself for an enum, and the
/// `kube_codegen_runtime::apply::Apply` impl that makes the spec's apply configuration use it.
#[proc_macro_derive(ApplyConfiguration)]
pub fn derive_apply_configuration(input: TokenStream) -> TokenStream {
    kube_codegen_core::derive_apply_configuration(input.into()).into()
}
