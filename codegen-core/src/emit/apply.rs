//! Apply configurations as Rust, from the one model of [`crate::apply_model`]: a struct's
//! (custom or built-in), a kind's (type meta, metadata, spec, status, constructor and
//! metadata builders), `extract_<kind>`, and a module of the built-in ones the runtime
//! ships (see [`super::shipped`]).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ItemEnum, ItemStruct};

use crate::apply_tree::{ApplyModule, ApplyType};

use crate::apply_model::{AcField, AcStruct, Builder, Reached, builtin, custom};
use crate::model::{Resource, Scope};

fn rt() -> TokenStream {
    quote!(::kube_codegen_runtime)
}

/// The derives every apply configuration has. `PartialEq` always: comparing what a manager
/// owns (`extract_foo`) with what it wants is how a controller skips no-op applies; the
/// derive could not tell whether the source type has it (a derive never sees the
/// `#[derive]` list it is in), and the CLI must write what the derive expands. Serde's
/// traits come from [`codec`], not from its derives.
fn derives() -> TokenStream {
    quote! {
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::default::Default, ::core::cmp::PartialEq)]
    }
}

/// A field of an apply configuration as [`codec`] reads and writes it.
struct Coded {
    ident: syn::Ident,
    /// Its JSON name; `None` for a flattened field, whose own fields are the struct's.
    json: Option<String>,
}

