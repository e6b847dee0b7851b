//! The CLI's view of a whole API tree: `<input>/<group>/<version>/*.rs`, as Go's layout.
//!
//! Every `.rs` file is parsed with syn; structs marked `+genclient` (or `#[genclient]`, or
//! derived with `GenClient`) become resources of their version module. Package markers
//! come from the version module's `//!` docs. The result feeds the per-file emitters.

use std::collections::BTreeMap;
use std::path::Path;

use proc_macro2::Span;
use syn::Item;
use syn::ext::IdentExt;

use crate::ast::{Layer, Structs};
use crate::attr::package::PackageAttrs;
use crate::diag::{Ctxt, Diagnostic};
use crate::model::{self, Origin, Resource};
use crate::naming;
use crate::source::SourceFile;

/// Diagnostics of one file.
#[derive(Debug, Clone)]
pub struct FileDiagnostics {
    /// Index of the file in the input; `None` for a mistake of the tree as a whole.
    pub file: Option<usize>,
    /// Its mistakes.
    pub diagnostics: Vec<Diagnostic>,
}

/// A resource and where its Rust type lives.
#[derive(Debug, Clone)]
pub struct TreeResource {
    /// The validated resource.
    pub resource: Resource,
    /// The module to import the type from (`crate::apis::samplecontroller::v1alpha1`).
    pub module: String,
    /// The type derives `GenClient`, so its client already exists in `module`.
    pub in_place: bool,
    /// What its CRD markers change in the CRD kube builds.
    pub patches: Vec<crate::schema::Patch>,
    /// The marker behind each patch, in the file `file`.
    pub origins: Vec<crate::schema::Origin>,
    /// The index of the file that defines it.
    pub file: usize,
    /// `+kubebuilder:skipversion`: left out of the CRD.
    pub skip_version: bool,
}

/// One API group/version and its resources.
#[derive(Debug, Clone)]
pub struct GroupVersion {
    /// API group.
    pub group: String,
    /// The group's name in accessors (`+groupGoName`, or the group's first label).
    pub group_go_name: String,
    /// API version.
    pub version: String,
    /// Resources, sorted by kind.
    pub resources: Vec<TreeResource>,
    /// Apply configurations of its kinds, one module per source file, sorted by name.
    pub apply: Vec<crate::apply_tree::ApplyModule>,
}

/// One version of a custom resource kind, as a CRD sees it.
#[derive(Debug, Clone)]
pub struct CrdVersion {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// The resource.
    pub resource: TreeResource,
    /// Whether it has a client (then `crd_with_markers()` is generated next to it).
    pub client: bool,
}

/// Every group/version of the input, sorted by group then version.
#[derive(Debug, Clone, Default)]
pub struct ApiTree {
    /// The group/versions whose kinds get clients (`+genclient` or `GenClient`).
    pub versions: Vec<GroupVersion>,
    /// Every version of every custom resource kind, clients or not (a
    /// `#[derive(CustomResource)]` without `+genclient` still has a CRD), sorted by
    /// group, kind, version.
    pub crds: Vec<CrdVersion>,
    /// What is legal but most likely a mistake, per file (the run still succeeds).
    pub warnings: Vec<FileDiagnostics>,
    /// The input files the generated `mod.rs` checks at compile time (empty: no checks).
    pub inputs: Vec<crate::source::Input>,
}

