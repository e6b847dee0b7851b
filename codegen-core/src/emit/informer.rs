//! The per-resource informer and listers: `FooInformer`, `FooLister`, `FooNamespaceLister`.
//!
//! Thin typed views over the runtime's `SharedInformer` and `Lister`, named as client-go
//! names them; generated when the client has the list and watch verbs.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Resource, Scope};
use crate::naming;

/// Every informer and lister item of `r`, or nothing without list and watch.
pub(crate) fn informer_items(r: &Resource) -> TokenStream {
    if !r.has_informer() {
        return TokenStream::new();
    }
    let vis = &r.vis;
    let ty = &r.ident;
    let kind = &r.kind;
    let rt = quote!(::kube_codegen_runtime);
    let informer = r.informer_ident();
    let lister = r.lister_ident();
    let ns_lister = r.namespace_lister_ident();
    let informer_doc = format!(
        " The shared informer of [`{ty}`] objects: one watch and one cache per factory; its `lister()` is a [`{lister}`]."
    );
    let lister_doc = format!(
        " A read-only, cache-backed view of [`{ty}`] objects; objects are shared, clone one to change it."
    );
    let listers = match r.scope {
        Scope::Namespaced => {
            let accessor = naming::ident(&r.accessor());
            let doc = format!(" The cached `{kind}` objects of `namespace`.");
            let ns_doc = format!(
                " The cached [`{ty}`] objects of one namespace: `get` and `list` (the runtime's `NamespaceLister`)."
            );
            let lister_doc2 = format!(
                " `list` and `by_index` over all namespaces come from the runtime's `ScopedLister`; `{accessor}(namespace)` gets one namespace's view."
            );
            quote! {
                #[doc = #lister_doc]
                #[doc = ""]
                #[doc = #lister_doc2]
                #[derive(::core::clone::Clone, ::core::fmt::Debug)]
                #vis struct #lister(#rt::ScopedLister<#ty, #rt::client::scope::Namespaced>);

                #[automatically_derived]
                impl ::core::ops::Deref for #lister {
                    type Target = #rt::ScopedLister<#ty, #rt::client::scope::Namespaced>;

                    #[inline]
                    fn deref(&self) -> &Self::Target {
                        &self.0
                    }
                }

                #[automatically_derived]
                impl ::core::convert::From<#rt::Lister<#ty>> for #lister {
                    #[inline]
                    fn from(lister: #rt::Lister<#ty>) -> Self {
                        Self(::core::convert::From::from(lister))
                    }
                }

                impl #lister {
                    #[doc = #doc]
                    #[inline]
                    pub fn #accessor(&self, namespace: &str) -> #ns_lister {
                        self.0.namespace(namespace)
                    }
                }

                #[doc = #ns_doc]
                #vis type #ns_lister = #rt::NamespaceLister<#ty>;
            }
        }
        Scope::Cluster => {
            let lister_doc2 = " `list`, `by_index` and `get(name)` (the runtime's `ScopedLister`).";
            quote! {
                #[doc = #lister_doc]
                #[doc = #lister_doc2]
                #vis type #lister = #rt::ScopedLister<#ty, #rt::client::scope::Cluster>;
            }
        }
    };
    quote! {
        #[doc = #informer_doc]
        #vis type #informer = #rt::TypedInformer<#ty, #lister>;

        #listers
    }
}
