//! Apply configurations of built-in kinds (`Deployment`, `ConfigMap`, ...), lowered from
//! their shapes in the Kubernetes API (field names, types, list and map types, as
//! `apiserver_rules::builtin` reads them from the OpenAPI documents) rather than from
//! tables written per kind.
//!
//! They go in one module at the root of the generated tree, `builtin_applyconfigurations`:
//! the apply configurations of every built-in kind of the tree and of every type they
//! reach, under the type's name (or, where two groups have one name, prefixed by group and
//! version). Quantities, times, int-or-strings and raw JSON are k8s-openapi's own types;
//! `metadata` is k8s-openapi's `ObjectMeta`, whose fields are all optional already; a type
//! or list the API declares atomic holds k8s-openapi's whole type.

use std::collections::{BTreeMap, BTreeSet};

use apiserver_rules::builtin::{self, Field, Kind, Type};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{AcField, AcStruct, Builder, Reached};
use crate::model::Resource;

/// The API's type of a built-in kind, when the table has it.
pub(crate) fn kind_type(r: &Resource) -> Option<&'static Type> {
    let api_version = if r.group.is_empty() {
        r.version.clone()
    } else {
        format!("{}/{}", r.group, r.version)
    };
    builtin::types().kind(&api_version, &r.kind)
}

/// The kind an apply configuration is of: what its helpers (`new`, `extract_*`) need.
pub(crate) struct KindOf<'r> {
    /// The resource.
    pub(crate) resource: &'r Resource,
    /// k8s-openapi's type of its objects.
    pub(crate) object: TokenStream,
    /// Whether the kind has a `status`.
    pub(crate) has_status: bool,
}

/// The apply configurations of the built-in kinds `kinds` and of every type they reach,
/// sorted by definition name; a kind's comes with its [`KindOf`].
pub(crate) fn lower<'r>(kinds: &[&'r Resource]) -> Vec<(AcStruct, Option<KindOf<'r>>)> {
    let types = builtin::types();
    let kind_of: BTreeMap<&str, &Resource> = kinds
        .iter()
        .filter_map(|r| kind_type(r).map(|t| (t.name.as_str(), *r)))
        .collect();
    let roots: Vec<&str> = kind_of.keys().copied().collect();
    let defs = reachable(types, &roots);
    // Names: the type's own, or prefixed where two definitions share it.
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for d in &defs {
        *count.entry(names(d).0).or_default() += 1;
    }
    let names: Names = defs
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
    let mut out = Vec::new();
    for def in &defs {
        let Some(ty) = types.get(def) else { continue };
        let kind = kind_of.get(def.as_str()).map(|r| KindOf {
            resource: r,
            object: rust_path(def),
            has_status: ty.fields.contains_key("status"),
        });
        let short = def.rsplit('.').next().unwrap_or(def);
        let doc = if kind.is_some() {
            format!(
                " What a field manager says about a `{short}`: only the fields set here are applied, and owned."
            )
        } else {
            format!(
                " The fields of a `{short}` a field manager applies: every field optional, left out when unset."
            )
        };
        let type_meta = |json: &str| matches!(json, "apiVersion" | "kind" | "metadata");
        let fields = ty
            .fields
            .iter()
            .map(|(json, f)| AcField {
                ident: crate::naming::field_ident(json),
                json: json.clone(),
                docs: Vec::new(),
                held: held(f, &names),
                builder: (!(kind.is_some() && type_meta(json))).then(|| builder(f, &names)),
                merge: merge(f, &names),
                flatten: false,
            })
            .collect();
        out.push((
            AcStruct {
                ident: names[def].clone(),
                vis: syn::parse_quote!(pub),
                doc,
                fields,
                reached: Reached::Merge,
            },
            kind,
        ));
    }
    out
}

/// Definition name -> the name of its apply configuration, for the types that have one.
type Names = BTreeMap<String, syn::Ident>;

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

fn is(value: &Option<String>, wanted: &str) -> bool {
    value.as_deref() == Some(wanted)
}

/// A type applied as a whole (`x-kubernetes-map-type: atomic`).
fn atomic(t: &Type) -> bool {
    is(&t.map_type, "atomic")
}