/// Parses and validates the tree; `api_module` is the Rust path of the input directory.
pub fn build(files: &[SourceFile], api_module: &str) -> Result<ApiTree, Vec<FileDiagnostics>> {
    let mut cxs: Vec<Ctxt> = files.iter().map(|_| Ctxt::new()).collect();
    let asts: Vec<Option<syn::File>> = files
        .iter()
        .zip(&mut cxs)
        .map(|(file, cx)| match parse_source(cx, &file.text) {
            Ok(ast) => Some(ast),
            Err(err) => {
                cx.syn_error(err);
                None
            }
        })
        .collect();
    // Where a struct's name is looked up: its file, its version directory, the whole tree.
    let mut by_version: BTreeMap<(String, String), Layer<'_>> = BTreeMap::new();
    let mut everywhere = Layer::default();
    for (file, ast) in files.iter().zip(&asts) {
        if let (Some(key), Some(ast)) = (version_dir(file), ast) {
            by_version.entry(key).or_default().extend(&ast.items);
            everywhere.extend(&ast.items);
        }
    }
    let view = |file: &SourceFile, ast| structs_view(file, ast, &by_version, &everywhere);
    // Every struct's markers, checked once in the file that defines it.
    let mut memo = crate::schema::Memo::default();
    for ((file, ast), cx) in files.iter().zip(&asts).zip(&mut cxs) {
        let Some(ast) = ast.as_ref().filter(|_| version_dir(file).is_some()) else {
            continue;
        };
        let structs = view(file, ast);
        for item in &ast.items {
            if let Item::Struct(s) = item {
                crate::schema::check_struct(cx, s, &structs, &mut memo);
            }
        }
    }
    // (group dir, version dir) -> (package markers, resources)
    let mut versions: BTreeMap<(String, String), VersionDir> = BTreeMap::new();
    for (index, (file, ast)) in files.iter().zip(&asts).enumerate() {
        if let Some(ast) = ast {
            let structs = view(file, ast);
            let cx = &mut cxs[index];
            read_file(
                cx,
                index,
                file,
                ast,
                &structs,
                &mut memo,
                api_module,
                &mut versions,
            );
        }
    }
    // A file with kinds must be a module of the crate, or the generated code cannot use them.
    let with_kinds: std::collections::BTreeSet<usize> = versions
        .values()
        .flat_map(|d| d.resources.iter().chain(&d.crd_only).map(|(i, _, _)| *i))
        .collect();
    let index_of: BTreeMap<&Path, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.relative.as_path(), i))
        .collect();
    for index in with_kinds {
        if let Some(why) = undeclared(files, &asts, &index_of, index) {
            cxs[index].error(Span::call_site(), why);
        }
    }
    // Apply configurations: kinds marked, or in a version marked, `+kubebuilder:ac:generate`;
    // built-in kinds whose client applies, when the API's table has their shape.
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
    let view_of = |i: usize| {
        let ast = asts.get(i)?.as_ref()?;
        version_dir(&files[i])?;
        Some(view(&files[i], ast))
    };
    let module_of = |i: usize| file_module(&files[i], api_module).ok();
    let modules =
        crate::apply_tree::modules(files, &asts, &view_of, ac_kinds, &module_of, &mut cxs);
    for (file, module) in modules {
        if let Some(key) = version_dir(&files[file])
            && let Some(dir) = versions.get_mut(&key)
        {
            dir.apply.push(module);
        }
    }
    let warnings: Vec<FileDiagnostics> = cxs
        .iter_mut()
        .enumerate()
        .map(|(index, cx)| FileDiagnostics {
            file: Some(index),
            diagnostics: cx.take_warnings(),
        })
        .filter(|fd| !fd.diagnostics.is_empty())
        .collect();
    let mut errors: Vec<FileDiagnostics> = cxs
        .into_iter()
        .enumerate()
        .map(|(index, cx)| FileDiagnostics {
            file: Some(index),
            diagnostics: cx.into_diagnostics(),
        })
        .filter(|fd| !fd.diagnostics.is_empty())
        .collect();
    let mut tree = assemble(versions, &mut errors);
    tree.warnings = warnings;
    if errors.is_empty() {
        Ok(tree)
    } else {
        Err(errors)
    }
}

