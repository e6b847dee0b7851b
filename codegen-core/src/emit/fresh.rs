//! The freshness checks of a generated tree's `mod.rs`: one constant per input file that
//! fails the build, naming the command that regenerates the tree, once the file no longer
//! has the fingerprint it had when the tree was generated (see the runtime's `fresh`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::source::Input;

/// The checks, for `mod.rs`.
pub(crate) fn checks(inputs: &[Input], command: &str) -> TokenStream {
    let checks = inputs.iter().map(|i| {
        let path = &i.from_output;
        let fingerprint = proc_macro2::Literal::u64_suffixed(i.fingerprint);
        let message = format!(
            "generated code is stale: `{}` changed since it was generated; run `{command}`",
            i.relative
        );
        quote! {
            const _: () = ::kube_codegen_runtime::fresh::fresh(::core::include_bytes!(#path), #fingerprint, #message);
        }
    });
    if inputs.is_empty() {
        return TokenStream::new();
    }
    quote!(#(#checks)*)
}
