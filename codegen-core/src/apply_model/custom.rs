//! Apply configurations of custom resources' Rust types, lowered from syn.
//!
//! Every field is optional and skipped when unset, so that a field manager applies exactly
//! what it sets. A field's type follows its list, map and struct type, as server-side apply
//! merges it: a `+listType=map` list holds the items' apply configurations, other lists
//! (atomic, set) hold whole items; a map holds its values' apply configurations unless
//! `+mapType=atomic`; a struct-typed field holds the struct's apply configuration unless
//! `+structType=atomic`. A struct reaches the apply configuration of another type through
//! `kube_codegen_runtime::apply::Apply`, so the derive and the CLI write the same code.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemStruct, Type};

use super::{AcField, AcStruct, Builder, Reached};
use crate::ast;
use crate::attr::marker;

const PRIMITIVES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64", "bool", "char", "String", "str", "Value",
];

fn rt() -> TokenStream {
    quote!(::kube_codegen_runtime)
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

/// What the source says about one field.
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

fn fields(s: &ItemStruct) -> Vec<Field<'_>> {
    ast::Container::read(s)
        .fields
        .into_iter()
        .filter_map(|f| {
            let json = f.json?;
            let markers = marker::read_checked_elsewhere(&f.syn.attrs);
            let value = |name: &str| {
                markers
                    .iter()
                    .find(|m| m.name == name)
                    .and_then(|m| m.value.clone())
            };
            Some(Field {
                ident: f.ident.clone(),
                json,
                ty: f.ty,
                list_map: value("listType").as_deref() == Some("map"),
                list_type: value("listType"),
                map_atomic: value("mapType").as_deref() == Some("atomic"),
                struct_atomic: value("structType").as_deref() == Some("atomic"),
                flatten: f.flatten,
                docs: prose(&f.syn.attrs),
            })
        })
        .collect()
}

/// The apply configuration of a leaf type: itself when primitive, otherwise through `Apply`.
fn leaf(ty: &Type) -> TokenStream {
    let ty = ast::inner(ty);
    // A list or map inside a map's values or a list's items is held as it is.
    if is_primitive(ty) || container(ty).is_some() {
        ty.to_token_stream()
    } else {
        let rt = rt();
        // Spanned at the type, so a type without one is reported where the user wrote it.
        quote_spanned!(ty.span()=> <#ty as #rt::apply::Apply>::Configuration)
    }
}

/// What the field holds in the apply configuration (without the outer `Option`).
fn held(f: &Field<'_>) -> TokenStream {
    let ty = ast::inner(f.ty);
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

/// The types of a field that must have an apply configuration of their own: those [`held`]
/// reaches through `Apply`.
fn reached<'a>(f: &Field<'a>) -> Vec<&'a Type> {
    let ty = ast::inner(f.ty);
    let needs = |t: &'a Type| {
        let t = ast::inner(t);
        (!is_primitive(t) && container(t).is_none()).then_some(t)
    };
    let args = generic_args(ty);
    match last_ident(ty).unwrap_or_default().as_str() {
        "Vec" | "VecDeque" if f.list_map => {
            args.first().and_then(|t| needs(t)).into_iter().collect()
        }
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => Vec::new(),
        "HashMap" | "BTreeMap" if !f.map_atomic && args.len() == 2 => {
            needs(args[1]).into_iter().collect()
        }
        "HashMap" | "BTreeMap" => Vec::new(),
        _ if f.struct_atomic || !matches!(ty, Type::Path(_)) => Vec::new(),
        _ => needs(ty).into_iter().collect(),
    }
}