/// The Rust module path of a file of the tree (`crate::apis::<group>::<version>::<file>`):
/// each directory and the file are modules of the user's crate, keywords written raw
/// (`r#type`); a name that cannot be a module is the error.
fn file_module(file: &SourceFile, api_module: &str) -> Result<String, String> {
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

/// Why the module of `files[index]` (or a directory above it) is not reachable from the
/// crate: not declared in its parent's `mod.rs` (or `<dir>.rs`), or declared private. A
/// parent module the input does not hold (the API root, declared in `lib.rs`) is not checked.
fn undeclared(
    files: &[SourceFile],
    asts: &[Option<syn::File>],
    index_of: &BTreeMap<&Path, usize>,
    index: usize,
) -> Option<String> {
    let file = &files[index];
    let mut child = file.relative.with_extension("");
    if file.relative.file_name().is_some_and(|n| n == "mod.rs") {
        child = file.relative.parent()?.to_path_buf();
    }
    loop {
        let name = child.file_name()?.to_string_lossy().into_owned();
        let parent = child.parent().unwrap_or(Path::new(""));
        let declaring = [parent.join("mod.rs"), parent.with_extension("rs")];
        let found = declaring
            .iter()
            .find_map(|d| index_of.get(d.as_path()))
            .map(|&i| (&files[i], &asts[i]));
        let Some((decl_file, Some(decl_ast))) = found else {
            return None;
        };
        let module = decl_ast.items.iter().find_map(|i| match i {
            Item::Mod(m) if m.ident.unraw() == name => Some(m),
            _ => None,
        });
        match module {
            None => {
                return Some(format!(
                    "`{}` is not declared in `{}` (add `pub mod {};`): its types are not part of the crate, so the generated code could not use them",
                    child.display(),
                    decl_file.relative.display(),
                    crate::naming::ident(&name)
                ));
            }
            Some(m) if matches!(m.vis, syn::Visibility::Inherited) => {
                return Some(format!(
                    "`mod {};` in `{}` is private: the generated code cannot reach the types of `{}`; make it `pub mod`",
                    m.ident,
                    decl_file.relative.display(),
                    child.display()
                ));
            }
            Some(_) => {}
        }
        if parent.as_os_str().is_empty() {
            return None;
        }
        child = parent.to_path_buf();
    }
}

/// How deep brackets may nest in an API file. Deeper input is refused with a diagnostic
/// before it reaches the parser, whose recursion it would otherwise overflow.
pub const MAX_NESTING: usize = 128;

/// Parses one file of the tree: markers in line comments are read like doc comments (see
/// [`line_comment_markers`]), and input nested deeper than [`MAX_NESTING`] is refused.
fn parse_source(cx: &mut Ctxt, text: &str) -> Result<syn::File, syn::Error> {
    if let Some((line, column)) = too_deep(text) {
        return Err(syn::Error::new(
            Span::call_site(),
            format!(
                "brackets nest more than {MAX_NESTING} levels deep at line {line}, column {column}; kube-codegen reads API types nested up to {MAX_NESTING} levels"
            ),
        ));
    }
    let text = line_comment_markers(cx, text);
    syn::parse_file(&text)
}

/// Where brackets first nest deeper than [`MAX_NESTING`], skipping comments, strings and
/// character literals: `(line, column)`, 1-based. `(`, `[` and `{` always count; `<` counts
/// when it opens generics (right after a name or `::`, as in `Vec<`), and `>` closes one only
/// then, so comparisons and arrows do not.
pub fn too_deep(text: &str) -> Option<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut open: Vec<char> = Vec::new();
    let (mut line, mut line_start) = (1usize, 0usize);
    let mut prev = ' ';
    let mut i = 0;
    // Index of the first `end` at or after `from` (or the end of the text).
    let find = |from: usize, end: &dyn Fn(usize) -> bool| {
        (from..chars.len()).find(|&j| end(j)).unwrap_or(chars.len())
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let skip_to = match c {
            '/' if next == Some('/') => Some(find(i, &|j| chars[j] == '\n')),
            '/' if next == Some('*') => {
                Some(find(i + 2, &|j| chars[j] == '/' && chars[j - 1] == '*'))
            }
            '"' => Some(find(i + 1, &|j| chars[j] == '"' && chars[j - 1] != '\\')),
            // `'x'` and `'\n'`, not lifetimes (`'a`).
            '\'' if next == Some('\\') => Some(find(i + 2, &|j| chars[j] == '\'')),
            '\'' if chars.get(i + 2) == Some(&'\'') => Some(i + 2),
            _ => None,
        };
        if let Some(end) = skip_to {
            for (j, ch) in chars.iter().enumerate().take(end.min(chars.len())).skip(i) {
                if *ch == '\n' {
                    line += 1;
                    line_start = j + 1;
                }
            }
            i = end + 1;
            prev = ' ';
            continue;
        }
        match c {
            '\n' => {
                line += 1;
                line_start = i + 1;
            }
            '(' | '[' | '{' => open.push(c),
            '<' if prev.is_alphanumeric() || prev == '_' || prev == ':' => open.push('<'),
            '>' if prev != '-' && prev != '=' && open.last() == Some(&'<') => {
                open.pop();
            }
            ')' | ']' | '}' => {
                // Drop generics left open by a comparison, then the bracket itself.
                while open.last() == Some(&'<') {
                    open.pop();
                }
                open.pop();
            }
            _ => {}
        }
        if open.len() > MAX_NESTING {
            return Some((line, i - line_start + 1));
        }
        prev = c;
        i += 1;
    }
    None
}

