//! Apply configurations of custom resources: `FooApplyConfiguration` for a kind, and a
//! `XApplyConfiguration` for its spec and for every struct of the API below it.
//!
//! Every field is optional and skipped when unset, so that a field manager applies exactly
//! what it sets. A field's type follows its list, map and struct type, as server-side apply
//! merges it: a `+listType=map` list holds the items' apply configurations, other lists
//! (atomic, set) hold whole items; a map holds its values' apply configurations unless
//! `+mapType=atomic`; a struct-typed field holds the struct's apply configuration unless
//! `+structType=atomic`. A struct reaches the apply configuration of another type through
//! `kube_codegen_runtime::apply::Apply`, so the derive and the CLI write the same code.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::{Fields, ItemEnum, ItemStruct, Type};

use crate::attr::marker;
use crate::check;
use crate::diag::Ctxt;
use crate::model::{Resource, Scope};
use crate::naming;

const PRIMITIVES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64", "bool", "char", "String", "str", "Value",
];

fn rt() -> TokenStream {
    quote!(::kube_codegen_runtime)
}

/// The derives every apply configuration has. `PartialEq` always: comparing what a manager
/// owns (`extract_foo`) with what it wants is how a controller skips no-op applies; the
/// derive could not tell whether the source type has it (a derive never sees the
/// `#[derive]` list it is in), and the CLI must write what the derive expands.
fn derives() -> TokenStream {
    let rt = rt();
    quote! {
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::default::Default, ::core::cmp::PartialEq, #rt::serde::Serialize, #rt::serde::Deserialize)]
        #[serde(crate = "::kube_codegen_runtime::serde")]
    }
}

fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn generic_args(ty: &Type) -> Vec<&Type> {
    let Type::Path(p) = ty else { return Vec::new() };
    let Some(last) = p.path.segments.last() else {
        return Vec::new();
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Vec::new();
    };
    args.args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// A type whose apply configuration is itself: numbers, strings, JSON.
fn is_primitive(ty: &Type) -> bool {
    last_ident(ty).is_some_and(|n| PRIMITIVES.contains(&n.as_str()))
}

/// `ty` with its last segment's type arguments replaced.
fn with_args(ty: &Type, args: &[TokenStream]) -> TokenStream {
    let Type::Path(p) = ty else {
        return ty.to_token_stream();
    };
    let mut path = p.path.clone();
    if let Some(last) = path.segments.last_mut() {
        last.arguments = syn::PathArguments::None;
    }
    quote!(#path<#(#args),*>)
}

/// How one field of a struct is written in its apply configuration.
struct Field<'a> {
    ident: syn::Ident,
    json: String,
    ty: &'a Type,
    list_map: bool,
    /// `+listType`, when given.
    list_type: Option<String>,
    map_atomic: bool,
    struct_atomic: bool,
    flatten: bool,
    /// The source field's doc lines without its markers.
    docs: Vec<String>,
}

/// The doc lines of `attrs` that are prose, not markers (`+optional`, `+listType=map`).
fn prose(attrs: &[syn::Attribute]) -> Vec<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|d| d.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| !l.trim_start().starts_with('+'))
        .collect();
    // No blank lines left at the end where markers were.
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].to_vec()
}

