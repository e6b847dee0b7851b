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