/// Go writes markers in line comments (`// +genclient`); so may API types here. A marker line
/// comment directly above an item or field is read as if it were a doc comment (`// +x` and
/// `///+x` have the same length, so positions do not move); one at the top of a file, above
/// everything, is a package marker (`//!`). A marker comment attached to nothing is an
/// error rather than ignored. (The derive only sees `///` doc comments: rustc drops the rest.)
fn line_comment_markers(cx: &mut Ctxt, text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is_marker = |l: &str| {
        let t = l.trim_start();
        t.starts_with("// +") && t[4..].starts_with(|c: char| c.is_ascii_alphabetic())
    };
    if !lines.iter().any(|l| is_marker(l)) {
        return text.to_owned();
    }
    let kind = |l: &str| {
        let t = l.trim();
        if t.is_empty() {
            "blank"
        } else if t.starts_with("//") || t.starts_with("#[") || t.starts_with("#!") {
            "comment"
        } else if t.starts_with('}') || t.starts_with(')') || t.starts_with(']') {
            "close"
        } else {
            "code"
        }
    };
    let first_code = lines
        .iter()
        .position(|l| kind(l) == "code")
        .unwrap_or(lines.len());
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        if !is_marker(l) {
            out.push_str(l);
            continue;
        }
        // What the comment block this line is in stands above.
        let below = lines[i + 1..]
            .iter()
            .map(|l| kind(l))
            .find(|k| *k != "comment");
        let at = l.find("// +").unwrap_or(0);
        let (head, tail) = l.split_at(at);
        if i < first_code
            && !lines[..i].iter().any(|l| l.trim_start().starts_with("///"))
            && is_package_marker(tail)
        {
            out.push_str(head);
            out.push_str("//!");
            out.push_str(&tail[3..]);
        } else if below == Some("code") {
            out.push_str(head);
            out.push_str("///");
            out.push_str(&tail[3..]);
        } else {
            cx.error(
                Span::call_site(),
                format!(
                    "line {}: `{}` is not directly above an item or field, so it applies to nothing; move it right above the type or field it is for",
                    i + 1,
                    tail.trim_end()
                ),
            );
            out.push_str(l);
        }
    }
    out
}

/// Markers about a package (a version module) rather than an item.
fn is_package_marker(comment: &str) -> bool {
    let marker = comment.trim_start_matches("// +");
    [
        "groupName",
        "groupGoName",
        "versionName",
        "k8s:",
        "kubebuilder:object:generate",
    ]
    .iter()
    .any(|m| marker.starts_with(m))
}

/// The structs a file's types may name: its own, its version's, the tree's.
fn structs_view<'a>(
    file: &SourceFile,
    ast: &'a syn::File,
    by_version: &BTreeMap<(String, String), Layer<'a>>,
    everywhere: &Layer<'a>,
) -> Structs<'a> {
    let mut structs = Structs::new(&ast.items, None);
    if let Some(layer) = version_dir(file).and_then(|k| by_version.get(&k)) {
        structs = structs.with_layer(layer.clone());
    }
    structs.with_layer(everywhere.clone())
}

/// `(group, version)` of a file inside `<group>/<version>/`.
fn version_dir(file: &SourceFile) -> Option<(String, String)> {
    let dirs: Vec<String> = file
        .relative
        .parent()?
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    (dirs.len() >= 2).then(|| (dirs[0].clone(), dirs[1].clone()))
}

#[derive(Default)]
struct VersionDir {
    package: Option<(usize, PackageAttrs)>,
    resources: Vec<(usize, TreeResource, VersionSpans)>,
    /// Custom resources without a client: only their CRD is generated.
    crd_only: Vec<(usize, TreeResource, VersionSpans)>,
    /// Apply configurations, one module per source file.
    apply: Vec<crate::apply_tree::ApplyModule>,
}

struct VersionSpans {
    group: Span,
    version: Span,
}

