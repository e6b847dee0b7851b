//! Reading: each file of the tree parsed, its structs' markers checked where they are
//! defined, and its kinds (custom resources, built-in aliases) read into their version
//! directory, with the Rust module they are imported from.

use std::collections::BTreeMap;
use std::path::Path;

use proc_macro2::Span;
use syn::Item;

use super::TreeResource;
use crate::ast::{Layer, Structs};
use crate::attr::package::PackageAttrs;
use crate::diag::Ctxt;
use crate::model::{self, Origin, Resource};
use crate::schema::Memo;
use crate::source::SourceFile;

/// The tree as parsed: its files, their syntax (`None` where a file does not parse), where
/// a struct's name is looked up (its file, its version directory, the whole tree), and the
/// Rust path of the input directory (`crate::apis`).
pub(super) struct Parsed<'a> {
    /// The input files.
    pub(super) files: &'a [SourceFile],
    /// Their syntax, in the same order.
    pub(super) asts: &'a [Option<syn::File>],
    /// The Rust path of the input directory.
    pub(super) api_module: &'a str,
    by_version: BTreeMap<(String, String), Layer<'a>>,
    everywhere: Layer<'a>,
}

impl<'a> Parsed<'a> {
    /// The layers of names of every file inside a version directory.
    pub(super) fn new(
        files: &'a [SourceFile],
        asts: &'a [Option<syn::File>],
        api_module: &'a str,
    ) -> Self {
        let mut by_version: BTreeMap<(String, String), Layer<'a>> = BTreeMap::new();
        let mut everywhere = Layer::default();
        for (file, ast) in files.iter().zip(asts) {
            if let (Some(key), Some(ast)) = (version_dir(file), ast) {
                by_version.entry(key).or_default().extend(&ast.items);
                everywhere.extend(&ast.items);
            }
        }
        Self {
            files,
            asts,
            api_module,
            by_version,
            everywhere,
        }
    }

    /// The structs a file's types may name: its own, its version's, the tree's.
    pub(super) fn view(&self, file: &SourceFile, ast: &'a syn::File) -> Structs<'a> {
        let mut structs = Structs::new(&ast.items, None);
        if let Some(layer) = version_dir(file).and_then(|k| self.by_version.get(&k)) {
            structs = structs.with_layer(layer.clone());
        }
        structs.with_layer(self.everywhere.clone())
    }
}

/// Every struct's markers, checked once, in the file that defines it.
pub(super) fn check_markers<'a>(parsed: &Parsed<'a>, memo: &mut Memo<'a>, cxs: &mut [Ctxt]) {
    for ((file, ast), cx) in parsed.files.iter().zip(parsed.asts).zip(cxs) {
        let Some(ast) = ast.as_ref().filter(|_| version_dir(file).is_some()) else {
            continue;
        };
        let structs = parsed.view(file, ast);
        for item in &ast.items {
            if let Item::Struct(s) = item {
                crate::schema::check_struct(cx, s, &structs, memo);
            }
        }
    }
}

/// The Rust module path of a file of the tree (`crate::apis::<group>::<version>::<file>`):
/// each directory and the file are modules of the user's crate, keywords written raw
/// (`r#type`); a name that cannot be a module is the error.
pub(super) fn file_module(file: &SourceFile, api_module: &str) -> Result<String, String> {
    let parent = file.relative.parent().unwrap_or(Path::new(""));
    let mut names: Vec<(String, &str)> = parent
        .iter()
        .map(|c| (c.to_string_lossy().into_owned(), "directory"))
        .collect();
    if file.relative.file_name().is_none_or(|n| n != "mod.rs") {
        let stem = file.relative.file_stem().unwrap_or_default();
        names.push((stem.to_string_lossy().into_owned(), "file"));
    }
    let mut module: Vec<String> = vec![api_module.to_owned()];
    for (name, what) in names {
        match crate::naming::module_segment(&name) {
            Ok(segment) => module.push(segment),
            Err(why) => {
                return Err(format!(
                    "{what} `{name}` cannot be a Rust module: {why}; rename it"
                ));
            }
        }
    }
    Ok(module.join("::"))
}

/// `(group, version)` of a file inside `<group>/<version>/`.
pub(super) fn version_dir(file: &SourceFile) -> Option<(String, String)> {
    let dirs: Vec<String> = file
        .relative
        .parent()?
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    (dirs.len() >= 2).then(|| (dirs[0].clone(), dirs[1].clone()))
}