/// `Serialize` and `Deserialize` of the apply configuration `ac` with `fields`: one call of
/// the runtime's `apply_codec!`, an entry per field in declaration order (`"json" => ident`,
/// or `_ => ident` for a flattened one).
fn codec(ac: &syn::Ident, fields: &[Coded]) -> TokenStream {
    let entries = fields.iter().map(|f| {
        let ident = &f.ident;
        match &f.json {
            Some(json) => quote!(#json => #ident),
            None => quote!(_ => #ident),
        }
    });
    quote! {
        ::kube_codegen_runtime::apply_codec!(#ac { #(#entries),* });
    }
}

/// A field's declaration: its docs (or a line naming its JSON field), then an optional
/// value, or a flattened struct.
fn declaration(f: &AcField) -> TokenStream {
    let name = &f.ident;
    let json = &f.json;
    let held = &f.held;
    let docs = if f.docs.is_empty() {
        let line = format!(" `{json}`.");
        quote!(#[doc = #line])
    } else {
        let docs = &f.docs;
        quote!(#(#[doc = #docs])*)
    };
    if f.flatten {
        quote! {
            #docs
            pub #name: #held,
        }
    } else {
        quote! {
            #docs
            pub #name: ::core::option::Option<#held>,
        }
    }
}

/// How a struct merges: the arms of `merge_field`'s `match` on the JSON name (the fields of
/// a flattened struct through its own merge); `None` when every field is replaced whole.
fn merge_arms(fields: &[AcField]) -> Option<TokenStream> {
    let rt = rt();
    let arms: Vec<TokenStream> = fields
        .iter()
        .filter(|f| !f.flatten)
        .filter_map(|f| {
            let json = &f.json;
            f.merge.as_ref().map(|m| quote!(#json => #m,))
        })
        .collect();
    let flattened: Vec<&TokenStream> = fields
        .iter()
        .filter(|f| f.flatten)
        .filter_map(|f| f.merge.as_ref())
        .collect();
    if arms.is_empty() && flattened.is_empty() {
        return None;
    }
    let fallback = if flattened.is_empty() {
        quote!(_ => #rt::apply::Merge::Atomic,)
    } else {
        // A field of a flattened struct: the first flattened struct that merges it.
        quote! {
            other => {
                for merge in [#(#flattened),*] {
                    if let #rt::apply::Merge::Struct(field) = merge {
                        let found = field(other);
                        if !::core::matches!(found, #rt::apply::Merge::Atomic) {
                            return found;
                        }
                    }
                }
                #rt::apply::Merge::Atomic
            }
        }
    };
    Some(quote! {
        #(#arms)*
        #fallback
    })
}

/// The `MERGE` of the struct whose apply configuration is `ac` (merged field by field, as
/// the `match` arms `arms` say), and the `merge_field` function of `ac` it names.
pub(crate) fn merge_of(ac: &syn::Ident, arms: Option<TokenStream>) -> (TokenStream, TokenStream) {
    let rt = quote!(::kube_codegen_runtime::apply);
    match arms {
        None => (quote!(#rt::Merge::FIELDS), TokenStream::new()),
        Some(arms) => (
            quote!(#rt::Merge::Struct(#ac::merge_field)),
            quote! {
                /// How server-side apply merges each field, by JSON name.
                #[inline]
                fn merge_field(field: &str) -> #rt::Merge {
                    match field {
                        #arms
                    }
                }
            },
        ),
    }
}

/// The builder of one field, as its model says: set, append items, or merge entries.
/// The builder method of field `ident` among `fields`: `type_` (a keyword dodged) builds with
/// `with_type`, unless another field is named `type` (`proxyUrl` and `proxyURL` of one
/// struct are `proxy_url` and `proxy_url_`), which keeps `with_type_`.
fn method_name(ident: &syn::Ident, fields: &[AcField]) -> syn::Ident {
    let full = ident.to_string();
    let full = full.trim_start_matches("r#");
    let plain = full.trim_end_matches('_');
    let taken = plain != full
        && fields
            .iter()
            .any(|f| f.ident.to_string().trim_start_matches("r#") == plain);
    format_ident!("with_{}", if taken { full } else { plain })
}

fn builder(f: &AcField, how: &Builder, fields: &[AcField]) -> TokenStream {
    let ident = &f.ident;
    let method = method_name(ident, fields);
    let json = &f.json;
    let held = &f.held;
    match how {
        Builder::Flatten => {
            let doc = format!(" Sets the fields flattened into this one from `{ident}`.");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method(mut self, value: #held) -> Self {
                    self.#ident = value;
                    self
                }
            }
        }
        Builder::Append { item } => {
            let doc = format!(" Appends items to `{json}`.");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method(mut self, items: impl ::core::iter::IntoIterator<Item = #item>) -> Self {
                    self.#ident.get_or_insert_with(::core::default::Default::default).extend(items);
                    self
                }
            }
        }
        Builder::Entries { key, value } => {
            let doc = format!(" Adds entries to `{json}` (replacing those with the same key).");
            let (generics, key, entries) = match key {
                Some(key) => (TokenStream::new(), key.clone(), quote!(entries)),
                None => (
                    quote!(<K: ::core::convert::Into<::std::string::String>>),
                    quote!(K),
                    quote!(entries.into_iter().map(|(k, v)| (k.into(), v))),
                ),
            };
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method #generics(mut self, entries: impl ::core::iter::IntoIterator<Item = (#key, #value)>) -> Self {
                    self.#ident.get_or_insert_with(::core::default::Default::default).extend(#entries);
                    self
                }
            }
        }
        Builder::Set => {
            let doc = format!(" Sets `{json}`.");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method(mut self, value: impl ::core::convert::Into<#held>) -> Self {
                    self.#ident = ::core::option::Option::Some(value.into());
                    self
                }
            }
        }
    }
}

/// A struct's apply configuration, its builders, and how others reach it.
pub(crate) fn ac_struct(s: &AcStruct) -> TokenStream {
    let rt = rt();
    let ac = &s.ident;
    let vis = &s.vis;
    let doc = &s.doc;
    let derive = derives();
    let decls = s.fields.iter().map(declaration);
    let builders = s
        .fields
        .iter()
        .filter_map(|f| f.builder.as_ref().map(|b| builder(f, b, &s.fields)));
    let (merge, merge_field) = merge_of(ac, merge_arms(&s.fields));
    let (merge_const, apply_impl) = match &s.reached {
        Reached::Merge => (
            quote! {
                /// How server-side apply merges it, for `extract`.
                pub const MERGE: #rt::apply::Merge = #merge;
            },
            TokenStream::new(),
        ),
        Reached::Apply(source) => (
            TokenStream::new(),
            quote! {
                impl #rt::apply::Apply for #source {
                    type Configuration = #ac;
                    const MERGE: #rt::apply::Merge = #merge;
                }
            },
        ),
    };
    let declared = match (&s.reached, s.own) {
        // The type itself, whose fields, derives and codec are the configuration's.
        (Reached::Apply(source), true) => {
            let doc = format!(
                " `{source}` is its own apply configuration: every field optional, left out when unset."
            );
            quote! {
                #[doc = #doc]
                #vis type #ac = #source;
            }
        }
        _ => {
            let coded: Vec<Coded> = s
                .fields
                .iter()
                .map(|f| Coded {
                    ident: f.ident.clone(),
                    json: (!f.flatten).then(|| f.json.clone()),
                })
                .collect();
            let codec = codec(ac, &coded);
            quote! {
                #[doc = #doc]
                #derive
                #vis struct #ac {
                    #(#decls)*
                }

                #codec
            }
        }
    };
    quote! {
        #declared

        impl #ac {
            #merge_const

            #merge_field

            #(#builders)*
        }

        #apply_impl
    }
}

/// `XApplyConfiguration` for a struct of an API, its builders, and `impl Apply for X`.
pub(crate) fn struct_items(s: &ItemStruct) -> TokenStream {
    ac_struct(&custom::lower(s))
}

/// One module of the built-in apply configurations the runtime ships (`apps::v1`): the
/// apply configurations of its types, in order, each kind's with its helpers.
pub(crate) fn builtin_module(
    doc: &str,
    types: &[(AcStruct, Option<builtin::KindOf<'_>>)],
) -> TokenStream {
    let mut items = TokenStream::new();
    for (s, kind) in types {
        items.extend(ac_struct(s));
        if let Some(k) = kind {
            items.extend(kind_helpers(k.resource, &s.ident, &k.object, k.has_status));
        }
    }
    quote! {
        #![doc = #doc]
        #items
    }
}

/// The module of one source file's apply configurations: its imports, then the kinds'
/// apply configurations by name, then its types' in the order written.
pub(crate) fn module_items(m: &ApplyModule) -> TokenStream {
    let doc = format!(
        " Apply configurations of the types in `{}`.",
        m.source.display()
    );
    let imports = &m.imports;
    let glob = &m.module;
    let kinds = m.kinds.iter().map(|(r, spec)| kind_items(r, spec));
    let types = m.types.iter().map(|t| match t {
        ApplyType::Struct(s) => ac_struct(s),
        ApplyType::Enum(e) => enum_ident_items(e),
    });
    quote! {
        #![doc = #doc]
        #![allow(unused_imports)]
        #(#imports)*
        use #glob::*;
        #(#kinds)*
        #(#types)*
    }
}

/// An enum is applied whole: its apply configuration is itself.
pub(crate) fn enum_items(e: &ItemEnum) -> TokenStream {
    enum_ident_items(&e.ident)
}

pub(crate) fn enum_ident_items(ident: &syn::Ident) -> TokenStream {
    let rt = rt();
    quote! {
        impl #rt::apply::Apply for #ident {
            type Configuration = #ident;
        }
    }
}

/// `FooApplyConfiguration` for a kind: type meta, metadata, the spec's and the status's
/// apply configurations, a constructor, builders, and `extract_foo` / `extract_foo_status`.
pub(crate) fn kind_items(r: &Resource, spec_ident: &syn::Ident) -> TokenStream {
    let ty = &r.ident;
    let ac = format_ident!("{}ApplyConfiguration", ty);
    let spec_ac = format_ident!("{}ApplyConfiguration", spec_ident);
    let rt = rt();
    let status = quote!(<#ty as ::kube::core::object::HasStatus>::Status);
    let status_ac = r
        .has_status
        .then(|| quote!(<#status as #rt::apply::Apply>::Configuration));
    let status_arm = r
        .has_status
        .then(|| quote!("status" => <#status as #rt::apply::Apply>::MERGE,));
    let no_spec = r.kube.no_spec.is_some();
    // With `no_spec` the struct's fields are the root's: its merge answers for them.
    let spec_arm = (!no_spec).then(|| quote!("spec" => <#spec_ident as #rt::apply::Apply>::MERGE,));
    let rest = if no_spec {
        quote! {
            other => match <#spec_ident as #rt::apply::Apply>::MERGE {
                #rt::apply::Merge::Struct(field) => field(other),
                merge => merge,
            },
        }
    } else {
        quote!(_ => #rt::apply::Merge::Atomic,)
    };
    let merge = merge_of(
        &ac,
        Some(quote! {
            "metadata" => #rt::apply::OBJECT_META,
            #spec_arm
            #status_arm
            #rest
        }),
    );
    let spec = if no_spec {
        SpecField::Flattened(quote!(#spec_ac))
    } else {
        SpecField::Spec(quote!(#spec_ac))
    };
    kind_common(r, &ac, spec, status_ac, merge)
}

/// Where a kind's apply configuration holds what its `#[kube]` struct says.
pub(crate) enum SpecField {
    /// In `spec`: the struct is the spec.
    Spec(TokenStream),
    /// Flattened into the root (`#[kube(no_spec)]`): the struct's fields are the root's.
    Flattened(TokenStream),
}

/// The codec of a kind's apply configuration `ac`: type meta, metadata, its spec (or the
/// root's fields, flattened) and, when it has one, its status.
fn kind_codec(ac: &syn::Ident, spec: &SpecField, status: bool) -> TokenStream {
    let named = |json: &str, ident: &str| Coded {
        ident: format_ident!("{ident}"),
        json: Some(json.to_owned()),
    };
    let mut coded = vec![
        named("apiVersion", "api_version"),
        named("kind", "kind"),
        named("metadata", "metadata"),
    ];
    coded.push(match spec {
        SpecField::Spec(_) => named("spec", "spec"),
        SpecField::Flattened(_) => Coded {
            ident: format_ident!("fields"),
            json: None,
        },
    });
    if status {
        coded.push(named("status", "status"));
    }
    codec(ac, &coded)
}

/// A CRD kind's apply configuration struct (type meta, metadata, the spec's configuration
/// as `spec` says, `status` holding `status_ac`, merged as `merge` says, from
/// [`merge_of`]) with the helpers every kind's apply configuration has.
pub(crate) fn kind_common(
    r: &Resource,
    ac: &syn::Ident,
    spec: SpecField,
    status_ac: Option<TokenStream>,
    (merge, merge_field): (TokenStream, TokenStream),
) -> TokenStream {
    let derive = derives();
    let vis = &r.vis;
    let meta = quote!(::k8s_openapi::apimachinery::pkg::apis::meta::v1);
    let status_doc = if r.status_subresource {
        " The status, applied through the status subresource."
    } else {
        " The status, a plain field: the kind has no status subresource, so it is applied with the rest."
    };
    let status_field = status_ac.as_ref().map(|s| {
        quote! {
            #[doc = #status_doc]
            pub status: ::core::option::Option<#s>,
        }
    });
    let status_builder = status_ac.as_ref().map(|s| {
        quote! {
            /// Sets `status`.
            #[must_use]
            #[inline]
            pub fn with_status(mut self, status: #s) -> Self {
                self.status = ::core::option::Option::Some(status);
                self
            }
        }
    });
    let codec = kind_codec(ac, &spec, status_ac.is_some());
    let (spec_field, spec_builder) = match spec {
        SpecField::Spec(spec_ac) => (
            quote! {
                /// The desired state.
                pub spec: ::core::option::Option<#spec_ac>,
            },
            quote! {
                /// Sets `spec`.
                #[must_use]
                #[inline]
                pub fn with_spec(mut self, spec: #spec_ac) -> Self {
                    self.spec = ::core::option::Option::Some(spec);
                    self
                }
            },
        ),
        SpecField::Flattened(fields_ac) => (
            quote! {
                /// The root's properties (`#[kube(no_spec)]`), flattened into the object.
                pub fields: #fields_ac,
            },
            quote! {
                /// Sets the root's properties.
                #[must_use]
                #[inline]
                pub fn with_fields(mut self, fields: #fields_ac) -> Self {
                    self.fields = fields;
                    self
                }
            },
        ),
    };
    let kind = &r.kind;
    let doc = format!(
        " What a field manager says about a `{kind}`: only the fields set here are applied, and owned."
    );
    let ty = &r.ident;
    let helpers = kind_helpers(
        r,
        ac,
        &quote!(#ty),
        status_ac.is_some() && r.status_subresource,
    );
    quote! {
        #[doc = #doc]
        #derive
        #vis struct #ac {
            /// `apiVersion`.
            pub api_version: ::core::option::Option<::std::string::String>,
            /// `kind`.
            pub kind: ::core::option::Option<::std::string::String>,
            /// Name, namespace, and the labels, annotations, owner references and finalizers applied.
            pub metadata: ::core::option::Option<#meta::ObjectMeta>,
            #spec_field
            #status_field
        }

        #codec

        impl #ac {
            /// How server-side apply merges the object, for `extract`.
            pub const MERGE: ::kube_codegen_runtime::apply::Merge = #merge;

            #merge_field

            #spec_builder

            #status_builder
        }

        #helpers
    }
}

/// What every kind's apply configuration `ac` (a struct with `api_version`, `kind` and
/// `metadata` fields) has: `new`, metadata builders, `ObjectConfiguration`, and the
/// `extract_<kind>` functions for objects of type `object`.
pub(crate) fn kind_helpers(
    r: &Resource,
    ac: &syn::Ident,
    object: &TokenStream,
    has_status: bool,
) -> TokenStream {
    let rt = rt();
    let vis = &r.vis;
    let meta = quote!(::k8s_openapi::apimachinery::pkg::apis::meta::v1);
    let api_version = if r.group.is_empty() {
        r.version.clone()
    } else {
        format!("{}/{}", r.group, r.version)
    };
    let kind = &r.kind;
    let (params, namespace) = match r.scope {
        Scope::Namespaced => (
            quote!(name: &str, namespace: &str),
            quote!(::core::option::Option::Some(namespace.into())),
        ),
        Scope::Cluster => (quote!(name: &str), quote!(::core::option::Option::None)),
    };
    let snake = heck::ToSnakeCase::to_snake_case(r.ident.to_string().as_str());
    let extract = format_ident!("extract_{}", snake);
    let extract_status = format_ident!("extract_{}_status", snake);
    let extract_status_fn = has_status.then(|| {
        quote! {
            /// The status fields of `obj` that `manager` owns, applied through the status subresource.
            #[inline]
            #vis fn #extract_status(obj: &#object, manager: &str) -> ::core::result::Result<#ac, #rt::apply::ExtractError> {
                #rt::apply::extract(obj, manager, ::core::option::Option::Some("status"), #ac::MERGE)
            }
        }
    });
    let new_doc = format!(
        " An apply configuration for the `{kind}` named `name`, with its `apiVersion` and `kind`."
    );
    let metadata_builders = metadata_builders(&meta);
    quote! {
        impl #ac {
            #[doc = #new_doc]
            #[inline]
            pub fn new(#params) -> Self {
                Self {
                    api_version: ::core::option::Option::Some(#api_version.into()),
                    kind: ::core::option::Option::Some(#kind.into()),
                    metadata: ::core::option::Option::Some(#meta::ObjectMeta {
                        name: ::core::option::Option::Some(name.into()),
                        namespace: #namespace,
                        ..::core::default::Default::default()
                    }),
                    ..::core::default::Default::default()
                }
            }

            #metadata_builders
        }

        impl #rt::apply::ObjectConfiguration for #ac {
            #[inline]
            fn metadata(&self) -> ::core::option::Option<&#meta::ObjectMeta> {
                self.metadata.as_ref()
            }
        }

        /// The fields of `obj` that `manager` owns (server-side apply), as an apply configuration.
        #[inline]
        #vis fn #extract(obj: &#object, manager: &str) -> ::core::result::Result<#ac, #rt::apply::ExtractError> {
            #rt::apply::extract(obj, manager, ::core::option::Option::None, #ac::MERGE)
        }

        #extract_status_fn
    }
}

/// The metadata builders of a kind's apply configuration: labels, annotations, owner
/// references and finalizers, each added to what is set.
fn metadata_builders(meta: &TokenStream) -> TokenStream {
    quote! {
        /// Adds labels (replacing those with the same key).
        #[must_use]
        #[inline]
        pub fn with_labels<K: ::core::convert::Into<::std::string::String>, V: ::core::convert::Into<::std::string::String>>(
            mut self,
            labels: impl ::core::iter::IntoIterator<Item = (K, V)>,
        ) -> Self {
            self.metadata
                .get_or_insert_with(::core::default::Default::default)
                .labels
                .get_or_insert_with(::core::default::Default::default)
                .extend(labels.into_iter().map(|(k, v)| (k.into(), v.into())));
            self
        }

        /// Adds annotations (replacing those with the same key).
        #[must_use]
        #[inline]
        pub fn with_annotations<K: ::core::convert::Into<::std::string::String>, V: ::core::convert::Into<::std::string::String>>(
            mut self,
            annotations: impl ::core::iter::IntoIterator<Item = (K, V)>,
        ) -> Self {
            self.metadata
                .get_or_insert_with(::core::default::Default::default)
                .annotations
                .get_or_insert_with(::core::default::Default::default)
                .extend(annotations.into_iter().map(|(k, v)| (k.into(), v.into())));
            self
        }

        /// Appends owner references.
        #[must_use]
        #[inline]
        pub fn with_owner_references(
            mut self,
            owners: impl ::core::iter::IntoIterator<Item = #meta::OwnerReference>,
        ) -> Self {
            self.metadata
                .get_or_insert_with(::core::default::Default::default)
                .owner_references
                .get_or_insert_with(::core::default::Default::default)
                .extend(owners);
            self
        }

        /// Appends finalizers.
        #[must_use]
        #[inline]
        pub fn with_finalizers<F: ::core::convert::Into<::std::string::String>>(
            mut self,
            finalizers: impl ::core::iter::IntoIterator<Item = F>,
        ) -> Self {
            self.metadata
                .get_or_insert_with(::core::default::Default::default)
                .finalizers
                .get_or_insert_with(::core::default::Default::default)
                .extend(finalizers.into_iter().map(::core::convert::Into::into));
            self
        }
    }
}