#[allow(clippy::too_many_arguments)] // one file's context, passed through as it is
fn read_file<'a>(
    cx: &mut Ctxt,
    index: usize,
    file: &SourceFile,
    ast: &'a syn::File,
    structs: &Structs<'a>,
    memo: &mut crate::schema::Memo<'a>,
    api_module: &str,
    versions: &mut BTreeMap<(String, String), VersionDir>,
) {
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
    let entry = versions.entry(key).or_default();
    if is_mod && dirs.len() == 2 {
        entry.package = Some((index, PackageAttrs::from_attrs(cx, &ast.attrs)));
    }
    let module = match file_module(file, api_module) {
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
        if let Item::Type(alias) = item {
            if let Some(resource) = crate::builtin::resource_from_alias(cx, alias) {
                let spans = VersionSpans {
                    group: alias.ident.span(),
                    version: alias.ident.span(),
                };
                entry.resources.push((
                    index,
                    TreeResource {
                        resource,
                        module: module.clone(),
                        in_place: false,
                        patches: Vec::new(),
                        origins: Vec::new(),
                        file: index,
                        skip_version: false,
                    },
                    spans,
                ));
            }
            continue;
        }
        let input: syn::DeriveInput = match item {
            Item::Struct(s) => s.clone().into(),
            Item::Enum(e) => e.clone().into(),
            Item::Union(u) => u.clone().into(),
            _ => continue,
        };
        let in_place = derives(&input.attrs, "GenClient");
        let crd_only =
            !in_place && derives(&input.attrs, "CustomResource") && !is_client_item(item);
        let origin = if in_place || crd_only {
            Origin::Derive
        } else {
            Origin::Cli
        };
        if let Some(resource) = model::resource_from_input(cx, &input, origin) {
            let mut markers = crate::schema::Markers::default();
            if let Item::Struct(spec) = item {
                crate::check::run(cx, &resource, spec, structs);
                markers =
                    crate::schema::resource_patches(cx, spec, &resource, structs, memo, false);
            }
            let spans = kube_spans(&resource, &input);
            let list = if crd_only {
                &mut entry.crd_only
            } else {
                &mut entry.resources
            };
            list.push((
                index,
                TreeResource {
                    resource,
                    module: module.clone(),
                    in_place,
                    patches: markers.patches,
                    origins: markers.origins,
                    file: index,
                    skip_version: markers.skip_version,
                },
                spans,
            ));
        }
    }
}

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

/// Adds `d` to the diagnostics of `file`.
fn push(errors: &mut Vec<FileDiagnostics>, file: usize, d: Diagnostic) {
    match errors.iter_mut().find(|e| e.file == Some(file)) {
        Some(e) => e.diagnostics.push(d),
        None => errors.push(FileDiagnostics {
            file: Some(file),
            diagnostics: vec![d],
        }),
    }
}

/// The checked tree: one [`GroupVersion`] per version directory with clients, and every
/// version of every custom resource kind; mistakes go to `errors`.
fn assemble(
    versions: BTreeMap<(String, String), VersionDir>,
    errors: &mut Vec<FileDiagnostics>,
) -> ApiTree {
    let mut out: Vec<GroupVersion> = Vec::new();
    let mut crds: Vec<CrdVersion> = Vec::new();
    for ((group_dir, version_dir), dir) in versions {
        out.extend(version(&group_dir, version_dir, dir, errors, &mut crds));
    }
    out.sort_by(|a, b| (&a.group, &a.version).cmp(&(&b.group, &b.version)));
    check_storage_versions(&mut crds, errors);
    check_group_modules(&out, errors);
    ApiTree {
        versions: out,
        crds,
        warnings: Vec::new(),
        inputs: Vec::new(),
    }
}

