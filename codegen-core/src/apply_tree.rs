//! Which types of an API tree get apply configurations from the CLI, and the module of the
//! generated tree that holds them: a plan per source file, which `emit::apply` writes.
//!
//! Kinds marked `+kubebuilder:ac:generate=true` (or in a version whose `mod.rs` says so)
//! get `FooApplyConfiguration`; their spec and status and every struct and enum reachable
//! from them get theirs. The items generated for the types of one source file go in one
//! module, `<group>/<version>/applyconfigurations/<file>.rs`, which imports what that
//! source file imports, so field types read there as in the source: the code is the same
//! as the derive's.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Item, ItemEnum, ItemStruct, Type, UseTree};

use crate::ast::Structs;
use crate::diag::Ctxt;
use crate::source::SourceFile;

/// The apply configurations generated for one source file.
#[derive(Debug, Clone)]
pub(crate) struct ApplyModule {
    /// The file's stem: the module name.
    pub(crate) stem: String,
    /// The source file, relative to the input directory.
    pub(crate) source: std::path::PathBuf,
    /// The source file's module, whose items the generated module imports.
    pub(crate) module: syn::Path,
    /// The source file's `use` items, made absolute, so field types read as in the source.
    pub(crate) imports: Vec<TokenStream>,
    /// The kinds it holds `FooApplyConfiguration` of (with their spec structs), by name.
    pub(crate) kinds: Vec<(crate::model::Resource, syn::Ident)>,
    /// The structs and enums of the file that get theirs, in the order written.
    pub(crate) types: Vec<ApplyType>,
}

/// A type of a source file with an apply configuration.
#[derive(Debug, Clone)]
pub(crate) enum ApplyType {
    /// A struct: its apply configuration.
    Struct(crate::apply_model::AcStruct),
    /// An enum or a tuple struct, applied whole: its own configuration.
    Enum(syn::Ident),
}

