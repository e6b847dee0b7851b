//! The checks of a tree that no single type can make: every file with kinds is a module of
//! the crate, one version directory holds one group and its own version, a kind is defined
//! once per version and stored in exactly one, conversions sit on the hub, and group modules
//! do not collide.

use std::collections::BTreeMap;
use std::path::Path;

use proc_macro2::Span;
use syn::Item;
use syn::ext::IdentExt;

use super::read::{Parsed, VersionDir, VersionSpans};
use super::{CrdVersion, FileDiagnostics, GroupVersion, TreeResource};
use crate::diag::{Ctxt, Diagnostic};
use crate::naming;
use crate::source::SourceFile;

/// A file with kinds must be a module of the crate, or the generated code cannot use them:
/// the error goes to the file.
pub(super) fn undeclared_modules(
    parsed: &Parsed<'_>,
    versions: &BTreeMap<(String, String), VersionDir>,
    cxs: &mut [Ctxt],
) {
    let (files, asts) = (parsed.files, parsed.asts);
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
        if let Some(why) = undeclared(files, asts, &index_of, index) {
            cxs[index].error(Span::call_site(), why);
        }
    }
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

/// Each kind of a version directory is of its group (`group`: the package's `+groupName`
/// when `by_marker`, else the directory's first kind's) and of the directory's version.
pub(super) fn members(
    group_dir: &str,
    version_dir: &str,
    dir: &VersionDir,
    group: &str,
    by_marker: bool,
    errors: &mut Vec<FileDiagnostics>,
) {
    for (file, r, spans) in dir.resources.iter().chain(&dir.crd_only) {
        if r.resource.group != group {
            let source = if by_marker {
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
}

/// A kind is defined once in a version directory: `all` holds its kinds (with and without
/// clients), sorted by kind.
pub(super) fn duplicate_kinds(
    all: &[(bool, &(usize, TreeResource, VersionSpans))],
    group: &str,
    version_dir: &str,
    errors: &mut Vec<FileDiagnostics>,
) {
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
}

/// A kind served in several versions is one CRD: exactly one version is stored.
pub(super) fn storage_versions(crds: &mut [CrdVersion], errors: &mut Vec<FileDiagnostics>) {
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
        conversion(same, errors);
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

/// A kind is consumed (`+kube-codegen:consumed`) in every version or in none: its CRD is
/// either someone else's or ours, never half of each. A consumed kind has no conversion of
/// ours.
pub(super) fn consumed(crds: &[CrdVersion], errors: &mut Vec<FileDiagnostics>) {
    let mut kinds: BTreeMap<(&str, &str), Vec<&CrdVersion>> = BTreeMap::new();
    for c in crds {
        kinds
            .entry((c.group.as_str(), c.resource.resource.kind.as_str()))
            .or_default()
            .push(c);
    }
    for ((group, kind), versions) in kinds {
        let consumed: Vec<&str> = versions
            .iter()
            .filter(|c| c.resource.resource.consumed)
            .map(|c| c.version.as_str())
            .collect();
        if consumed.is_empty() {
            continue;
        }
        if consumed.len() != versions.len() {
            let owned: Vec<&str> = versions
                .iter()
                .filter(|c| !c.resource.resource.consumed)
                .map(|c| c.version.as_str())
                .collect();
            for c in versions.iter().filter(|c| !c.resource.resource.consumed) {
                push(
                    errors,
                    c.resource.file,
                    Diagnostic::new(
                        c.resource.resource.span,
                        format!(
                            "`{kind}` of `{group}` is marked `+kube-codegen:consumed` in {} but not in {}: its CRD is either someone else's or ours; mark every version, or remove the marker from every version to own it",
                            consumed.join(", "),
                            owned.join(", ")
                        ),
                    ),
                );
            }
        }
        for c in versions.iter().filter(|c| c.resource.resource.conversion) {
            push(
                errors,
                c.resource.file,
                Diagnostic::new(
                    c.resource.resource.span,
                    format!(
                        "`{kind}` of `{group}` is consumed (`+kube-codegen:consumed`): its versions convert through its owner's webhook, not ours; remove `+kube-codegen:conversion`"
                    ),
                ),
            );
        }
    }
}

/// `+kube-codegen:conversion` sits on the storage version of a kind served in several.
fn conversion(same: &[CrdVersion], errors: &mut Vec<FileDiagnostics>) {
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
pub(super) fn group_modules(out: &[GroupVersion], errors: &mut Vec<FileDiagnostics>) {
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

/// Adds `d` to the diagnostics of `file`.
pub(super) fn push(errors: &mut Vec<FileDiagnostics>, file: usize, d: Diagnostic) {
    match errors.iter_mut().find(|e| e.file == Some(file)) {
        Some(e) => e.diagnostics.push(d),
        None => errors.push(FileDiagnostics {
            file: Some(file),
            diagnostics: vec![d],
        }),
    }
}
