//! `conversion.rs`: the conversion webhooks of the kinds whose storage version is marked
//! `+kube-codegen:conversion`, each converting between its versions through that version
//! (the hub) with the `TryFrom` conversions the user writes. A missing one is a compile error
//! of this file naming the two types. The file's test runs the round trips of every kind
//! over objects drawn from its CRD (`Conversion::assert_round_trips`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::tree::{ApiTree, CrdVersion};

/// The hub and the other versions of each kind marked for conversion, sorted by (group,
/// kind) as `tree.crds` is.
fn kinds(tree: &ApiTree) -> Vec<(&CrdVersion, Vec<&CrdVersion>)> {
    tree.crds
        .chunk_by(|a, b| a.group == b.group && a.resource.resource.kind == b.resource.resource.kind)
        .filter_map(|same| {
            let hub = same
                .iter()
                .find(|c| c.resource.resource.storage_version && c.resource.resource.conversion)?;
            let spokes = same.iter().filter(|c| c.version != hub.version).collect();
            Some((hub, spokes))
        })
        .collect()
}

/// Whether the tree has a `conversion.rs`.
pub(crate) fn has_conversions(tree: &ApiTree) -> bool {
    !kinds(tree).is_empty()
}

fn type_path(c: &CrdVersion) -> Result<syn::Path, syn::Error> {
    syn::parse_str(&format!(
        "{}::{}",
        c.resource.module, c.resource.resource.ident
    ))
}

/// The file's items.
pub(crate) fn conversion_file(tree: &ApiTree) -> Result<TokenStream, syn::Error> {
    let runtime = quote!(::kube_codegen_runtime::webhook::conversion);
    let mut entries = Vec::new();
    for (hub, spokes) in kinds(tree) {
        let hub_ty = type_path(hub)?;
        let spokes = spokes
            .into_iter()
            .map(type_path)
            .collect::<Result<Vec<_>, _>>()?;
        entries.push(quote! {
            (
                #runtime::path::<#hub_ty>(),
                #runtime::Conversion::hub::<#hub_ty>()
                    #(.spoke::<#spokes, #hub_ty>())*,
            )
        });
    }
    Ok(quote! {
        //! Conversion webhooks of the kinds marked `+kube-codegen:conversion`: each converts
        //! between its versions through its storage version (the hub), with the `TryFrom`
        //! (or `From`) conversions between each other version's type and the hub's.
        //! Needs `kube-codegen-runtime`'s `webhook` feature.

        /// Every such kind: the path its conversion webhook is served at (the one `kube-codegen
        /// crds --conversion-service` writes into its CRD) and its conversion. Serve them with
        /// `WebhookServer::conversions`.
        pub fn conversions() -> ::std::vec::Vec<(::std::string::String, #runtime::Conversion)> {
            ::std::vec::Vec::from([#(#entries),*])
        }

        /// Objects of every version of each such kind, drawn at random from its CRD's
        /// schemas, convert to every other version and back unchanged (spoke -> hub -> spoke
        /// and hub -> spoke -> hub): a conversion that loses a field fails here.
        #[cfg(test)]
        #[test]
        fn conversions_round_trip() {
            let crds = super::crds().expect("the tree's CRDs build");
            for (_, conversion) in conversions() {
                conversion.assert_round_trips(&crds);
            }
        }
    })
}
