//! The marker patches as Rust: a `&[Patch]` slice for `kube_codegen_runtime::crd::build`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::schema::{Markers, Patch, Probe};
use crate::tree::ApiTree;

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
pub(crate) fn patches(patches: &[Patch]) -> TokenStream {
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
        Patch::Read { path } => {
            quote!(::kube_codegen_runtime::crd::Patch::Read { path: &[#(#path),*] })
        }
    });
    quote!(&[#(#items),*])
}

/// Statements that ask each probed field type for its markers, below `at` (an expression
/// of type `&[&str]`) into `out` (a `&mut Patches`).
fn probe_calls(probes: &[Probe], at: &TokenStream, out: &TokenStream) -> TokenStream {
    if probes.is_empty() {
        return TokenStream::new();
    }
    let calls = probes.iter().map(|p| {
        let ty = &p.ty;
        let path = &p.path;
        quote! {
            let mut __at: ::std::vec::Vec<&str> = #at.to_vec();
            __at.extend([#(#path),*]);
            (&&::kube_codegen_runtime::crd::probe::Probe::<#ty>::new()).crd_markers(&__at, #out);
        }
    });
    quote! {{
        use ::kube_codegen_runtime::crd::probe::{WithMarkers as _, WithoutMarkers as _};
        #(#calls)*
    }}
}

/// `impl CrdMarkers for S`: a nested struct's patches, and those of the types below it, for
/// the `GenClient` derive of the spec that uses it.
pub(crate) fn crd_markers_impl(s: &syn::ItemStruct, markers: &Markers) -> TokenStream {
    let ident = &s.ident;
    let (impl_generics, ty_generics, where_clause) = s.generics.split_for_impl();
    let list = patches(&markers.patches);
    let probes = probe_calls(&markers.probes, &quote!(at), &quote!(out));
    quote! {
        impl #impl_generics ::kube_codegen_runtime::crd::CrdMarkers for #ident #ty_generics #where_clause {
            #[inline]
            fn crd_markers(at: &[&str], out: &mut ::kube_codegen_runtime::crd::Patches) {
                out.add(at, #list);
                #probes
            }
        }
    }
}

/// `build::<path>(&[...])`: the CRD of one version with its markers.
pub(crate) fn build_call(ty: &TokenStream, list: &[Patch]) -> TokenStream {
    let list = patches(list);
    quote!(::kube_codegen_runtime::crd::build::<#ty>(#list))
}

/// `impl Foo { pub fn crd_with_markers() }`: one version's CRD, kube's plus the markers
/// (with the derive, also those of the field types that derive `CrdMarkers`).
pub(crate) fn crd_items(r: &crate::model::Resource, markers: &Markers) -> TokenStream {
    if r.builtin {
        return TokenStream::new();
    }
    let ident = &r.ident;
    let call = if markers.probes.is_empty() {
        build_call(&quote!(#ident), &markers.patches)
    } else {
        let list = patches(&markers.patches);
        let probes = probe_calls(&markers.probes, &quote!([]), &quote!(&mut __patches));
        quote! {{
            let mut __patches = ::kube_codegen_runtime::crd::Patches::root(#list);
            #probes
            ::kube_codegen_runtime::crd::build_with::<#ident>(__patches)
        }}
    };
    let crd = quote!(::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition);
    quote! {
        impl #ident {
            /// The CRD of this version: kube's `CustomResourceExt::crd()` with the
            /// `+kubebuilder:` markers of the spec (and, from the CLI, of the status and
            /// nested structs) applied. Errors instead of panicking when kube cannot build
            /// the schema.
            #[inline]
            pub fn crd_with_markers() -> ::core::result::Result<#crd, ::kube_codegen_runtime::crd::CrdError> {
                #call
            }
        }
    }
}

/// Per (group, kind): the CRD call, version and storage flag of each version.
type KindVersions = std::collections::BTreeMap<(String, String), Vec<(TokenStream, String, bool)>>;

/// A CRD's `(group, kind)` and the expression that builds it.
pub(crate) type CrdEntry = ((String, String), TokenStream);

/// One expression per CRD of the tree, sorted by (group, kind), each of which evaluates to
/// the CRD or returns its `CrdError` with `?`. With `direct`, every version is built from
/// the tree's patches (`kube-codegen crds`); otherwise CLI-generated kinds call the
/// `crd_with_markers()` generated next to their client.
pub(crate) fn crd_entries(tree: &ApiTree, direct: bool) -> Result<Vec<CrdEntry>, syn::Error> {
    let mut kinds: KindVersions = Default::default();
    for c in &tree.crds {
        let tr = &c.resource;
        let path = crate::naming::path(&format!("{}::{}", tr.module, tr.resource.ident))?;
        kinds
            .entry((c.group.clone(), tr.resource.kind.clone()))
            .or_default()
            .push((
                if tr.in_place || direct || !c.client {
                    // The derive's `crd_with_markers` sees the spec only; the CLI sees the
                    // status and nested structs too.
                    build_call(&quote!(#path), &tr.patches)
                } else {
                    quote!(#path::crd_with_markers())
                },
                c.version.clone(),
                tr.resource.storage_version,
            ));
    }
    Ok(kinds
        .into_iter()
        .map(|(key, versions)| {
            if let [(call, _, _)] = versions.as_slice() {
                return (key, quote!(#call?));
            }
            let stored = versions
                .iter()
                .find(|(_, _, s)| *s)
                .map_or("", |(_, v, _)| v.as_str())
                .to_owned();
            let calls = versions.iter().map(|(c, _, _)| c);
            let entry = quote!(::kube_codegen_runtime::crd::merge(
                ::std::vec::Vec::from([#(#calls?),*]),
                #stored,
            )?);
            (key, entry)
        })
        .collect())
}

/// `crds.rs`: every CRD of the tree, one per kind, versions merged around the stored one.
pub(crate) fn crds_file(tree: &ApiTree) -> Result<TokenStream, syn::Error> {
    let entries = crd_entries(tree, false)?.into_iter().map(|(_, e)| e);
    let crd = quote!(::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition);
    Ok(quote! {
        //! The CustomResourceDefinitions of this API tree, with their `+kubebuilder:` markers.

        /// Every CRD of the tree, one per kind (several versions merged around the one marked
        /// `+kubebuilder:storageversion`), to install or check at start-up.
        #[inline]
        pub fn crds() -> ::core::result::Result<::std::vec::Vec<#crd>, ::kube_codegen_runtime::crd::CrdError> {
            ::core::result::Result::Ok(::std::vec::Vec::from([#(#entries),*]))
        }
    })
}

/// The `main.rs` of the runner `kube-codegen crds` builds against the user's crate: every
/// CRD of `tree` (whose module paths name the crate), reported as JSON on stdout.
pub(crate) fn runner_main(tree: &ApiTree) -> Result<TokenStream, syn::Error> {
    let entries = crd_entries(tree, true)?.into_iter().map(|(_, e)| {
        quote! {
            (|| -> ::core::result::Result<_, ::kube_codegen_runtime::crd::CrdError> {
                ::core::result::Result::Ok(#e)
            })()
        }
    });
    Ok(quote! {
        //! Built and run by `kube-codegen crds`: prints the crate's CRDs as JSON.

        fn main() {
            ::kube_codegen_runtime::crd::__report(::std::vec::Vec::from([#(#entries),*]));
        }
    })
}