/// What one version directory holds: its package markers and its kinds, each with the
/// index of its file.
#[derive(Default)]
pub(super) struct VersionDir {
    /// The version module's `//!` markers.
    pub(super) package: Option<(usize, PackageAttrs)>,
    /// Kinds with clients.
    pub(super) resources: Vec<(usize, TreeResource, VersionSpans)>,
    /// Custom resources without a client: only their CRD is generated.
    pub(super) crd_only: Vec<(usize, TreeResource, VersionSpans)>,
    /// Apply configurations, one module per source file.
    pub(super) apply: Vec<crate::apply_tree::ApplyModule>,
}

/// Where a kind's group and version are written, for diagnostics across files.
pub(super) struct VersionSpans {
    /// The group.
    pub(super) group: Span,
    /// The version.
    pub(super) version: Span,
}

/// The package markers and kinds of every file, by (group dir, version dir).
pub(super) fn kinds<'a>(
    parsed: &Parsed<'a>,
    memo: &mut Memo<'a>,
    cxs: &mut [Ctxt],
) -> BTreeMap<(String, String), VersionDir> {
    let mut reader = Reader {
        api_module: parsed.api_module,
        memo,
        versions: BTreeMap::new(),
    };
    for (index, (file, ast)) in parsed.files.iter().zip(parsed.asts).enumerate() {
        if let Some(ast) = ast {
            let structs = parsed.view(file, ast);
            let at = FileAt {
                index,
                file,
                ast,
                structs: &structs,
            };
            reader.read(&mut cxs[index], &at);
        }
    }
    reader.versions
}

/// One file of the tree as it is read: its index, its text, its syntax and the structs its
/// types may name.
struct FileAt<'t, 'a> {
    /// The index of the file in the input.
    index: usize,
    /// The file.
    file: &'t SourceFile,
    /// Its syntax.
    ast: &'a syn::File,
    /// The structs its types may name.
    structs: &'t Structs<'a>,
}

/// Reads files into their version directories.
struct Reader<'m, 'a> {
    /// The Rust path of the input directory (`crate::apis`).
    api_module: &'m str,
    /// Each struct's markers, checked once.
    memo: &'m mut Memo<'a>,
    /// (group dir, version dir) -> what it holds.
    versions: BTreeMap<(String, String), VersionDir>,
}

impl<'a> Reader<'_, 'a> {
    /// The package markers and kinds of one file.
    fn read(&mut self, cx: &mut Ctxt, at: &FileAt<'_, 'a>) {
        let (file, ast) = (at.file, at.ast);
        let dirs: Vec<String> = file
            .relative
            .parent()
            .map(|p| p.iter().map(|c| c.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let is_mod = file.relative.file_name().is_some_and(|n| n == "mod.rs");
        let has_items = ast
            .items
            .iter()
            .any(|i| matches!(i, Item::Struct(_) | Item::Enum(_)));
        if dirs.len() < 2 {
            // Only `<group>/<version>/...` holds API types; a root `mod.rs` is just glue.
            if has_items && ast.items.iter().any(is_client_item) {
                cx.error(
                    Span::call_site(),
                    format!(
                        "`{}` is not inside `<group>/<version>/`; API types go in a version directory such as `samplecontroller/v1alpha1/`",
                        file.relative.display()
                    ),
                );
            }
            return;
        }
        let key = (dirs[0].clone(), dirs[1].clone());
        let entry = self.versions.entry(key).or_default();
        if is_mod && dirs.len() == 2 {
            entry.package = Some((at.index, PackageAttrs::from_attrs(cx, &ast.attrs)));
        }
        let module = match file_module(file, self.api_module) {
            Ok(module) => module,
            Err(why) => {
                let has_types = ast
                    .items
                    .iter()
                    .any(|i| matches!(i, Item::Struct(_) | Item::Enum(_) | Item::Type(_)));
                if has_types {
                    cx.error(Span::call_site(), why);
                }
                return;
            }
        };
        for item in &ast.items {
            read_item(cx, at, &module, item, self.memo, entry);
        }
    }
}

/// One item of a file: a kind (a custom resource, or a built-in kind's alias) goes `into` its
/// version directory, imported from `module`.
fn read_item<'a>(
    cx: &mut Ctxt,
    at: &FileAt<'_, 'a>,
    module: &str,
    item: &'a Item,
    memo: &mut Memo<'a>,
    into: &mut VersionDir,
) {
    if let Item::Type(alias) = item {
        if let Some(resource) = crate::builtin::resource_from_alias(cx, alias) {
            let spans = VersionSpans {
                group: alias.ident.span(),
                version: alias.ident.span(),
            };
            into.resources.push((
                at.index,
                TreeResource {
                    resource,
                    module: module.to_owned(),
                    in_place: false,
                    patches: Vec::new(),
                    origins: Vec::new(),
                    file: at.index,
                    skip_version: false,
                },
                spans,
            ));
        }
        return;
    }
    let input: syn::DeriveInput = match item {
        Item::Struct(s) => s.clone().into(),
        Item::Enum(e) => e.clone().into(),
        Item::Union(u) => u.clone().into(),
        _ => return,
    };
    let in_place = derives(&input.attrs, "GenClient");
    let crd_only = !in_place && derives(&input.attrs, "CustomResource") && !is_client_item(item);
    let origin = if in_place || crd_only {
        Origin::Derive
    } else {
        Origin::Cli
    };
    if let Some(resource) = model::resource_from_input(cx, &input, origin) {
        let mut markers = crate::schema::Markers::default();
        if let Item::Struct(spec) = item {
            crate::check::run(cx, &resource, spec, at.structs);
            markers = crate::schema::resource_patches(cx, spec, &resource, at.structs, memo, false);
        }
        let spans = kube_spans(&resource, &input);
        let list = if crd_only {
            &mut into.crd_only
        } else {
            &mut into.resources
        };
        list.push((
            at.index,
            TreeResource {
                resource,
                module: module.to_owned(),
                in_place,
                patches: markers.patches,
                origins: markers.origins,
                file: at.index,
                skip_version: markers.skip_version,
            },
            spans,
        ));
    }
}