/// For the derive: one check per type a struct's apply configuration reaches through
/// `Apply`, spanned at the type and emitted before the rest, so that a type without
/// `#[derive(ApplyConfiguration)]` is first reported where the field names it, with the
/// advice of `Apply`'s message, instead of through the projections that use it.
pub(crate) fn reached_checks(s: &ItemStruct) -> TokenStream {
    let rt = rt();
    let fields = fields(s);
    let checks: Vec<TokenStream> = fields
        .iter()
        .flat_map(reached)
        .map(|ty| quote_spanned!(ty.span()=> Reached<#ty>,))
        .collect();
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote! {
        const _: () = {
            #[allow(dead_code)]
            struct Reached<T: #rt::apply::Apply>(::core::marker::PhantomData<T>);
            #[allow(dead_code)]
            struct Fields(#(#checks)*);
        };
    }
}

/// How the builder of a field adds to it: lists append, maps merge, the rest is set.
fn builder(f: &Field<'_>) -> Builder {
    let ty = ast::inner(f.ty);
    let name = last_ident(ty).unwrap_or_default();
    let args = generic_args(ty);
    if f.flatten {
        return Builder::Flatten;
    }
    if matches!(name.as_str(), "Vec" | "VecDeque" | "HashSet" | "BTreeSet") {
        let item = match (f.list_map, args.first()) {
            (true, Some(t)) => leaf(t),
            (_, Some(t)) => t.to_token_stream(),
            _ => quote!(()),
        };
        return Builder::Append { item };
    }
    if matches!(name.as_str(), "HashMap" | "BTreeMap") && args.len() == 2 {
        let value = if f.map_atomic {
            args[1].to_token_stream()
        } else {
            leaf(args[1])
        };
        return Builder::Entries {
            key: Some(args[0].to_token_stream()),
            value,
        };
    }
    Builder::Set
}

/// The merge of a leaf type: the type's own (`None`: a primitive, replaced whole).
fn leaf_merge(ty: &Type) -> Option<TokenStream> {
    let ty = ast::inner(ty);
    let rt = rt();
    match container(ty) {
        // Nested maps merge key by key (a map's default); nested lists are atomic.
        Some(true) => Some(quote!(#rt::apply::Merge::ENTRIES)),
        Some(false) => None,
        None => (!is_primitive(ty))
            .then(|| quote_spanned!(ty.span()=> <#ty as #rt::apply::Apply>::MERGE)),
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

/// How server-side apply merges a field (`None`: whole), as [`held`] holds it; for a
/// flattened field, how its struct merges the fields it brings.
fn merge(f: &Field<'_>) -> Option<TokenStream> {
    let rt = rt();
    let ty = ast::inner(f.ty);
    if f.flatten {
        return leaf_merge(f.ty);
    }
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

/// The apply configuration of a struct of an API.
pub(crate) fn lower(s: &ItemStruct) -> AcStruct {
    let fields = fields(s)
        .iter()
        .map(|f| AcField {
            ident: f.ident.clone(),
            json: f.json.clone(),
            docs: f.docs.clone(),
            held: held(f),
            builder: Some(builder(f)),
            merge: merge(f),
            flatten: f.flatten,
        })
        .collect();
    AcStruct {
        ident: format_ident!("{}ApplyConfiguration", s.ident),
        vis: s.vis.clone(),
        doc: format!(
            " The fields of a `{}` a field manager applies: every field optional, left out when unset.",
            s.ident
        ),
        fields,
        reached: Reached::Apply(s.ident.clone()),
        own: false,
    }
}

/// Whether `s` may be its own apply configuration, given which named types are (`own`):
/// every field is an `Option` of a type not wrapped again, none is flattened or left out of
/// JSON, and for each the configuration would hold the field's own type, not another's
/// configuration.
pub(crate) fn is_own_configuration(s: &ItemStruct, own: &dyn Fn(&Type) -> bool) -> bool {
    let fields = fields(s);
    fields.len() == s.fields.len()
        && fields
            .iter()
            .all(|f| optional_once(f.ty) && !f.flatten && holds_itself(f, own))
}

/// `Option<T>`, with `T` neither an `Option` nor a `Box`.
fn optional_once(ty: &Type) -> bool {
    let args = generic_args(ty);
    last_ident(ty).as_deref() == Some("Option")
        && args.len() == 1
        && !matches!(last_ident(args[0]).as_deref(), Some("Option" | "Box"))
}

/// Whether what [`held`] holds for `f` is the field's own type, given which named types are
/// their own configuration (`own`).
fn holds_itself(f: &Field<'_>, own: &dyn Fn(&Type) -> bool) -> bool {
    let ty = ast::inner(f.ty);
    let itself = |t: &Type| {
        let inner = ast::inner(t);
        std::ptr::eq(inner, t) && (is_primitive(t) || container(t).is_some() || own(t))
    };
    let args = generic_args(ty);
    match last_ident(ty).unwrap_or_default().as_str() {
        "Vec" | "VecDeque" if f.list_map => args.first().is_some_and(|t| itself(t)),
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => true,
        "HashMap" | "BTreeMap" if !f.map_atomic && args.len() == 2 => itself(args[1]),
        "HashMap" | "BTreeMap" => true,
        _ if f.struct_atomic || is_primitive(ty) || !matches!(ty, Type::Path(_)) => true,
        _ => own(ty),
    }
}
