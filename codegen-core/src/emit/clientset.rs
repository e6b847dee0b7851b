//! The aggregates only a whole-tree view can build: group/version clients and the clientset.

use heck::ToUpperCamelCase;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use crate::model::Scope;
use crate::naming;
use crate::tree::{ApiTree, GroupVersion};

/// `SamplecontrollerV1alpha1Client`.
pub(crate) fn group_client_ident(gv: &GroupVersion) -> Ident {
    naming::ident(&format!(
        "{}{}Client",
        gv.group_go_name,
        gv.version.to_upper_camel_case()
    ))
}

/// `samplecontroller_v1alpha1`.
pub(crate) fn group_accessor_ident(gv: &GroupVersion) -> Ident {
    naming::ident(&naming::group_version_accessor(
        &gv.group_go_name,
        &gv.version,
    ))
}

/// The group/version client: one accessor per resource.
pub(crate) fn group_client_items(gv: &GroupVersion) -> TokenStream {
    let rt = quote!(::kube_codegen_runtime);
    let name = group_client_ident(gv);
    let doc = format!(
        " Typed clients of the `{}/{}` resources.",
        gv.group, gv.version
    );
    let accessors = gv.resources.iter().map(|tr| {
        let r = &tr.resource;
        let client = r.client_ident();
        let accessor = naming::ident(&r.accessor());
        match r.scope {
            Scope::Namespaced => {
                let all = naming::ident(&format!("{}_all", r.accessor()));
                let doc = format!(" `{}` objects in `namespace`.", r.kind);
                let all_doc = format!(
                    " `{}` objects in every namespace: list and watch only.",
                    r.kind
                );
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #accessor(&self, namespace: &str) -> #client<#rt::client::scope::Namespaced> {
                        #client::new(self.client.clone(), namespace, self.field_manager.clone())
                    }

                    #[doc = #all_doc]
                    #[inline]
                    pub fn #all(&self) -> #client<#rt::client::scope::AllNamespaces> {
                        #client::all(self.client.clone(), self.field_manager.clone())
                    }
                }
            }
            Scope::Cluster => {
                let doc = format!(" `{}` objects (cluster-scoped).", r.kind);
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #accessor(&self) -> #client<#rt::client::scope::Cluster> {
                        #client::new(self.client.clone(), self.field_manager.clone())
                    }
                }
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[derive(Clone)]
        pub struct #name {
            client: ::kube::Client,
            field_manager: #rt::FieldManager,
        }

        impl ::core::fmt::Debug for #name {
            #[inline]
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!(#name)).field("field_manager", &self.field_manager).finish()
            }
        }

        impl #name {
            /// Clients that share `client` and write with `field_manager`.
            #[inline]
            pub fn new(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                Self { client, field_manager }
            }

            #(#accessors)*
        }
    }
}

/// The clientset: one accessor per group/version of the tree.
pub(crate) fn clientset_items(tree: &ApiTree) -> TokenStream {
    let rt = quote!(::kube_codegen_runtime);
    let accessors = tree.versions.iter().map(|gv| {
        let accessor = group_accessor_ident(gv);
        let client = group_client_ident(gv);
        let module = naming::ident(&naming::group_module(&gv.group_go_name));
        let version = naming::ident(&gv.version);
        let doc = format!(" Clients of `{}/{}`.", gv.group, gv.version);
        quote! {
            #[doc = #doc]
            #[inline]
            pub fn #accessor(&self) -> super::#module::#version::#client {
                super::#module::#version::#client::new(self.client.clone(), self.field_manager.clone())
            }
        }
    });
    quote! {
        /// Typed clients for every group/version of the API tree, sharing one `kube::Client`
        /// and one field manager.
        #[derive(Clone)]
        pub struct Clientset {
            client: ::kube::Client,
            field_manager: #rt::FieldManager,
        }

        impl ::core::fmt::Debug for Clientset {
            #[inline]
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct("Clientset").field("field_manager", &self.field_manager).finish()
            }
        }

        impl Clientset {
            /// A clientset over `client`; server-side applies are made as `field_manager`.
            #[inline]
            pub fn new(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                Self { client, field_manager }
            }

            /// The shared `kube::Client`.
            #[inline]
            pub fn client(&self) -> &::kube::Client {
                &self.client
            }

            /// The field manager of server-side applies.
            #[inline]
            pub fn field_manager(&self) -> &#rt::FieldManager {
                &self.field_manager
            }

            #(#accessors)*
        }
    }
}