/// Whether an item is marked for a client: `GenClient`, `#[genclient]` or `+genclient`.
fn is_client_item(item: &Item) -> bool {
    let attrs = match item {
        Item::Struct(s) => &s.attrs,
        Item::Enum(e) => &e.attrs,
        _ => return false,
    };
    derives(attrs, "GenClient") || attrs.iter().any(|a| a.path().is_ident("genclient")) || {
        let mut marked = false;
        crate::attr::genclient::for_each_marker(attrs, |text, _| {
            marked |= text.starts_with("+genclient")
        });
        marked
    }
}

/// Whether `#[derive(...)]` lists a path ending in `name`.
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                found |= m.path.segments.last().is_some_and(|s| s.ident == name);
                Ok(())
            });
            found
        })
}

/// The spans of `group` and `version` in `#[kube]`, for cross-file diagnostics.
fn kube_spans(resource: &Resource, input: &syn::DeriveInput) -> VersionSpans {
    let kube = &resource.kube;
    VersionSpans {
        group: kube.group.as_ref().map_or(input.ident.span(), |g| g.span),
        version: kube.version.as_ref().map_or(input.ident.span(), |v| v.span),
    }
}

/// Apply configurations: kinds marked, or in a version marked, `+kubebuilder:ac:generate`;
/// built-in kinds whose client applies, when the API's table has their shape. The custom
/// kinds whose apply configurations the tree writes, with their files.
pub(super) fn apply_kinds(
    versions: &mut BTreeMap<(String, String), VersionDir>,
) -> Vec<(Resource, usize)> {
    let mut ac_kinds = Vec::new();
    for dir in versions.values_mut() {
        let package = dir
            .package
            .as_ref()
            .is_some_and(|(_, p)| p.apply_configurations);
        for (file, tr, _) in &mut dir.resources {
            // A derive kind sees only its own attributes: the package marker cannot reach
            // it, so its apply configurations come from its own marker alone.
            tr.resource.apply_configuration |= package && !tr.in_place;
            if tr.resource.builtin {
                let applies = tr.resource.verbs.iter().any(|v| {
                    matches!(
                        v,
                        crate::model::Verb::Apply | crate::model::Verb::ApplyStatus
                    )
                });
                tr.resource.apply_configuration =
                    applies && crate::apply_model::builtin::kind_type(&tr.resource).is_some();
            }
            if tr.resource.apply_configuration && !tr.in_place && !tr.resource.builtin {
                ac_kinds.push((tr.resource.clone(), *file));
            }
        }
    }
    ac_kinds
}

/// The apply configurations of `kinds` and of the types they reach, one module per source
/// file, added to the version directories of those files.
pub(super) fn add_apply_modules(
    parsed: &Parsed<'_>,
    kinds: Vec<(Resource, usize)>,
    versions: &mut BTreeMap<(String, String), VersionDir>,
    cxs: &mut [Ctxt],
) {
    let files = parsed.files;
    let view_of = |i: usize| {
        let ast = parsed.asts.get(i)?.as_ref()?;
        version_dir(&files[i])?;
        Some(parsed.view(&files[i], ast))
    };
    let module_of = |i: usize| file_module(&files[i], parsed.api_module).ok();
    let modules = crate::apply_tree::modules(files, parsed.asts, &view_of, kinds, &module_of, cxs);
    for (file, module) in modules {
        if let Some(key) = version_dir(&files[file])
            && let Some(dir) = versions.get_mut(&key)
        {
            dir.apply.push(module);
        }
    }
}