/// One version directory: its kinds checked against the directory and each other, its CRD
/// versions added to `crds`; the group/version when it has clients.
fn version(
    group_dir: &str,
    version_dir: String,
    dir: VersionDir,
    errors: &mut Vec<FileDiagnostics>,
    crds: &mut Vec<CrdVersion>,
) -> Option<GroupVersion> {
    let first = dir.resources.first().or(dir.crd_only.first())?;
    let package = dir.package.as_ref().map(|(_, p)| p);
    let marker_group = package.and_then(|p| p.group_name.as_ref());
    let group = marker_group.map_or_else(|| first.1.resource.group.clone(), |g| g.value.clone());
    for (file, r, spans) in dir.resources.iter().chain(&dir.crd_only) {
        if r.resource.group != group {
            let source = if marker_group.is_some() {
                "`+groupName` of its package"
            } else {
                "the other types of its package"
            };
            push(
                errors,
                *file,
                Diagnostic::new(
                    spans.group,
                    format!(
                        "group `{}` differs from `{group}`, the group of {source}; one version directory holds one group",
                        r.resource.group
                    ),
                ),
            );
        }
        if r.resource.version != version_dir {
            push(
                errors,
                *file,
                Diagnostic::new(
                    spans.version,
                    format!(
                        "version `{}` does not match its directory `{group_dir}/{version_dir}/`; move the type or fix the version",
                        r.resource.version
                    ),
                ),
            );
        }
    }
    let client_count = dir.resources.len();
    let mut all: Vec<(bool, &(usize, TreeResource, VersionSpans))> = dir
        .resources
        .iter()
        .chain(&dir.crd_only)
        .enumerate()
        .map(|(i, r)| (i < client_count, r))
        .collect();
    all.sort_by(|a, b| a.1.1.resource.kind.cmp(&b.1.1.resource.kind));
    for pair in all.windows(2) {
        let (file, second, _) = pair[1].1;
        if pair[0].1.1.resource.kind == second.resource.kind {
            push(
                errors,
                *file,
                Diagnostic::new(
                    second.resource.span,
                    format!(
                        "kind `{}` is defined twice in `{group}/{version_dir}`",
                        second.resource.kind
                    ),
                ),
            );
        }
    }
    // A version marked `+kubebuilder:skipversion` is not part of its kind's CRD.
    let in_crd = |r: &TreeResource| !r.resource.builtin && !r.skip_version;
    crds.extend(
        all.iter()
            .filter(|(_, (_, r, _))| in_crd(r))
            .map(|(client, (_, r, _))| CrdVersion {
                group: group.clone(),
                version: version_dir.clone(),
                resource: r.clone(),
                client: *client,
            }),
    );
    if dir.resources.is_empty() {
        return None;
    }
    let marker_go_name = package.and_then(|p| p.group_go_name.as_ref());
    let builtins = dir
        .resources
        .iter()
        .filter(|(_, r, _)| r.resource.builtin)
        .count();
    if builtins != 0 && builtins != dir.resources.len() {
        let (file, r, _) = &dir.resources[0];
        push(
            errors,
            *file,
            Diagnostic::new(
                r.resource.span,
                format!(
                    "`{group_dir}/{version_dir}/` mixes built-in kinds with custom resources; keep built-in kinds in their own group directory"
                ),
            ),
        );
        return None;
    }
    let default_go_name = match crate::builtin::module_group(&group) {
        Some(module) if builtins != 0 => naming::group_go_name(module),
        _ => naming::group_go_name(&group),
    };
    let go_name = marker_go_name.map_or(default_go_name, |g| g.value.clone());
    if !naming::is_ident_like(&go_name) {
        let message = match marker_go_name {
            Some(_) => format!(
                "`+groupGoName={go_name}` is not an identifier; use a name such as `SampleController`"
            ),
            None => format!(
                "the group `{group}` gives the accessor name `{go_name}`, which is not an identifier; add `//! +groupGoName=<Name>` to the version module"
            ),
        };
        let (file, diag) = match (marker_go_name, &dir.package) {
            (Some(marker), Some((file, _))) => (
                *file,
                Diagnostic {
                    span: marker.loc.span,
                    doc_range: marker.loc.doc_range.clone(),
                    message,
                },
            ),
            _ => (
                dir.resources[0].0,
                Diagnostic::new(dir.resources[0].2.group, message),
            ),
        };
        push(errors, file, diag);
        return None;
    }
    let mut resources = dir.resources;
    resources.sort_by(|a, b| a.1.resource.kind.cmp(&b.1.resource.kind));
    let resources = resources.into_iter().map(|(_, r, _)| r).collect();
    let mut apply = dir.apply;
    apply.sort_by(|a, b| a.stem.cmp(&b.stem));
    Some(GroupVersion {
        group,
        group_go_name: go_name,
        version: version_dir,
        resources,
        apply,
    })
}

