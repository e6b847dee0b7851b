//! Apply configurations of built-in kinds (`Deployment`, `ConfigMap`, ...), generated from
//! their shapes in the Kubernetes API ([`BuiltinShapes`]: field names, types, list and map
//! types, as `apiserver_rules::builtin` reads them from the OpenAPI documents) rather than
//! from tables written per kind.
//!
//! One module at the root of the generated tree, `builtin_applyconfigurations`, holds the
//! apply configurations of every built-in kind of the tree and of every type they reach,
//! under the type's name (or, where two groups have one name, prefixed by group and
//! version). Quantities, times, int-or-strings and raw JSON are k8s-openapi's own types;
//! `metadata` is k8s-openapi's `ObjectMeta`, whose fields are all optional already; a type
//! or list the API declares atomic holds k8s-openapi's whole type.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::Resource;

/// One field of a built-in type.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeField {
    /// A string.
    String,
    /// Base64 bytes.
    Bytes,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// A number.
    Float64,
    /// A boolean.
    Bool,
    /// `metav1.Time`.
    Time,
    /// `metav1.MicroTime`.
    MicroTime,
    /// `resource.Quantity`.
    Quantity,
    /// `intstr.IntOrString`.
    IntOrString,
    /// Any JSON.
    Any,
    /// Another type, by definition name (`io.k8s.api.core.v1.Container`).
    Ref(String),
    /// A list; `map`: an associative list (`x-kubernetes-list-type: map`).
    List {
        /// The items.
        item: Box<ShapeField>,
        /// Keyed items, merged one by one.
        map: bool,
        /// `x-kubernetes-list-type: set`: items merged by value.
        set: bool,
    },
    /// A map with string keys; `atomic`: replaced as a whole.
    Map {
        /// The values.
        value: Box<ShapeField>,
        /// `x-kubernetes-map-type: atomic`.
        atomic: bool,
    },
}

/// One built-in struct type.
#[derive(Debug, Clone, Default)]
pub struct ShapeType {
    /// Fields by JSON name, sorted.
    pub fields: Vec<(String, ShapeField)>,
    /// `x-kubernetes-map-type: atomic`: applied as a whole.
    pub atomic: bool,
}

/// The shapes of the built-in kinds a generator knows.
#[derive(Debug, Clone, Default)]
pub struct BuiltinShapes {
    /// `apps/v1/Deployment` -> its definition name.
    pub kinds: BTreeMap<String, String>,
    /// Definition name -> type.
    pub types: BTreeMap<String, ShapeType>,
}

impl BuiltinShapes {
    /// The definition of a kind.
    pub fn kind(&self, r: &Resource) -> Option<&str> {
        let api_version = if r.group.is_empty() {
            r.version.clone()
        } else {
            format!("{}/{}", r.group, r.version)
        };
        self.kinds
            .get(&format!("{api_version}/{}", r.kind))
            .map(String::as_str)
    }
}

/// The k8s-openapi path of a definition (`io.k8s.api.apps.v1.Deployment` ->
/// `::k8s_openapi::api::apps::v1::Deployment`).
fn rust_path(def: &str) -> TokenStream {
    let rest = def
        .strip_prefix("io.k8s.apiextensions-apiserver.")
        .map(|r| format!("apiextensions_apiserver.{r}"))
        .or_else(|| def.strip_prefix("io.k8s.").map(str::to_owned))
        .unwrap_or_else(|| def.to_owned());
    let segments = rest
        .split('.')
        .map(|s| crate::naming::ident(&s.replace('-', "_")));
    quote!(::k8s_openapi #(::#segments)*)
}

/// The short name of a definition (`Container`) and its group/version prefix (`CoreV1`).
fn names(def: &str) -> (String, String) {
    let parts: Vec<&str> = def.split('.').collect();
    let name = parts.last().copied().unwrap_or(def).to_owned();
    let n = parts.len();
    let prefix = if n >= 3 {
        let cap = |s: &str| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        };
        format!("{}{}", cap(parts[n - 3]), cap(parts[n - 2]))
    } else {
        String::new()
    };
    (name, prefix)
}

