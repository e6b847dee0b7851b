//! The per-resource typed client: `FooClient<S>`, one method per allowed verb.
//!
//! The same tokens are expanded in place by the derive and written to a file by the CLI.
//! Paths are absolute (`::kube`, `::core`) so user items named `Result` or `Option` cannot
//! change their meaning.
//!
//! Two choices keep the compile cost of many kinds low (`hack/bench-compile.sh`):
//! - a verb hands back the runtime's future (`fn create<'a>(&'a self, ..) -> impl Future +
//!   'a`) instead of awaiting it in an `async fn`, so it has no state machine of its own to
//!   type-check and compile (for 20 kinds, `cargo check` went from 2.4 s to 1.4 s); `watch`,
//!   whose result holds an `impl Stream`, stays `async`;
//! - every generated function is `#[inline]`: a non-generic function is otherwise compiled to
//!   machine code in the crate that defines it, every verb of every kind whether called or
//!   not, with kube's `Api<K>` and serde for `K` behind it; marked, it is compiled where it is
//!   used (for 20 kinds, a clean build went from 14 s to under 3 s). The other emitters mark
//!   their functions the same way.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Method, MethodVerb, Resource, Scope, Verb};

/// Every item of the typed client of `r`.
pub fn client_items(r: &Resource) -> TokenStream {
    let vis = &r.vis;
    let ty = &r.ident;
    let client = r.client_ident();
    let rt = quote!(::kube_codegen_runtime);
    let (default_scope, scope_doc) = match r.scope {
        Scope::Namespaced => (
            quote!(#rt::scope::Namespaced),
            vec![
                format!(" `{client}<Namespaced>` works in one namespace and has every verb below;"),
                format!(
                    " `{client}<AllNamespaces>` spans all namespaces and can only list and watch."
                ),
            ],
        ),
        Scope::Cluster => (
            quote!(#rt::scope::Cluster),
            vec![format!(
                " `{ty}` is cluster-scoped: `{client}` takes no namespace."
            )],
        ),
    };
    let summary = format!(
        " Typed client for [`{ty}`] (`{}/{}`, resource `{}`).",
        r.group, r.version, r.plural
    );
    let scoped_methods = r
        .verbs
        .iter()
        .filter(|v| v.needs_name_scope())
        .map(|v| verb_method(r, *v));
    let scale_methods = scale_methods(r);
    let ext_scoped = r
        .methods
        .iter()
        .filter(|m| m.verb != MethodVerb::List)
        .map(|m| extension_method(r, m));
    let any_scope_methods = r
        .verbs
        .iter()
        .filter(|v| !v.needs_name_scope())
        .map(|v| verb_method(r, *v));
    let ext_any_scope = r
        .methods
        .iter()
        .filter(|m| m.verb == MethodVerb::List)
        .map(|m| extension_method(r, m));

    let constructors = match r.scope {
        Scope::Namespaced => {
            let new_doc = format!(" A client for the `{}` objects of one namespace.", r.kind);
            let all_doc = format!(
                " A client for the `{}` objects of every namespace: it can only list and watch.",
                r.kind
            );
            quote! {

                impl #client<#rt::scope::Namespaced> {
                    #[doc = #new_doc]
                    #[inline]
                    pub fn new(client: ::kube::Client, namespace: &str, field_manager: #rt::FieldManager) -> Self {
                        Self { handle: #rt::Sealed::new(#rt::Handle::namespaced(client, namespace, field_manager)), scope: ::core::marker::PhantomData }
                    }
                    #(#scoped_methods)*
                    #scale_methods
                    #(#ext_scoped)*
                }


                impl #client<#rt::scope::AllNamespaces> {
                    #[doc = #all_doc]
                    #[inline]
                    pub fn all(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                        Self { handle: #rt::Sealed::new(#rt::Handle::all(client, field_manager)), scope: ::core::marker::PhantomData }
                    }
                }
            }
        }
        Scope::Cluster => {
            let new_doc = format!(" A client for the `{}` objects of the cluster.", r.kind);
            quote! {

                impl #client<#rt::scope::Cluster> {
                    #[doc = #new_doc]
                    #[inline]
                    pub fn new(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                        Self { handle: #rt::Sealed::new(#rt::Handle::all(client, field_manager)), scope: ::core::marker::PhantomData }
                    }
                    #(#scoped_methods)*
                    #scale_methods
                    #(#ext_scoped)*
                }
            }
        }
    };

    quote! {
        #[doc = #summary]
        #[doc = ""]
        #(#[doc = #scope_doc])*
        #vis struct #client<S = #default_scope> {
            handle: #rt::Sealed<#ty>,
            scope: ::core::marker::PhantomData<S>,
        }

        #[automatically_derived]
        impl<S> ::core::clone::Clone for #client<S> {
            #[inline]
            fn clone(&self) -> Self {
                Self { handle: ::core::clone::Clone::clone(&self.handle), scope: ::core::marker::PhantomData }
            }
        }

        #[automatically_derived]
        impl<S> ::core::fmt::Debug for #client<S> {
            #[inline]
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::fmt::Debug::fmt(&self.handle, f)
            }
        }

        #constructors

        impl<S> #client<S> {
            #(#any_scope_methods)*
            #(#ext_any_scope)*

            /// The underlying `kube::Api`, for anything this client does not cover.
            #[inline]
            pub fn api(&self) -> &::kube::Api<#ty> {
                self.handle.__handle().api()
            }

            /// The field manager used by server-side apply.
            #[inline]
            pub fn field_manager(&self) -> &#rt::FieldManager {
                self.handle.__handle().field_manager()
            }
        }
    }
}

