//! Apply configurations of built-in kinds (`Deployment`, `ConfigMap`, ...), lowered from
//! their shapes in the Kubernetes API (field names, types, list and map types, as
//! `apiserver_rules::builtin` reads them from the OpenAPI documents) rather than from
//! tables written per kind.
//!
//! The runtime ships them once, as client-go does (`kube_codegen_runtime::applyconfigurations`):
//! one module per API group and version (`apps::v1`) with the apply configurations of the
//! built-in kinds of [`crate::builtin`]'s table and of every type they reach, each in the
//! module of its own group and version under the type's name; one cargo feature per group
//! (`ac-apps`), which enables the groups its types use. Quantities, times, int-or-strings
//! and raw JSON are k8s-openapi's own types; `metadata` is k8s-openapi's `ObjectMeta`,
//! whose fields are all optional already; a type or list the API declares atomic holds
//! k8s-openapi's whole type. Generated trees re-export their kinds' from there.

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

/// A module of the shipped apply configurations: an API group's module name and a version
/// (`apps`, `v1`; `meta`, `v1` for `io.k8s.apimachinery.pkg.apis.meta.v1`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Module {
    /// The group's module (`core`, `apps`, `events`).
    pub group: String,
    /// The version's module (`v1`).
    pub version: String,
}

impl Module {
    /// The module of a definition (`io.k8s.api.apps.v1.Deployment` -> `apps::v1`).
    fn of(def: &str) -> Self {
        let parts: Vec<&str> = def.split('.').collect();
        let at = |back: usize| {
            parts
                .len()
                .checked_sub(back)
                .and_then(|i| parts.get(i))
                .map_or_else(String::new, |p| p.replace('-', "_"))
        };
        Self {
            group: at(3),
            version: at(2),
        }
    }

