//! The per-resource typed client: `FooClient<S>`, with the verbs the markers allow.
//!
//! The same tokens are expanded in place by the derive and written to a file by the CLI.
//! Paths are absolute (`::kube`, `::core`) so user items named `Result` or `Option` cannot
//! change their meaning.
//!
//! The client is thin: `FooClient<S>` is a newtype over the runtime's
//! `TypedClient<Foo, S, FooVerbs>` and dereferences to it, as client-go's typed clients embed
//! `gentype.ClientWithList`. The runtime has every verb once; what is generated per kind is
//! the constructors, the `+genclient:method` extension methods, and the verb set `FooVerbs`
//! with one `impl` of the runtime's `verbs` traits per verb the markers allow. Against the
//! client written out verb by verb, this is a third of the code to generate, format and
//! compile per kind (`hack/bench-codegen.sh`, `hack/bench-compile.sh`).
//!
//! Every generated function is `#[inline]`: a non-generic function is otherwise compiled to
//! machine code in the crate that defines it, whether called or not; marked, it is compiled
//! where it is used. The other emitters mark their functions the same way.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Method, MethodVerb, Resource, Scope, Verb};

/// Every item of the typed client of `r`.
pub(crate) fn client_items(r: &Resource) -> TokenStream {
    let vis = &r.vis;
    let ty = &r.ident;
    let client = r.client_ident();
    let verbs = r.verbs_ident();
    let rt = quote!(::kube_codegen_runtime);
    let (default_scope, scope_doc) = match r.scope {
        Scope::Namespaced => (
            quote!(#rt::client::scope::Namespaced),
            vec![
                format!(
                    " `{client}<Namespaced>` works in one namespace and has every verb of `{verbs}`;"
                ),
                format!(
                    " `{client}<AllNamespaces>` spans all namespaces and can only list and watch."
                ),
            ],
        ),
        Scope::Cluster => (
            quote!(#rt::client::scope::Cluster),
            vec![format!(
                " `{ty}` is cluster-scoped: `{client}` takes no namespace and has every verb of `{verbs}`."
            )],
        ),
    };
    let summary = format!(
        " Typed client for [`{ty}`] (`{}/{}`, resource `{}`): the verbs are",
        r.group, r.version, r.plural
    );
    let verb_set = verb_set(r);
    let ext_scoped = r
        .methods
        .iter()
        .filter(|m| m.verb != MethodVerb::List)
        .map(|m| extension_method(r, m));
    let ext_any_scope: Vec<TokenStream> = r
        .methods
        .iter()
        .filter(|m| m.verb == MethodVerb::List)
        .map(|m| extension_method(r, m))
        .collect();
    let any_scope = (!ext_any_scope.is_empty()).then(|| {
        quote! {
            impl<S> #client<S> {
                #(#ext_any_scope)*
            }
        }
    });

    let constructors = match r.scope {
        Scope::Namespaced => {
            let new_doc = format!(" A client for the `{}` objects of one namespace.", r.kind);
            let all_doc = format!(
                " A client for the `{}` objects of every namespace: it can only list and watch.",
                r.kind
            );
            quote! {
                impl #client<#rt::client::scope::Namespaced> {
                    #[doc = #new_doc]
                    #[inline]
                    pub fn new(client: ::kube::Client, namespace: &str, field_manager: #rt::FieldManager) -> Self {
                        Self(#rt::TypedClient::namespaced(client, namespace, field_manager))
                    }
                    #(#ext_scoped)*
                }

                impl #client<#rt::client::scope::AllNamespaces> {
                    #[doc = #all_doc]
                    #[inline]
                    pub fn all(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                        Self(#rt::TypedClient::all_namespaces(client, field_manager))
                    }
                }
            }
        }
        Scope::Cluster => {
            let new_doc = format!(" A client for the `{}` objects of the cluster.", r.kind);
            quote! {
                impl #client<#rt::client::scope::Cluster> {
                    #[doc = #new_doc]
                    #[inline]
                    pub fn new(client: ::kube::Client, field_manager: #rt::FieldManager) -> Self {
                        Self(#rt::TypedClient::cluster(client, field_manager))
                    }
                    #(#ext_scoped)*
                }
            }
        }
    };

    quote! {
        #[doc = #summary]
        #[doc = " those of `kube_codegen_runtime::TypedClient`, which it dereferences to."]
        #[doc = ""]
        #(#[doc = #scope_doc])*
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        #vis struct #client<S = #default_scope>(#rt::TypedClient<#ty, S, #verbs>);

        #verb_set

        #[automatically_derived]
        impl<S> ::core::ops::Deref for #client<S> {
            type Target = #rt::TypedClient<#ty, S, #verbs>;

            #[inline]
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        #constructors

        #any_scope
    }
}

/// `FooVerbs`, what the client's methods are bounded by: the runtime's `verbs::Every` when
/// the markers give every verb (most kinds: one line), or a type of its own with one `impl`
/// of the runtime's `verbs` traits per verb.
fn verb_set(r: &Resource) -> TokenStream {
    let vis = &r.vis;
    let ty = &r.ident;
    let client = r.client_ident();
    let verbs = r.verbs_ident();
    let mark = quote!(::kube_codegen_runtime::client::verbs);
    let status = r.status_type.as_ref().map_or_else(
        || quote!(<#ty as ::kube::core::object::HasStatus>::Status),
        |t| quote!(#t),
    );
    let configured = r.apply_configuration && (r.has(Verb::Apply) || r.has(Verb::ApplyStatus));
    let configuration = quote::format_ident!("{}ApplyConfiguration", r.ident);
    let with_status = r.verbs.iter().any(|v| v.is_status());
    let every = Verb::ALL
        .iter()
        .filter(|v| with_status || !v.is_status())
        .eq(r.verbs.iter());
    if every {
        let doc = format!(
            " The verbs of [`{client}`]: every verb `+genclient` gives{}.",
            if with_status {
                ""
            } else {
                " but the status ones"
            }
        );
        let status = if with_status {
            quote!(#mark::WithStatus<#status>)
        } else {
            quote!(#mark::NoStatus)
        };
        let configuration = if configured {
            quote!(#mark::WithConfiguration<#configuration>)
        } else {
            quote!(#mark::NoConfiguration)
        };
        let scale = if r.has_scale {
            quote!(#mark::WithScale)
        } else {
            quote!(#mark::NoScale)
        };
        return quote! {
            #[doc = #doc]
            #vis type #verbs = #mark::Every<#status, #configuration, #scale>;
        };
    }
    let doc = format!(
        " The verbs `+genclient` gives [`{client}`]: each is an `impl` of a trait of `kube_codegen_runtime::client::verbs`."
    );
    let mut out = quote! {
        #[doc = #doc]
        #vis enum #verbs {}
    };
    for verb in &r.verbs {
        out.extend(match verb {
            Verb::Create => quote!(impl #mark::Create for #verbs {}),
            Verb::Update => quote!(impl #mark::Update for #verbs {}),
            Verb::UpdateStatus => quote!(impl #mark::UpdateStatus for #verbs {}),
            Verb::Delete => quote!(impl #mark::Delete for #verbs {}),
            Verb::DeleteCollection => quote!(impl #mark::DeleteCollection for #verbs {}),
            Verb::Get => quote!(impl #mark::Get for #verbs {}),
            Verb::List => quote!(impl #mark::List for #verbs {}),
            Verb::Watch => quote!(impl #mark::Watch for #verbs {}),
            Verb::Patch => quote!(impl #mark::Patch for #verbs {}),
            Verb::Apply => quote!(impl #mark::Apply for #verbs {}),
            Verb::ApplyStatus => quote! {
                impl #mark::ApplyStatus for #verbs {
                    type Status = #status;
                }
            },
        });
    }
    if r.has_scale {
        out.extend(quote!(impl #mark::Scale for #verbs {}));
    }
    if configured {
        out.extend(quote! {
            impl #mark::ApplyConfigured for #verbs {
                type Configuration = #configuration;
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
                self.0.__extension().get_as::<#output>(name, #sub)
            }
        },
        MethodVerb::List => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, lp: &'a #api::ListParams) -> impl ::core::future::Future<Output = #result<#api::ObjectList<#output>, #err>> + 'a {
                self.0.__extension().list_as::<#output>(lp)
            }
        },
        MethodVerb::Create => match &m.subresource {
            Some(s) => quote! {
                #[doc = #doc]
                #[inline]
                pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                    self.0.__extension().create_as::<#input, #output>(::core::option::Option::Some((name, #s)), obj, pp)
                }
            },
            None => quote! {
                #[doc = #doc]
                #[inline]
                pub fn #name<'a>(&'a self, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                    self.0.__extension().create_as::<#input, #output>(::core::option::Option::None, obj, pp)
                }
            },
        },
        MethodVerb::Update => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input, pp: &'a #api::PostParams) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.0.__extension().update_as::<#input, #output>(name, #sub, obj, pp)
            }
        },
        MethodVerb::Patch => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a, P: ::serde::Serialize + ::core::fmt::Debug>(&'a self, name: &'a str, pp: &'a #api::PatchParams, patch: &'a #api::Patch<P>) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.0.__extension().patch_as::<P, #output>(name, #sub, pp, patch)
            }
        },
        MethodVerb::Apply => quote! {
            #[doc = #doc]
            #[inline]
            pub fn #name<'a>(&'a self, name: &'a str, obj: &'a #input) -> impl ::core::future::Future<Output = #result<#output, #err>> + 'a {
                self.0.__extension().apply_as::<#input, #output>(name, #sub, obj)
            }
        },
    }
}