fn verb_method(r: &Resource, verb: Verb) -> TokenStream {
    let ty = &r.ident;
    let kind = &r.kind;
    let result = quote!(::core::result::Result);
    let err = quote!(::kube::Error);
    let api = quote!(::kube::api);
    match verb {
        Verb::Create => {
            let doc = format!(" Creates a `{kind}` (`POST`).");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn create<'a>(&'a self, obj: &'a #ty, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().create(obj, pp)
                }
            }
        }
        Verb::Update => {
            let doc = format!(" Replaces a `{kind}`, named by its `metadata.name` (`PUT`).");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn update<'a>(&'a self, obj: &'a #ty, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().update(obj, pp)
                }
            }
        }
        Verb::UpdateStatus => {
            let doc = format!(
                " Replaces the status of a `{kind}`, named by its `metadata.name` (`PUT .../status`)."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn update_status<'a>(&'a self, obj: &'a #ty, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().update_status(obj, pp)
                }
            }
        }
        Verb::Delete => {
            let doc = format!(
                " Deletes a `{kind}`: the object while finalizers keep it, or the server's status once it is gone."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn delete<'a>(&'a self, name: &'a str, dp: &'a #api::DeleteParams) -> impl ::core::future::Future<Output = #result<::kube_codegen_runtime::Either<#ty, ::kube::core::Status>, #err>> + 'a {
                    self.handle.__handle().delete(name, dp)
                }
            }
        }
        Verb::DeleteCollection => {
            let doc = format!(" Deletes every `{kind}` that `lp` selects.");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn delete_collection<'a>(&'a self, dp: &'a #api::DeleteParams, lp: &'a #api::ListParams) -> impl ::core::future::Future<Output = #result<::kube_codegen_runtime::Either<#api::ObjectList<#ty>, ::kube::core::Status>, #err>> + 'a {
                    self.handle.__handle().delete_collection(dp, lp)
                }
            }
        }
        Verb::Get => {
            let doc = format!(" Gets a `{kind}` by name; a missing object is an error.");
            let doc_opt = format!(" Gets a `{kind}` by name; a missing object is `None`.");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn get<'a>(&'a self, name: &'a str) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().get(name)
                }

                #[doc = #doc_opt]
                #[inline]
                pub fn get_opt<'a>(&'a self, name: &'a str) -> impl ::core::future::Future<Output = #result<::core::option::Option<#ty>, #err>> + 'a {
                    self.handle.__handle().get_opt(name)
                }
            }
        }
        Verb::List => {
            let doc = format!(" Lists the `{kind}` objects that `lp` selects.");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn list<'a>(&'a self, lp: &'a #api::ListParams) -> impl ::core::future::Future<Output = #result<#api::ObjectList<#ty>, #err>> + 'a {
                    self.handle.__handle().list(lp)
                }
            }
        }
        Verb::Watch => {
            let doc = format!(
                " Watches `{kind}` objects from `resource_version`; prefer an informer for caches."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub async fn watch(
                    &self,
                    wp: &#api::WatchParams,
                    resource_version: &str,
                ) -> #result<
                    impl ::kube_codegen_runtime::Stream<Item = #result<#api::WatchEvent<#ty>, #err>> + use<S>,
                    #err,
                > {
                    self.handle.__handle().watch(wp, resource_version).await
                }
            }
        }
        Verb::Patch => {
            let doc = format!(" Patches a `{kind}` (merge, JSON, strategic merge or apply patch).");
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn patch<'a, P: ::serde::Serialize + ::core::fmt::Debug>(&'a self, name: &'a str, pp: &'a #api::PatchParams, patch: &'a #api::Patch<P>) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().patch(name, pp, patch)
                }
            }
        }
        Verb::Apply => {
            let doc = format!(
                " Server-side applies a whole `{kind}` with this client's field manager, which then owns every field it serializes (prefer an apply configuration)."
            );
            let object = quote! {
                #[doc = #doc]
                #[inline]
                pub fn apply_object<'a>(&'a self, obj: &'a #ty) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().apply(obj)
                }
            };
            if !r.apply_configuration {
                return object;
            }
            let ac = quote::format_ident!("{}ApplyConfiguration", r.ident);
            let doc = format!(
                " Server-side applies an apply configuration of a `{kind}` with this client's field manager, which then owns exactly the fields it sets."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn apply<'a>(&'a self, config: &'a #ac) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().apply_configuration(config)
                }

                #object
            }
        }
        Verb::ApplyStatus => {
            let doc = format!(
                " Server-side applies the status of the `{kind}` named `name` (a whole status), and nothing else."
            );
            let status_type = r.status_type.as_ref().map_or_else(
                || quote!(<#ty as ::kube::core::object::HasStatus>::Status),
                |t| quote!(#t),
            );
            let object = quote! {
                #[doc = #doc]
                #[inline]
                pub fn apply_status_object<'a>(&'a self, name: &'a str, status: &'a #status_type) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().apply_status(name, status)
                }
            };
            if !r.apply_configuration {
                return object;
            }
            let ac = quote::format_ident!("{}ApplyConfiguration", r.ident);
            let doc = format!(
                " Server-side applies an apply configuration to the status of a `{kind}`: this client's field manager then owns exactly the status fields it sets."
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn apply_status<'a>(&'a self, config: &'a #ac) -> impl ::core::future::Future<Output = #result<#ty, #err>> + 'a {
                    self.handle.__handle().apply_status_configuration(config)
                }

                #object
            }
        }
    }
}

