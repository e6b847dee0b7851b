//! The per-resource informer and listers: `FooInformer`, `FooLister`, `FooNamespaceLister`.
//!
//! Thin typed views over the runtime's `SharedInformer` and `Lister`, named as client-go
//! names them; generated when the client has the list and watch verbs.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Resource, Scope};
use crate::naming;

/// Every informer and lister item of `r`, or nothing without list and watch.
pub fn informer_items(r: &Resource) -> TokenStream {
    if !r.has_informer() {
        return TokenStream::new();
    }
    let vis = &r.vis;
    let ty = &r.ident;
    let kind = &r.kind;
    let rt = quote!(::kube_codegen_runtime);
    let arc = quote!(::std::sync::Arc);
    let vec = quote!(::std::vec::Vec);
    let informer = r.informer_ident();
    let lister = r.lister_ident();
    let ns_lister = r.namespace_lister_ident();
    let informer_doc =
        format!(" The shared informer of [`{ty}`] objects: one watch and one cache per factory.");
    let lister_doc = format!(
        " A read-only, cache-backed view of [`{ty}`] objects; objects are shared, clone one to change it."
    );
    let list_doc =
        format!(" Every cached `{kind}` whose labels `selector` matches (all namespaces), sorted.");
    let scoped = match r.scope {
        Scope::Namespaced => {
            let accessor = naming::ident(&r.accessor());
            let doc = format!(" The cached `{kind}` objects of `namespace`.");
            let ns_doc = format!(
                " The cached [`{ty}`] objects of one namespace: `get` and `list` (the runtime's `NamespaceLister`)."
            );
            quote! {
                impl #lister {
                    #[doc = #doc]
                    #[inline]
                    pub fn #accessor(&self, namespace: &str) -> #ns_lister {
                        self.lister.namespace(namespace)
                    }
                }

                #[doc = #ns_doc]
                #vis type #ns_lister = #rt::NamespaceLister<#ty>;
            }
        }
        Scope::Cluster => {
            let get_doc = format!(" The `{kind}` named `name`; a missing one is `NotFound`.");
            quote! {
                impl #lister {
                    #[doc = #get_doc]
                    #[inline]
                    pub fn get(&self, name: &str) -> ::core::result::Result<#arc<#ty>, #rt::NotFound> {
                        self.lister.get(name)
                    }
                }
            }
        }
    };
    quote! {
        #[doc = #informer_doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        #vis struct #informer {
            informer: #rt::SharedInformer<#ty>,
        }

        impl #informer {
            /// The informer of this kind in `factory`: the same one on every call.
            #[inline]
            pub fn new(factory: &#rt::SharedInformerFactory) -> Self {
                Self { informer: factory.informer::<#ty>() }
            }

            /// The shared informer: event handlers, streams for `Controller`, sync state.
            #[inline]
            pub fn informer(&self) -> &#rt::SharedInformer<#ty> {
                &self.informer
            }

            /// A lister over this informer's cache.
            #[inline]
            pub fn lister(&self) -> #lister {
                #lister { lister: self.informer.lister() }
            }
        }

        #[doc = #lister_doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        #vis struct #lister {
            lister: #rt::Lister<#ty>,
        }

        impl #lister {
            #[doc = #list_doc]
            #[inline]
            pub fn list(&self, selector: &::kube::core::Selector) -> #vec<#arc<#ty>> {
                self.lister.list(selector)
            }

            /// The cached objects an informer index puts under `value`.
            #[inline]
            pub fn by_index(&self, index: &str, value: &str) -> #vec<#arc<#ty>> {
                self.lister.by_index(index, value)
            }
        }

        #scoped
    }
}