/// A field's doc attributes: its prose, or a line naming its JSON field.
fn field_docs(docs: &[String], json: &str) -> TokenStream {
    if docs.is_empty() {
        let line = format!(" `{json}`.");
        return quote!(#[doc = #line]);
    }
    quote!(#(#[doc = #docs])*)
}

fn fields(s: &ItemStruct) -> Vec<Field<'_>> {
    let rule = check::serde_value(&s.attrs, "rename_all");
    let Fields::Named(named) = &s.fields else {
        return Vec::new();
    };
    named
        .named
        .iter()
        .filter_map(|f| {
            let ident = f.ident.clone()?;
            let json = check::json_name(f, rule.as_deref())?;
            let markers = marker::read(&mut Ctxt::new(), &f.attrs);
            let value = |name: &str| {
                markers
                    .iter()
                    .find(|m| m.name == name)
                    .and_then(|m| m.value.clone())
            };
            Some(Field {
                ident,
                json,
                ty: &f.ty,
                list_map: value("listType").as_deref() == Some("map"),
                list_type: value("listType"),
                map_atomic: value("mapType").as_deref() == Some("atomic"),
                struct_atomic: value("structType").as_deref() == Some("atomic"),
                flatten: check::flattened(&f.attrs),
                docs: prose(&f.attrs),
            })
        })
        .collect()
}

/// The apply configuration of a leaf type: itself when primitive, otherwise through `Apply`.
fn leaf(ty: &Type) -> TokenStream {
    let ty = check::inner(ty);
    // A list or map inside a map's values or a list's items is held as it is.
    if is_primitive(ty) || container(ty).is_some() {
        ty.to_token_stream()
    } else {
        let rt = rt();
        quote!(<#ty as #rt::apply::Apply>::Configuration)
    }
}

/// What the field holds in the apply configuration (without the outer `Option`).
fn field_type(f: &Field<'_>) -> TokenStream {
    let ty = check::inner(f.ty);
    let name = last_ident(ty).unwrap_or_default();
    let args = generic_args(ty);
    match name.as_str() {
        "Vec" | "VecDeque" if f.list_map => {
            let item = leaf(args.first().copied().unwrap_or(ty));
            with_args(ty, &[item])
        }
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => ty.to_token_stream(),
        "HashMap" | "BTreeMap" if !f.map_atomic && args.len() == 2 => {
            let key = args[0].to_token_stream();
            let value = leaf(args[1]);
            with_args(ty, &[key, value])
        }
        "HashMap" | "BTreeMap" => ty.to_token_stream(),
        _ if f.struct_atomic || is_primitive(ty) || !matches!(ty, Type::Path(_)) => {
            ty.to_token_stream()
        }
        _ => leaf(ty),
    }
}

/// The merge of a leaf type: the type's own (`None`: a primitive, replaced whole).
fn leaf_merge(ty: &Type) -> Option<TokenStream> {
    let ty = check::inner(ty);
    let rt = rt();
    match container(ty) {
        // Nested maps merge key by key (a map's default); nested lists are atomic.
        Some(true) => Some(quote!(#rt::apply::Merge::ENTRIES)),
        Some(false) => None,
        None => (!is_primitive(ty)).then(|| quote!(<#ty as #rt::apply::Apply>::MERGE)),
    }
}

/// `Some(true)` for a map type, `Some(false)` for a list or set, `None` otherwise.
fn container(ty: &Type) -> Option<bool> {
    match last_ident(ty).unwrap_or_default().as_str() {
        "HashMap" | "BTreeMap" => Some(true),
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => Some(false),
        _ => None,
    }
}

/// How server-side apply merges a field (`None`: whole), as `field_type` holds it.
fn field_merge(f: &Field<'_>) -> Option<TokenStream> {
    let rt = rt();
    let ty = check::inner(f.ty);
    let name = last_ident(ty).unwrap_or_default();
    let args = generic_args(ty);
    let list_set = f.list_type.as_deref() == Some("set");
    match name.as_str() {
        "Vec" | "VecDeque" if f.list_map => {
            Some(match leaf_merge(args.first().copied().unwrap_or(ty)) {
                Some(item) => quote!(#rt::apply::Merge::List(|| #item)),
                None => quote!(#rt::apply::Merge::ITEMS),
            })
        }
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" if list_set => {
            Some(quote!(#rt::apply::Merge::ITEMS))
        }
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => None,
        "HashMap" | "BTreeMap" if !f.map_atomic && args.len() == 2 => {
            Some(match leaf_merge(args[1]) {
                Some(value) => quote!(#rt::apply::Merge::Map(|| #value)),
                None => quote!(#rt::apply::Merge::ENTRIES),
            })
        }
        "HashMap" | "BTreeMap" => None,
        _ if f.struct_atomic || is_primitive(ty) || !matches!(ty, Type::Path(_)) => None,
        _ => leaf_merge(ty),
    }
}

/// How a struct whose fields are `fields` merges: the arms of a `match` on the JSON name
/// (the fields of a flattened struct through its own merge); `None` when every field is
/// replaced whole.
fn struct_merge(fields: &[Field<'_>]) -> Option<TokenStream> {
    let rt = rt();
    let arms: Vec<TokenStream> = fields
        .iter()
        .filter(|f| !f.flatten)
        .filter_map(|f| {
            let json = &f.json;
            field_merge(f).map(|m| quote!(#json => #m,))
        })
        .collect();
    let flattened: Vec<TokenStream> = fields
        .iter()
        .filter(|f| f.flatten)
        .filter_map(|f| leaf_merge(f.ty))
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
pub fn merge_of(ac: &syn::Ident, arms: Option<TokenStream>) -> (TokenStream, TokenStream) {
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

/// The builder of one field: lists append, maps merge, everything else is set.
fn builder(f: &Field<'_>, held: &TokenStream) -> TokenStream {
    let ident = &f.ident;
    // `type_` (a keyword dodged) builds with `with_type`.
    let plain = ident
        .to_string()
        .trim_start_matches("r#")
        .trim_end_matches('_')
        .to_owned();
    let method = format_ident!("with_{}", plain);
    let json = &f.json;
    let ty = check::inner(f.ty);
    let name = last_ident(ty).unwrap_or_default();
    let args = generic_args(ty);
    let is_list = matches!(name.as_str(), "Vec" | "VecDeque" | "HashSet" | "BTreeSet");
    let is_map = matches!(name.as_str(), "HashMap" | "BTreeMap") && args.len() == 2;
    if f.flatten {
        let doc = format!(" Sets the fields flattened into this one from `{ident}`.");
        return quote! {
            #[doc = #doc]
            #[must_use]
            #[inline]
            pub fn #method(mut self, value: #held) -> Self {
                self.#ident = value;
                self
            }
        };
    }
    if is_list {
        let item = match (f.list_map, args.first()) {
            (true, Some(t)) => leaf(t),
            (_, Some(t)) => t.to_token_stream(),
            _ => quote!(()),
        };
        let doc = format!(" Appends items to `{json}`.");
        return quote! {
            #[doc = #doc]
            #[must_use]
            #[inline]
            pub fn #method(mut self, items: impl ::core::iter::IntoIterator<Item = #item>) -> Self {
                self.#ident.get_or_insert_with(::core::default::Default::default).extend(items);
                self
            }
        };
    }
    if is_map {
        let key = args[0].to_token_stream();
        let value = if f.map_atomic {
            args[1].to_token_stream()
        } else {
            leaf(args[1])
        };
        let doc = format!(" Adds entries to `{json}` (replacing those with the same key).");
        return quote! {
            #[doc = #doc]
            #[must_use]
            #[inline]
            pub fn #method(mut self, entries: impl ::core::iter::IntoIterator<Item = (#key, #value)>) -> Self {
                self.#ident.get_or_insert_with(::core::default::Default::default).extend(entries);
                self
            }
        };
    }
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

/// `XApplyConfiguration` for a struct of an API, its builders, and `impl Apply for X`.
pub fn struct_items(s: &ItemStruct) -> TokenStream {
    let ident = &s.ident;
    let ac = format_ident!("{}ApplyConfiguration", ident);
    let vis = &s.vis;
    let rt = rt();
    let derive = derives();
    let fields = fields(s);
    let decls = fields.iter().map(|f| {
        let name = &f.ident;
        let json = &f.json;
        let held = field_type(f);
        let docs = field_docs(&f.docs, json);
        if f.flatten {
            quote! {
                #docs
                #[serde(flatten)]
                pub #name: #held,
            }
        } else {
            quote! {
                #docs
                #[serde(rename = #json, default, skip_serializing_if = "::core::option::Option::is_none")]
                pub #name: ::core::option::Option<#held>,
            }
        }
    });
    let builders = fields.iter().map(|f| builder(f, &field_type(f)));
    let (merge, merge_field) = merge_of(&ac, struct_merge(&fields));
    let doc = format!(
        " The fields of a `{ident}` a field manager applies: every field optional, left out when unset."
    );
    quote! {
        #[doc = #doc]
        #derive
        #vis struct #ac {
            #(#decls)*
        }

        impl #ac {
            #merge_field

            #(#builders)*
        }

        impl #rt::apply::Apply for #ident {
            type Configuration = #ac;
            const MERGE: #rt::apply::Merge = #merge;
        }
    }
}

/// An enum is applied whole: its apply configuration is itself.
pub fn enum_items(e: &ItemEnum) -> TokenStream {
    let ident = &e.ident;
    let rt = rt();
    quote! {
        impl #rt::apply::Apply for #ident {
            type Configuration = #ident;
        }
    }
}

/// `FooApplyConfiguration` for a kind: type meta, metadata, the spec's and the status's
/// apply configurations, a constructor, builders, and `extract_foo` / `extract_foo_status`.
pub fn kind_items(r: &Resource, spec: &ItemStruct) -> TokenStream {
    let ty = &r.ident;
    let spec_ident = &spec.ident;
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
    let merge = merge_of(
        &ac,
        Some(quote! {
            "metadata" => #rt::apply::OBJECT_META,
            "spec" => <#spec_ident as #rt::apply::Apply>::MERGE,
            #status_arm
            _ => #rt::apply::Merge::Atomic,
        }),
    );
    kind_common(r, &ac, quote!(#spec_ac), status_ac, merge)
}

/// A CRD kind's apply configuration struct (type meta, metadata, `spec` holding `spec_ac`,
/// `status` holding `status_ac`, merged as `merge` says, from [`merge_of`]) with the helpers every kind's apply
/// configuration has.
pub fn kind_common(
    r: &Resource,
    ac: &syn::Ident,
    spec_ac: TokenStream,
    status_ac: Option<TokenStream>,
    (merge, merge_field): (TokenStream, TokenStream),
) -> TokenStream {
    let derive = derives();
    let vis = &r.vis;
    let meta = quote!(::k8s_openapi::apimachinery::pkg::apis::meta::v1);
    let skip = quote!(#[serde(default, skip_serializing_if = "::core::option::Option::is_none")]);
    let status_field = status_ac.as_ref().map(|s| {
        quote! {
            /// The status, applied through the status subresource.
            #skip
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
    let kind = &r.kind;
    let doc = format!(
        " What a field manager says about a `{kind}`: only the fields set here are applied, and owned."
    );
    let ty = &r.ident;
    let helpers = kind_helpers(r, ac, &quote!(#ty), status_ac.is_some());
    quote! {
        #[doc = #doc]
        #derive
        #vis struct #ac {
            /// `apiVersion`.
            #[serde(rename = "apiVersion", default, skip_serializing_if = "::core::option::Option::is_none")]
            pub api_version: ::core::option::Option<::std::string::String>,
            /// `kind`.
            #skip
            pub kind: ::core::option::Option<::std::string::String>,
            /// Name, namespace, and the labels, annotations, owner references and finalizers applied.
            #skip
            pub metadata: ::core::option::Option<#meta::ObjectMeta>,
            /// The desired state.
            #skip
            pub spec: ::core::option::Option<#spec_ac>,
            #status_field
        }

        impl #ac {
            /// How server-side apply merges the object, for `extract`.
            pub const MERGE: ::kube_codegen_runtime::apply::Merge = #merge;

            #merge_field

            /// Sets `spec`.
            #[must_use]
            #[inline]
            pub fn with_spec(mut self, spec: #spec_ac) -> Self {
                self.spec = ::core::option::Option::Some(spec);
                self
            }

            #status_builder
        }

        #helpers
    }
}

/// What every kind's apply configuration `ac` (a struct with `api_version`, `kind` and
/// `metadata` fields) has: `new`, metadata builders, `ObjectConfiguration`, and the
/// `extract_<kind>` functions for objects of type `object`.
pub fn kind_helpers(
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

/// The Rust name k8s-openapi gives the field `json` of a built-in type, so that apply
/// configurations read like the types: `podCIDRs` -> `pod_cidrs`, `insecureSkipTLSVerify` ->
/// `insecure_skip_tls_verify`, `type` -> `type_`, `$ref` -> `ref_path`.
///
/// An underscore goes before a capital that follows a small letter or a digit, and before
/// the last capital of a run when a small letter follows it (`TLSVerify`), except a plural
/// `s` ending a word (`CIDRs`); keywords get a trailing underscore.
pub fn field_ident(json: &str) -> syn::Ident {
    let name = match json {
        "$ref" => "ref_path".to_owned(),
        "$schema" => "schema".to_owned(),
        _ => {
            let chars: Vec<char> = json.chars().collect();
            let mut out = String::new();
            for (i, &c) in chars.iter().enumerate() {
                let prev = i.checked_sub(1).map(|j| chars[j]);
                let next = chars.get(i + 1).copied();
                let after = chars.get(i + 2).copied();
                if c.is_ascii_uppercase() {
                    let after_small =
                        prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
                    let plural = next == Some('s') && after.is_none_or(|a| a.is_ascii_uppercase());
                    let run_ends = prev.is_some_and(|p| p.is_ascii_uppercase())
                        && next.is_some_and(|n| !n.is_ascii_uppercase())
                        && !plural;
                    if after_small || run_ends {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                } else if c == '-' || c == '.' || c == '$' {
                    out.push('_');
                } else {
                    out.push(c);
                }
            }
            out
        }
    };
    let ident = naming::ident(&name);
    match ident.to_string().strip_prefix("r#") {
        Some(keyword) => format_ident!("{}_", keyword),
        None => ident,
    }
}

#[cfg(test)]
mod tests {
    use super::field_ident;

    #[test]
    fn built_in_fields_are_named_as_k8s_openapi_names_them() {
        for (json, rust) in [
            ("podCIDRs", "pod_cidrs"),
            ("hostIPs", "host_ips"),
            ("insecureSkipTLSVerify", "insecure_skip_tls_verify"),
            (
                "currentCPUUtilizationPercentage",
                "current_cpu_utilization_percentage",
            ),
            ("openAPIV3Schema", "open_api_v3_schema"),
            ("stubPKCS10Request", "stub_pkc_s10_request"),
            ("nonResourceURLs", "non_resource_urls"),
            ("seLinuxOptions", "se_linux_options"),
            ("type", "type_"),
            ("continue", "continue_"),
            ("$ref", "ref_path"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
        ] {
            assert_eq!(field_ident(json).to_string(), rust, "{json}");
        }
    }
}