enum Wanted<'a> {
    Kind(Box<crate::model::Resource>, &'a ItemStruct),
    Struct(&'a ItemStruct),
    Enum(&'a ItemEnum),
}

/// What a struct of the tree gets: its apply configuration, or, for a tuple struct (a
/// newtype, written as what it holds), itself applied whole as an enum is.
fn struct_type(s: &ItemStruct, own: &BTreeSet<usize>) -> ApplyType {
    if !matches!(s.fields, syn::Fields::Named(_)) {
        return ApplyType::Enum(s.ident.clone());
    }
    let mut ac = crate::apply_model::custom::lower(s);
    ac.own = own.contains(&(std::ptr::from_ref(s) as usize));
    ApplyType::Struct(ac)
}

/// Where each struct and enum is defined: its address to the index of its file.
fn homes(asts: &[Option<syn::File>]) -> BTreeMap<usize, usize> {
    let mut out = BTreeMap::new();
    for (i, ast) in asts.iter().enumerate() {
        for item in ast.iter().flat_map(|a| &a.items) {
            match item {
                Item::Struct(s) => {
                    out.insert(std::ptr::from_ref(s) as usize, i);
                }
                Item::Enum(e) => {
                    out.insert(std::ptr::from_ref(e) as usize, i);
                }
                _ => {}
            }
        }
    }
    out
}

/// The named types of a field's type, through `Option`, `Box`, lists, maps and tuples.
fn named_types(ty: &Type, out: &mut Vec<String>) {
    match ty {
        Type::Path(p) => {
            if let Some(last) = p.path.segments.last() {
                out.push(last.ident.to_string());
                if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                    for a in &args.args {
                        if let syn::GenericArgument::Type(t) = a {
                            named_types(t, out);
                        }
                    }
                }
            }
        }
        Type::Tuple(t) => t.elems.iter().for_each(|e| named_types(e, out)),
        Type::Array(a) => named_types(&a.elem, out),
        Type::Reference(r) => named_types(&r.elem, out),
        _ => {}
    }
}

/// The apply configurations of the CLI-generated kinds `kinds` (resource, file index), as
/// one module per source file; private types they need are reported to that file's `cx`.
pub(crate) fn modules<'a>(
    files: &[SourceFile],
    asts: &'a [Option<syn::File>],
    view: &dyn Fn(usize) -> Option<Structs<'a>>,
    kinds: Vec<(crate::model::Resource, usize)>,
    module_of: &dyn Fn(usize) -> Option<String>,
    cxs: &mut [Ctxt],
) -> BTreeMap<usize, ApplyModule> {
    let homes = homes(asts);
    let mut wanted: BTreeMap<usize, Vec<Wanted<'a>>> = BTreeMap::new();
    let mut seen: BTreeSet<usize> = BTreeSet::new();
    let mut stack: Vec<(&'a ItemStruct, usize)> = Vec::new();
    for (resource, file) in kinds {
        let Some(ast) = asts.get(file).and_then(Option::as_ref) else {
            continue;
        };
        let spec = ast.items.iter().find_map(|i| match i {
            Item::Struct(s) if s.ident == resource.spec_ident => Some(s),
            _ => None,
        });
        let Some(spec) = spec else { continue };
        let status = resource.kube.status.clone();
        wanted
            .entry(file)
            .or_default()
            .push(Wanted::Kind(Box::new(resource), spec));
        seen.insert(std::ptr::from_ref(spec) as usize);
        wanted.entry(file).or_default().push(Wanted::Struct(spec));
        stack.push((spec, file));
        if let (Some(status), Some(structs)) = (&status, view(file)) {
            let name = status.value.rsplit("::").next().unwrap_or(&status.value);
            if let Some(s) = structs.get(name) {
                let home = homes
                    .get(&(std::ptr::from_ref(s) as usize))
                    .copied()
                    .unwrap_or(file);
                if seen.insert(std::ptr::from_ref(s) as usize) {
                    wanted.entry(home).or_default().push(Wanted::Struct(s));
                    stack.push((s, home));
                }
            }
        }
    }
    while let Some((s, file)) = stack.pop() {
        let Some(structs) = view(file) else { continue };
        let mut names = Vec::new();
        // A tuple struct is applied whole: what it holds needs no configuration.
        for f in s
            .fields
            .iter()
            .filter(|_| matches!(s.fields, syn::Fields::Named(_)))
        {
            named_types(&f.ty, &mut names);
        }
        for name in names {
            if let Some(inner) = structs.get(&name) {
                let key = std::ptr::from_ref(inner) as usize;
                let home = homes.get(&key).copied().unwrap_or(file);
                if seen.insert(key) {
                    wanted.entry(home).or_default().push(Wanted::Struct(inner));
                    stack.push((inner, home));
                }
            } else if let Some(e) = structs.get_enum(&name) {
                let key = std::ptr::from_ref(e) as usize;
                let home = homes.get(&key).copied().unwrap_or(file);
                if seen.insert(key) {
                    wanted.entry(home).or_default().push(Wanted::Enum(e));
                }
            }
        }
    }
    let own = own_configurations(&wanted, asts, view);
    let mut out = BTreeMap::new();
    for (file, items) in wanted {
        let (Some(ast), Some(module)) = (asts.get(file).and_then(Option::as_ref), module_of(file))
        else {
            continue;
        };
        let mut kinds = Vec::new();
        let mut types: Vec<(usize, ApplyType)> = Vec::new();
        for w in items {
            match w {
                Wanted::Kind(r, spec) => kinds.push((*r, spec.ident.clone())),
                Wanted::Struct(s) => {
                    private(&mut cxs[file], &s.vis, &s.ident);
                    types.push((position(ast, &s.ident), struct_type(s, &own)));
                }
                Wanted::Enum(e) => {
                    private(&mut cxs[file], &e.vis, &e.ident);
                    types.push((position(ast, &e.ident), ApplyType::Enum(e.ident.clone())));
                }
            }
        }
        kinds.sort_by(|a, b| a.0.ident.cmp(&b.0.ident));
        types.sort_by_key(|(pos, _)| *pos);
        let Ok(glob) = syn::parse_str::<syn::Path>(&module) else {
            continue;
        };
        let stem = files[file]
            .relative
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        out.insert(
            file,
            ApplyModule {
                stem,
                source: files[file].relative.clone(),
                module: glob,
                imports: imports(ast, &module),
                kinds,
                types: types.into_iter().map(|(_, t)| t).collect(),
            },
        );
    }
    out
}

/// Types of k8s-openapi that imported types hold and that are their own apply
/// configuration (every k8s-openapi type is, through `DeepMerge`).
const K8S_LEAVES: &[&str] = &["Time", "MicroTime", "Quantity", "IntOrString"];

/// The structs (by address) that are their own apply configuration, so that
/// `XApplyConfiguration` is an alias of `X` rather than a copy of it with the same fields,
/// derives and codec: structs `kube-codegen import` wrote, which `struct_codec!` reads and
/// writes with no required field (leaving out unset fields, as an apply configuration's
/// codec does), that derive what `Apply` asks for and `Default`, and whose configuration
/// would hold each field's own type: primitives, lists and maps as `held` holds them, enums
/// of the tree, k8s-openapi's leaves, and structs that are their own configuration too.
fn own_configurations<'a>(
    wanted: &BTreeMap<usize, Vec<Wanted<'a>>>,
    asts: &'a [Option<syn::File>],
    view: &dyn Fn(usize) -> Option<Structs<'a>>,
) -> BTreeSet<usize> {
    let address = |s: &ItemStruct| std::ptr::from_ref(s) as usize;
    let mut candidates: BTreeMap<usize, (&'a ItemStruct, usize)> = BTreeMap::new();
    let mut enums: BTreeSet<usize> = BTreeSet::new();
    for (&file, items) in wanted {
        let coded = asts
            .get(file)
            .and_then(Option::as_ref)
            .map(optional_codecs)
            .unwrap_or_default();
        for w in items {
            match w {
                Wanted::Struct(s)
                    if coded.contains(&s.ident.to_string())
                        && derives_all(s, &["Clone", "Debug", "Default", "PartialEq"]) =>
                {
                    candidates.insert(address(s), (s, file));
                }
                Wanted::Enum(e) => {
                    enums.insert(std::ptr::from_ref(*e) as usize);
                }
                _ => {}
            }
        }
    }
    let mut own: BTreeSet<usize> = candidates.keys().copied().collect();
    loop {
        let next: BTreeSet<usize> = own
            .iter()
            .copied()
            .filter(|a| {
                let (s, file) = candidates[a];
                let structs = view(file);
                let is_own = |t: &Type| {
                    let Type::Path(p) = t else { return false };
                    let Some(last) = p.path.segments.last() else {
                        return false;
                    };
                    if !matches!(last.arguments, syn::PathArguments::None) {
                        return false;
                    }
                    let name = last.ident.to_string();
                    match structs.as_ref() {
                        Some(v) if v.get(&name).is_some() => v
                            .get(&name)
                            .is_some_and(|inner| own.contains(&address(inner))),
                        Some(v) if v.get_enum(&name).is_some() => v
                            .get_enum(&name)
                            .is_some_and(|e| enums.contains(&(std::ptr::from_ref(e) as usize))),
                        _ => K8S_LEAVES.contains(&name.as_str()),
                    }
                };
                crate::apply_model::custom::is_own_configuration(s, &is_own)
            })
            .collect();
        if next == own {
            return own;
        }
        own = next;
    }
}

/// The structs of a file that `kube_codegen_runtime::struct_codec!` reads and writes with
/// no field marked `required`.
fn optional_codecs(ast: &syn::File) -> BTreeSet<String> {
    use proc_macro2::TokenTree;
    ast.items
        .iter()
        .filter_map(|item| {
            let Item::Macro(m) = item else { return None };
            m.mac
                .path
                .segments
                .last()
                .filter(|s| s.ident == "struct_codec")?;
            let mut tokens = m.mac.tokens.clone().into_iter();
            let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(fields))) =
                (tokens.next(), tokens.next())
            else {
                return None;
            };
            let required = fields
                .stream()
                .into_iter()
                .any(|t| matches!(&t, TokenTree::Ident(i) if i == "required"));
            (!required).then(|| name.to_string())
        })
        .collect()
}