/// Everything `roots` reach through fields that get their own apply configuration.
fn reachable(types: &builtin::Types, roots: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack: Vec<String> = roots.iter().map(|r| (*r).to_owned()).collect();
    while let Some(def) = stack.pop() {
        let Some(ty) = types.get(&def) else {
            continue;
        };
        if atomic(ty) || !out.insert(def) {
            continue;
        }
        for f in ty.fields.values() {
            let mut f = f;
            loop {
                match &f.kind {
                    Kind::List(item) if is(&f.list_type, "map") => f = item,
                    Kind::Map(value) if !is(&f.map_type, "atomic") => f = value,
                    Kind::Ref(r) if !is_leaf(r) => {
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
    def == OBJECT_META
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

fn scalar(kind: &Kind) -> Option<TokenStream> {
    let meta = quote!(::k8s_openapi::apimachinery::pkg);
    Some(match kind {
        Kind::String => quote!(::std::string::String),
        Kind::Bytes => quote!(::k8s_openapi::ByteString),
        Kind::Int32 => quote!(i32),
        Kind::Int64 => quote!(i64),
        Kind::Float64 => quote!(f64),
        Kind::Bool => quote!(bool),
        Kind::Time => quote!(#meta::apis::meta::v1::Time),
        Kind::MicroTime => quote!(#meta::apis::meta::v1::MicroTime),
        Kind::Quantity => quote!(#meta::api::resource::Quantity),
        Kind::IntStr => quote!(#meta::util::intstr::IntOrString),
        Kind::Any => quote!(::serde_json::Value),
        _ => return None,
    })
}

/// The whole type of a field, as k8s-openapi has it.
fn whole(f: &Field) -> TokenStream {
    if let Some(t) = scalar(&f.kind) {
        return t;
    }
    match &f.kind {
        Kind::Ref(d) => rust_path(d),
        Kind::List(item) => {
            let i = whole(item);
            quote!(::std::vec::Vec<#i>)
        }
        Kind::Map(value) => {
            let v = whole(value);
            quote!(::std::collections::BTreeMap<::std::string::String, #v>)
        }
        _ => quote!(::serde_json::Value),
    }
}

/// The apply configuration of a definition, unless it is applied whole.
fn configuration<'n>(def: &str, names: &'n Names) -> Option<&'n syn::Ident> {
    names
        .get(def)
        .filter(|_| !builtin::types().get(def).is_some_and(atomic))
}

/// What a field holds in an apply configuration.
fn held(f: &Field, names: &Names) -> TokenStream {
    match &f.kind {
        Kind::Ref(d) => match configuration(d, names) {
            Some(name) => quote!(#name),
            None => rust_path(d),
        },
        Kind::List(item) if is(&f.list_type, "map") => {
            let i = held(item, names);
            quote!(::std::vec::Vec<#i>)
        }
        Kind::Map(value) if !is(&f.map_type, "atomic") => {
            let v = held(value, names);
            quote!(::std::collections::BTreeMap<::std::string::String, #v>)
        }
        _ => whole(f),
    }
}

/// How server-side apply merges a field, as [`held`] holds it (`None`: whole).
fn merge(f: &Field, names: &Names) -> Option<TokenStream> {
    let rt = quote!(::kube_codegen_runtime::apply);
    match &f.kind {
        Kind::Ref(d) if d == OBJECT_META => Some(quote!(#rt::OBJECT_META)),
        Kind::Ref(d) => configuration(d, names).map(|name| quote!(#name::MERGE)),
        Kind::List(item) if is(&f.list_type, "map") => Some(match merge(item, names) {
            Some(i) => quote!(#rt::Merge::List(|| #i)),
            None => quote!(#rt::Merge::ITEMS),
        }),
        Kind::List(_) if is(&f.list_type, "set") => Some(quote!(#rt::Merge::ITEMS)),
        Kind::Map(value) if !is(&f.map_type, "atomic") => Some(match merge(value, names) {
            Some(v) => quote!(#rt::Merge::Map(|| #v)),
            None => quote!(#rt::Merge::ENTRIES),
        }),
        _ => None,
    }
}

/// How the builder of a field adds to it: lists append, maps merge, the rest is set.
fn builder(f: &Field, names: &Names) -> Builder {
    match &f.kind {
        Kind::List(item) => Builder::Append {
            item: if is(&f.list_type, "map") {
                held(item, names)
            } else {
                whole(item)
            },
        },
        Kind::Map(value) => Builder::Entries {
            key: None,
            value: if is(&f.map_type, "atomic") {
                whole(value)
            } else {
                held(value, names)
            },
        },
        _ => Builder::Set,
    }
}