fn scale_methods(r: &Resource) -> TokenStream {
    if !r.has_scale {
        return TokenStream::new();
    }
    let result = quote!(::core::result::Result);
    let err = quote!(::kube::Error);
    let api = quote!(::kube::api);
    let scale = quote!(::k8s_openapi::api::autoscaling::v1::Scale);
    let mut out = TokenStream::new();
    if r.has(Verb::Get) {
        out.extend(quote! {
            /// Gets the scale subresource.
            #[inline]
            pub fn get_scale<'a>(&'a self, name: &'a str) -> impl ::core::future::Future<Output = #result<#scale, #err>> + 'a {
                self.handle.__handle().get_scale(name)
            }
        });
    }
    if r.has(Verb::Update) {
        out.extend(quote! {
            /// Replaces the scale subresource.
            #[inline]
            pub fn update_scale<'a>(&'a self, name: &'a str, scale: &'a #scale, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#scale, #err>> + 'a {
                self.handle.__handle().update_scale(name, scale, pp)
            }
        });
    }
    if r.has(Verb::Patch) {
        out.extend(quote! {
            /// Patches the scale subresource.
            #[inline]
            pub fn patch_scale<'a, P: ::serde::Serialize + ::core::fmt::Debug>(&'a self, name: &'a str, pp: &'a #api::PatchParams, patch: &'a #api::Patch<P>) -> impl ::core::future::Future<Output = #result<#scale, #err>> + 'a {
                self.handle.__handle().patch_scale(name, pp, patch)
            }
        });
    }
    out
}

fn extension_method(r: &Resource, m: &Method) -> TokenStream {
    let ty = &r.ident;
    let name = &m.name;
    let input = m.input.as_ref().map_or_else(|| quote!(#ty), |t| quote!(#t));
    let output = m
        .result
        .as_ref()
        .map_or_else(|| quote!(#ty), |t| quote!(#t));
    let result = quote!(::core::result::Result);
    let err = quote!(::kube::Error);
    let api = quote!(::kube::api);
    let sub = match &m.subresource {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let target = match &m.subresource {
        Some(s) => format!("the `{s}` subresource of a `{}`", r.kind),
        None => format!("`{}` objects", r.kind),
    };
    let doc = format!(
        " Extension method (`+genclient:method`): `{}` on {target}.",
        m.verb.verb().go_name()
    );
    match m.verb {
        MethodVerb::Get => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, name: &'a str) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.handle.__handle().get_as::<#output>(name, #sub)
            }
        },
        MethodVerb::List => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, lp: &'a #api::ListParams) -> impl ::core::future::Future<Output = #result<#api::ObjectList<#output>, #err>> + 'a {
                self.handle.__handle().list_as::<#output>(lp)
            }
        },
        MethodVerb::Create => match &m.subresource {
            Some(s) => quote! {
                #[doc = #doc]
                #[inline]
                pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                    self.handle.__handle().create_as::<#input, #output>(::core::option::Option::Some((name, #s)), obj, pp)
                }
            },
            None => quote! {
                #[doc = #doc]
                #[inline]
                pub fn #name<'a>(&'a self, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                    self.handle.__handle().create_as::<#input, #output>(::core::option::Option::None, obj, pp)
                }
            },
        },
        MethodVerb::Update => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.handle.__handle().update_as::<#input, #output>(name, #sub, obj, pp)
            }
        },
        MethodVerb::Patch => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a, P: ::serde::Serialize + ::core::fmt::Debug>(&'a self, name: &'a str, pp: &'a #api::PatchParams, patch: &'a #api::Patch<P>) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.handle.__handle().patch_as::<P, #output>(name, #sub, pp, patch)
            }
        },
        MethodVerb::Apply => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.handle.__handle().apply_as::<#input, #output>(name, #sub, obj)
            }
        },
    }
}