/// A kind served in several versions is one CRD: exactly one version is stored.
fn check_storage_versions(crds: &mut [CrdVersion], errors: &mut Vec<FileDiagnostics>) {
    crds.sort_by(|a, b| {
        (&a.group, &a.resource.resource.kind, &a.version).cmp(&(
            &b.group,
            &b.resource.resource.kind,
            &b.version,
        ))
    });
    for same in crds
        .chunk_by(|a, b| a.group == b.group && a.resource.resource.kind == b.resource.resource.kind)
    {
        let stored: Vec<&CrdVersion> = same
            .iter()
            .filter(|c| c.resource.resource.storage_version)
            .collect();
        check_conversion(same, errors);
        if same.len() < 2 || stored.len() == 1 {
            continue;
        }
        let (kind, group) = (&same[0].resource.resource.kind, &same[0].group);
        let list: Vec<&str> = same.iter().map(|c| c.version.as_str()).collect();
        let (message, at) = if stored.is_empty() {
            let message = format!(
                "kind `{kind}` of `{group}` has versions {} but none is marked `+kubebuilder:storageversion`; mark the one stored",
                list.join(", ")
            );
            (message, same.iter().collect::<Vec<_>>())
        } else {
            let message = format!(
                "kind `{kind}` of `{group}` has {} versions marked `+kubebuilder:storageversion`; keep exactly one",
                stored.len()
            );
            (message, stored)
        };
        for c in at {
            push(
                errors,
                c.resource.file,
                Diagnostic::new(c.resource.resource.span, message.clone()),
            );
        }
    }
}

/// `+kube-codegen:conversion` sits on the storage version of a kind served in several.
fn check_conversion(same: &[CrdVersion], errors: &mut Vec<FileDiagnostics>) {
    for c in same.iter().filter(|c| c.resource.resource.conversion) {
        let r = &c.resource.resource;
        let why = if same.len() < 2 {
            format!(
                "`+kube-codegen:conversion` wires the conversion between a kind's versions, but `{}` of `{}` has only {}",
                r.kind, c.group, c.version
            )
        } else if !r.storage_version {
            format!(
                "`+kube-codegen:conversion` goes on the hub: the version of `{}` marked `+kubebuilder:storageversion`, not {}",
                r.kind, c.version
            )
        } else {
            continue;
        };
        push(errors, c.resource.file, Diagnostic::new(r.span, why));
    }
}

/// Group modules must not shadow the informer factory's methods or each other.
fn check_group_modules(out: &[GroupVersion], errors: &mut Vec<FileDiagnostics>) {
    const FACTORY_METHODS: &[&str] = &[
        "new",
        "builder",
        "client",
        "informer",
        "for_resource",
        "dynamic",
        "start",
        "wait_for_cache_sync",
        "shutdown",
    ];
    for gv in out {
        let module = naming::group_module(&gv.group_go_name);
        if FACTORY_METHODS.contains(&module.as_str()) {
            errors.push(FileDiagnostics {
                file: None,
                diagnostics: vec![Diagnostic::new(
                    Span::call_site(),
                    format!(
                        "group `{}` gets the accessor `{module}()`, which `SharedInformerFactory` already has; give it `//! +groupGoName=<Name>`",
                        gv.group
                    ),
                )],
            });
        }
    }
    for pair in out.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.group != b.group
            && naming::group_module(&a.group_go_name) == naming::group_module(&b.group_go_name)
        {
            let module = naming::group_module(&a.group_go_name);
            errors.push(FileDiagnostics {
                file: None,
                diagnostics: vec![Diagnostic::new(
                    Span::call_site(),
                    format!(
                        "groups `{}` and `{}` both get the module name `{module}`; give one of them `//! +groupGoName=<Name>`",
                        a.group, b.group
                    ),
                )],
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_on_brackets_and_generics_only() {
        let deep = format!("type T = {}u8{};", "Vec<".repeat(200), ">".repeat(200));
        assert_eq!(too_deep(&deep), Some((1, 9 + 4 * MAX_NESTING + 4)));
        let ok = format!("type T = {}u8{};", "Vec<".repeat(100), ">".repeat(100));
        assert_eq!(too_deep(&ok), None);
        // Comparisons, arrows, strings, comments and char literals do not nest.
        let code = "fn f() -> bool { let s = \"((((\"; let c = '('; 1 < 2 } // ((((\n".repeat(300);
        assert_eq!(too_deep(&code), None);
    }
}
