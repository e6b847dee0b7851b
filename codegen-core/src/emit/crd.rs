//! The marker patches as Rust: a `&[Patch]` slice for `kube_codegen_runtime::crd::build`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::schema::Patch;

/// JSON text as a raw string literal, so the generated file reads like the JSON it holds.
fn raw(text: &str) -> TokenStream {
    let mut hashes = String::from("#");
    while text.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{text}\"{hashes}")
        .parse()
        .unwrap_or_else(|_| quote!(#text))
}

/// `&[Patch::..., ...]` for `patches`.
pub fn patches(patches: &[Patch]) -> TokenStream {
    let items = patches.iter().map(|p| match p {
        Patch::Schema { path, set } => {
            let set = raw(&serde_json::Value::Object(set.clone()).to_string());
            quote!(::kube_codegen_runtime::crd::Patch::Schema { path: &[#(#path),*], set: #set })
        }
        Patch::Required {
            path,
            field,
            required,
        } => quote!(::kube_codegen_runtime::crd::Patch::Required {
            path: &[#(#path),*],
            field: #field,
            required: #required,
        }),
        Patch::Merge { pointer, value } => {
            let value = raw(&value.to_string());
            quote!(::kube_codegen_runtime::crd::Patch::Merge { pointer: #pointer, value: #value })
        }
    });
    quote!(&[#(#items),*])
}

/// `build::<path>(&[...])`: the CRD of one version with its markers.
pub fn build_call(ty: &TokenStream, list: &[Patch]) -> TokenStream {
    let list = patches(list);
    quote!(::kube_codegen_runtime::crd::build::<#ty>(#list))
}

/// `impl Foo { pub fn crd_with_markers() }`: one version's CRD, kube's plus the markers.
pub fn crd_items(r: &crate::model::Resource, list: &[Patch]) -> TokenStream {
    if r.builtin {
        return TokenStream::new();
    }
    let ident = &r.ident;
    let call = build_call(&quote!(#ident), list);
    let crd = quote!(::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition);
    quote! {
        impl #ident {
            /// The CRD of this version: kube's `CustomResourceExt::crd()` with the
            /// `+kubebuilder:` markers of the spec (and, from the CLI, of the status and
            /// nested structs) applied. Errors instead of panicking when kube cannot build
            /// the schema.
            pub fn crd_with_markers() -> ::core::result::Result<#crd, ::kube_codegen_runtime::crd::CrdError> {
                #call
            }
        }
    }
}