    /// Its absolute path in the runtime.
    pub(crate) fn path(&self) -> TokenStream {
        let group = crate::naming::ident(&self.group);
        let version = crate::naming::ident(&self.version);
        quote!(::kube_codegen_runtime::applyconfigurations::#group::#version)
    }

    /// The runtime's feature that enables the group's apply configurations.
    pub(crate) fn feature(&self) -> String {
        feature(&self.group)
    }
}

/// The runtime's feature that enables the apply configurations of the group whose module
/// is `group` (`ac-apps`).
fn feature(group: &str) -> String {
    format!("ac-{group}")
}

/// The shipped module that holds the apply configuration of built-in kind `r`, when the
/// table has its shape.
pub(crate) fn module_of_kind(r: &Resource) -> Option<Module> {
    kind_type(r).map(|t| Module::of(&t.name))
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

/// The apply configurations the runtime ships, and the cargo features that enable them.
pub(crate) struct Shipped<'r> {
    /// Each module's apply configurations, sorted by definition name; a kind's comes with
    /// its [`KindOf`].
    pub modules: BTreeMap<Module, Vec<(AcStruct, Option<KindOf<'r>>)>>,
    /// For each module, the features of which any one enables it: its group's, or (a
    /// group without kinds of its own, such as `meta`) those of the groups that use it.
    pub enabled_by: BTreeMap<Module, BTreeSet<String>>,
    /// Each group's feature, with the features of the other groups its types use.
    pub features: BTreeMap<String, BTreeSet<String>>,
}

/// The apply configurations of the built-in kinds `kinds` (the whole table) and of every
/// type they reach, by module; an error names a kind whose shape the table lacks.
pub(crate) fn shipped(kinds: &[Resource]) -> Result<Shipped<'_>, String> {
    let types = builtin::types();
    let mut kind_of: BTreeMap<&str, &Resource> = BTreeMap::new();
    for r in kinds {
        let Some(t) = kind_type(r) else {
            return Err(format!(
                "the built-in kind `{}` of `{}/{}` has no shape in `apiserver-rules/src/types.json`; add it to `hack/builtin-types.py` and regenerate the table",
                r.kind, r.group, r.version
            ));
        };
        kind_of.insert(t.name.as_str(), r);
    }
    let roots: Vec<&str> = kind_of.keys().copied().collect();
    let defs = reachable(types, &roots);
    let all: BTreeMap<String, (Module, syn::Ident)> = defs
        .iter()
        .map(|d| {
            let short = d.rsplit('.').next().unwrap_or(d);
            let ident = format_ident!("{}ApplyConfiguration", short);
            (d.clone(), (Module::of(d), ident))
        })
        .collect();
    let mut modules: BTreeMap<Module, Vec<(AcStruct, Option<KindOf<'_>>)>> = BTreeMap::new();
    let mut uses: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for def in &defs {
        let Some(ty) = types.get(def) else { continue };
        let here = &all[def].0;
        let names = Names { all: &all, here };
        for f in ty.fields.values() {
            if let Some(used) = configured_ref(f).and_then(|d| all.get(d))
                && &used.0 != here
            {
                uses.entry(here.clone()).or_default().insert(used.0.clone());
            }
        }
        let kind = kind_of.get(def.as_str()).map(|r| KindOf {
            resource: r,
            object: rust_path(def),
            has_status: ty.fields.contains_key("status"),
        });
        let s = lower_type(def, ty, kind.is_some(), &names);
        modules.entry(here.clone()).or_default().push((s, kind));
    }
    let kind_groups: BTreeSet<&str> = kind_of.keys().map(|d| all[*d].0.group.as_str()).collect();
    let mut enabled_by: BTreeMap<Module, BTreeSet<String>> = BTreeMap::new();
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for group in &kind_groups {
        let feature = feature(group);
        let needs = features.entry(feature.clone()).or_default();
        // The group's modules, then the modules without a feature of their own that they
        // use; a module of another group with kinds is that group's feature.
        let mut stack: Vec<&Module> = modules.keys().filter(|m| m.group == *group).collect();
        let mut seen: BTreeSet<&Module> = BTreeSet::new();
        while let Some(m) = stack.pop() {
            if !seen.insert(m) {
                continue;
            }
            if m.group != *group && kind_groups.contains(m.group.as_str()) {
                needs.insert(m.feature());
                continue;
            }
            enabled_by
                .entry(m.clone())
                .or_default()
                .insert(feature.clone());
            stack.extend(uses.get(m).into_iter().flatten());
        }
    }
    Ok(Shipped {
        modules,
        enabled_by,
        features,
    })
}

/// The apply configuration of definition `def` (of a kind, when `is_kind`).
fn lower_type(def: &str, ty: &Type, is_kind: bool, names: &Names<'_>) -> AcStruct {
    let short = def.rsplit('.').next().unwrap_or(def);
    let doc = if is_kind {
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
            ident: crate::naming::field_ident(json, crate::naming::Keywords::Underscore),
            json: json.clone(),
            docs: Vec::new(),
            held: held(f, names),
            builder: (!(is_kind && type_meta(json))).then(|| builder(f, names)),
            merge: merge(f, names),
            flatten: false,
        })
        .collect();
    AcStruct {
        ident: names.all[def].1.clone(),
        vis: syn::parse_quote!(pub),
        doc,
        fields,
        reached: Reached::Merge,
        own: false,
    }
}

/// The apply configurations' names, seen from the module being written.
struct Names<'a> {
    /// Definition name -> its module and the name of its apply configuration.
    all: &'a BTreeMap<String, (Module, syn::Ident)>,
    /// The module being written: its own types are named without a path.
    here: &'a Module,
}

impl Names<'_> {
    /// The apply configuration of a definition, unless it is applied whole.
    fn configuration(&self, def: &str) -> Option<TokenStream> {
        let (module, ident) = self.all.get(def)?;
        Some(if module == self.here {
            quote!(#ident)
        } else {
            let path = module.path();
            quote!(#path::#ident)
        })
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
        stack.extend(
            ty.fields
                .values()
                .filter_map(configured_ref)
                .map(str::to_owned),
        );
    }
    out
}

/// The type a field holds the apply configuration of (through map-lists and maps that
/// merge by key), if any: what makes one type's apply configuration use another's.
fn configured_ref(f: &Field) -> Option<&str> {
    match &f.kind {
        Kind::List(item) if is(&f.list_type, "map") => configured_ref(item),
        Kind::Map(value) if !is(&f.map_type, "atomic") => configured_ref(value),
        Kind::Ref(r) if !is_leaf(r) => Some(r),
        _ => None,
    }
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

/// What a field holds in an apply configuration.
fn held(f: &Field, names: &Names<'_>) -> TokenStream {
    match &f.kind {
        Kind::Ref(d) => names.configuration(d).unwrap_or_else(|| rust_path(d)),
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
fn merge(f: &Field, names: &Names<'_>) -> Option<TokenStream> {
    let rt = quote!(::kube_codegen_runtime::apply);
    match &f.kind {
        Kind::Ref(d) if d == OBJECT_META => Some(quote!(#rt::OBJECT_META)),
        Kind::Ref(d) => names.configuration(d).map(|name| quote!(#name::MERGE)),
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
fn builder(f: &Field, names: &Names<'_>) -> Builder {
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