/// Everything `roots` reach through fields that get their own apply configuration.
fn reachable(shapes: &BuiltinShapes, roots: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<String> = roots.to_vec();
    while let Some(def) = stack.pop() {
        let Some(ty) = shapes.types.get(&def) else {
            continue;
        };
        if ty.atomic || !out.insert(def) {
            continue;
        }
        for (_, f) in &ty.fields {
            let mut f = f;
            loop {
                match f {
                    ShapeField::List {
                        item, map: true, ..
                    } => f = item,
                    ShapeField::Map {
                        value,
                        atomic: false,
                    } => f = value,
                    ShapeField::Ref(r) if !is_leaf(r) => {
                        stack.push(r.clone());
                        break;
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

/// Types used as they are: metadata and the types with their own JSON.
fn is_leaf(def: &str) -> bool {
    def == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
}

/// The module `builtin_applyconfigurations`: apply configurations of the built-in kinds
/// `kinds` (with their resources) and of every type they reach.
pub fn module(shapes: &BuiltinShapes, kinds: &[&Resource]) -> TokenStream {
    let roots: Vec<String> = kinds
        .iter()
        .filter_map(|r| shapes.kind(r).map(str::to_owned))
        .collect();
    let defs = reachable(shapes, &roots);
    // Names: the type's own, or prefixed where two definitions share it.
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for d in &defs {
        *count.entry(names(d).0).or_default() += 1;
    }
    let ac_name: BTreeMap<String, syn::Ident> = defs
        .iter()
        .map(|d| {
            let (name, prefix) = names(d);
            let full = if count[&name] > 1 {
                format!("{prefix}{name}")
            } else {
                name
            };
            (d.clone(), format_ident!("{}ApplyConfiguration", full))
        })
        .collect();
    let kind_of: BTreeMap<&str, &Resource> = kinds
        .iter()
        .filter_map(|r| shapes.kind(r).map(|d| (d, *r)))
        .collect();
    let mut items = TokenStream::new();
    for def in &defs {
        let ty = &shapes.types[def];
        let ac = &ac_name[def];
        let held = |f: &ShapeField| field_type(f, shapes, &ac_name);
        let decls = ty.fields.iter().map(|(json, f)| {
            let ident = super::apply::field_ident(json);
            let t = held(f);
            let doc = format!(" `{json}`.");
            quote! {
                #[doc = #doc]
                #[serde(rename = #json, default, skip_serializing_if = "::core::option::Option::is_none")]
                pub #ident: ::core::option::Option<#t>,
            }
        });
        let is_kind = kind_of.contains_key(def.as_str());
        let builders = ty
            .fields
            .iter()
            .filter(|(json, _)| {
                !(is_kind && matches!(json.as_str(), "apiVersion" | "kind" | "metadata"))
            })
            .map(|(json, f)| builder(json, f, shapes, &ac_name));
        let short = names(def).0;
        let doc = if is_kind {
            format!(
                " What a field manager says about a `{short}`: only the fields set here are applied, and owned."
            )
        } else {
            format!(
                " The fields of a `{short}` a field manager applies: every field optional, left out when unset."
            )
        };
        let arms: Vec<TokenStream> = ty
            .fields
            .iter()
            .filter_map(|(json, f)| field_merge(f, shapes, &ac_name).map(|m| quote!(#json => #m,)))
            .collect();
        let (merge, merge_field) = crate::emit::apply::merge_of(
            ac,
            (!arms.is_empty()).then(|| {
                quote! {
                    #(#arms)*
                    _ => ::kube_codegen_runtime::apply::Merge::Atomic,
                }
            }),
        );
        items.extend(quote! {
            #[doc = #doc]
            #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::default::Default, ::core::cmp::PartialEq, ::kube_codegen_runtime::serde::Serialize, ::kube_codegen_runtime::serde::Deserialize)]
            #[serde(crate = "::kube_codegen_runtime::serde")]
            pub struct #ac {
                #(#decls)*
            }

            impl #ac {
                /// How server-side apply merges it, for `extract`.
                pub const MERGE: ::kube_codegen_runtime::apply::Merge = #merge;

                #merge_field

                #(#builders)*
            }
        });
        if let Some(r) = kind_of.get(def.as_str()) {
            let object = rust_path(def);
            let has_status = ty.fields.iter().any(|(j, _)| j == "status");
            items.extend(super::apply::kind_helpers(r, ac, &object, has_status));
        }
    }
    quote! {
        //! Apply configurations of the built-in kinds of this tree and of the types they
        //! reach, generated from the Kubernetes API's shapes of them.
        #items
    }
}

fn scalar(f: &ShapeField) -> Option<TokenStream> {
    let meta = quote!(::k8s_openapi::apimachinery::pkg);
    Some(match f {
        ShapeField::String => quote!(::std::string::String),
        ShapeField::Bytes => quote!(::k8s_openapi::ByteString),
        ShapeField::Int32 => quote!(i32),
        ShapeField::Int64 => quote!(i64),
        ShapeField::Float64 => quote!(f64),
        ShapeField::Bool => quote!(bool),
        ShapeField::Time => quote!(#meta::apis::meta::v1::Time),
        ShapeField::MicroTime => quote!(#meta::apis::meta::v1::MicroTime),
        ShapeField::Quantity => quote!(#meta::api::resource::Quantity),
        ShapeField::IntOrString => quote!(#meta::util::intstr::IntOrString),
        ShapeField::Any => quote!(::serde_json::Value),
        _ => return None,
    })
}

/// The whole type of a field, as k8s-openapi has it.
fn whole(f: &ShapeField) -> TokenStream {
    if let Some(t) = scalar(f) {
        return t;
    }
    match f {
        ShapeField::Ref(d) => rust_path(d),
        ShapeField::List { item, .. } => {
            let i = whole(item);
            quote!(::std::vec::Vec<#i>)
        }
        ShapeField::Map { value, .. } => {
            let v = whole(value);
            quote!(::std::collections::BTreeMap<::std::string::String, #v>)
        }
        _ => quote!(::serde_json::Value),
    }
}

/// What a field holds in an apply configuration.
fn field_type(
    f: &ShapeField,
    shapes: &BuiltinShapes,
    ac: &BTreeMap<String, syn::Ident>,
) -> TokenStream {
    match f {
        ShapeField::Ref(d) => match ac.get(d) {
            Some(name) if !shapes.types.get(d).is_some_and(|t| t.atomic) => quote!(#name),
            _ => rust_path(d),
        },
        ShapeField::List {
            item, map: true, ..
        } => {
            let i = field_type(item, shapes, ac);
            quote!(::std::vec::Vec<#i>)
        }
        ShapeField::Map {
            value,
            atomic: false,
        } => {
            let v = field_type(value, shapes, ac);
            quote!(::std::collections::BTreeMap<::std::string::String, #v>)
        }
        other => whole(other),
    }
}

/// How server-side apply merges a field, as `field_type` holds it (`None`: whole).
fn field_merge(
    f: &ShapeField,
    shapes: &BuiltinShapes,
    ac: &BTreeMap<String, syn::Ident>,
) -> Option<TokenStream> {
    let rt = quote!(::kube_codegen_runtime::apply);
    match f {
        ShapeField::Ref(d) if d == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" => {
            Some(quote!(#rt::OBJECT_META))
        }
        ShapeField::Ref(d) => match ac.get(d) {
            Some(name) if !shapes.types.get(d).is_some_and(|t| t.atomic) => {
                Some(quote!(#name::MERGE))
            }
            _ => None,
        },
        ShapeField::List {
            item, map: true, ..
        } => Some(match field_merge(item, shapes, ac) {
            Some(i) => quote!(#rt::Merge::List(|| #i)),
            None => quote!(#rt::Merge::ITEMS),
        }),
        ShapeField::List { set: true, .. } => Some(quote!(#rt::Merge::ITEMS)),
        ShapeField::Map {
            value,
            atomic: false,
        } => Some(match field_merge(value, shapes, ac) {
            Some(v) => quote!(#rt::Merge::Map(|| #v)),
            None => quote!(#rt::Merge::ENTRIES),
        }),
        _ => None,
    }
}

fn builder(
    json: &str,
    f: &ShapeField,
    shapes: &BuiltinShapes,
    ac: &BTreeMap<String, syn::Ident>,
) -> TokenStream {
    let ident = super::apply::field_ident(json);
    let plain = ident
        .to_string()
        .trim_start_matches("r#")
        .trim_end_matches('_')
        .to_owned();
    let method = format_ident!("with_{}", plain);
    match f {
        ShapeField::List { item, map, .. } => {
            let i = if *map {
                field_type(item, shapes, ac)
            } else {
                whole(item)
            };
            let doc = format!(" Appends items to `{json}`.");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method(mut self, items: impl ::core::iter::IntoIterator<Item = #i>) -> Self {
                    self.#ident.get_or_insert_with(::core::default::Default::default).extend(items);
                    self
                }
            }
        }
        ShapeField::Map { value, atomic } => {
            let v = if *atomic {
                whole(value)
            } else {
                field_type(value, shapes, ac)
            };
            let doc = format!(" Adds entries to `{json}` (replacing those with the same key).");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method<K: ::core::convert::Into<::std::string::String>>(mut self, entries: impl ::core::iter::IntoIterator<Item = (K, #v)>) -> Self {
                    self.#ident
                        .get_or_insert_with(::core::default::Default::default)
                        .extend(entries.into_iter().map(|(k, v)| (k.into(), v)));
                    self
                }
            }
        }
        other => {
            let t = field_type(other, shapes, ac);
            let doc = format!(" Sets `{json}`.");
            quote! {
                #[doc = #doc]
                #[must_use]
                #[inline]
                pub fn #method(mut self, value: impl ::core::convert::Into<#t>) -> Self {
                    self.#ident = ::core::option::Option::Some(value.into());
                    self
                }
            }
        }
    }
}