/// Whether `s` derives each of `traits` (by the last segment of the derive's path).
fn derives_all(s: &ItemStruct, traits: &[&str]) -> bool {
    let mut found = BTreeSet::new();
    for attr in s.attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|m| {
            if let Some(last) = m.path.segments.last() {
                found.insert(last.ident.to_string());
            }
            Ok(())
        });
    }
    traits.iter().all(|t| found.contains(*t))
}

fn position(ast: &syn::File, ident: &syn::Ident) -> usize {
    ast.items
        .iter()
        .position(|i| match i {
            Item::Struct(s) => &s.ident == ident,
            Item::Enum(e) => &e.ident == ident,
            _ => false,
        })
        .unwrap_or(usize::MAX)
}

fn private(cx: &mut Ctxt, vis: &syn::Visibility, ident: &syn::Ident) {
    if matches!(vis, syn::Visibility::Inherited) {
        cx.error(
            ident.span(),
            format!(
                "`{ident}` is private, but the apply configurations generated for `+kubebuilder:ac:generate` name it from the generated tree; make it `pub`"
            ),
        );
    }
}

/// The `use` items of a source file, with `self::` and `super::` made absolute from
/// `module` (the file's module path), so they mean the same in the generated module.
fn imports(ast: &syn::File, module: &str) -> Vec<TokenStream> {
    let segments: Vec<&str> = module.split("::").collect();
    let local_mods: BTreeSet<String> = ast
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    ast.items
        .iter()
        .filter_map(|i| match i {
            Item::Use(u) => Some(u),
            _ => None,
        })
        .filter_map(|u| {
            let tree = absolute(&u.tree, &segments, &local_mods)?;
            let leading = u.leading_colon;
            Some(quote!(use #leading #tree;))
        })
        .collect()
}

/// `tree` with a leading `self`/`super` chain (or a module declared in the file) replaced by
/// the absolute path it means in `module`.
fn absolute(tree: &UseTree, module: &[&str], local: &BTreeSet<String>) -> Option<TokenStream> {
    let mut depth = module.len();
    let mut t = tree;
    let mut relative = false;
    loop {
        match t {
            UseTree::Path(p) if p.ident == "super" => {
                depth = depth.checked_sub(1)?;
                relative = true;
                t = &p.tree;
            }
            UseTree::Path(p) if p.ident == "self" => {
                relative = true;
                t = &p.tree;
            }
            UseTree::Path(p) if !relative && local.contains(&p.ident.to_string()) => {
                relative = true;
                break;
            }
            _ => break,
        }
    }
    if !relative {
        return Some(quote!(#tree));
    }
    let prefix: Vec<syn::Ident> = module[..depth]
        .iter()
        .map(|s| {
            let plain = s.trim_start_matches("r#");
            if s.starts_with("r#") {
                syn::Ident::new_raw(plain, Span::call_site())
            } else {
                syn::Ident::new(plain, Span::call_site())
            }
        })
        .collect();
    Some(quote!(#(#prefix::)* #t))
}
