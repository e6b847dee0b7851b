//! A kind in several versions: `create api` for a version of a kind the crate has, and
//! `create webhook --conversion`, which converts between them through the storage version.
//!
//! A new version is a type, its sample and its module lines: the controller keeps watching
//! the version it was written for, which stays the storage version (marked so when it is
//! the first to get a sibling). Conversion marks that version the hub (`+kube-codegen:
//! conversion`), writes each other version's `TryFrom` pair over
//! `kube_codegen_runtime::webhook::conversion::same_fields` (right while the fields agree,
//! an error naming the first field that would be lost once they do not), serves the
//! generated `conversions()` beside the admission webhooks, and points the CRDs of
//! `config/crd` at the webhook Service.

use std::path::{Path, PathBuf};

use super::webhook::{WEBHOOK_SERVER_MARKER, add_webhooks_module};
use crate::error::Error;
use crate::scaffold::files::{
    NewFile, above, ensure_line, read, refuse_existing, write, write_files,
};
use crate::scaffold::{Names, templates};

const STORAGE: &str = "+kubebuilder:storageversion";
const CONVERSION: &str = "+kube-codegen:conversion";

/// The line `create webhook --conversion` adds to `server()` in `src/webhooks/mod.rs`.
const SERVE_CONVERSIONS: &str =
    "    let server = server.conversions(crate::generated::conversion::conversions());";

/// The `crds` lines of the scripts, and what conversion makes of them.
const CRDS_LINES: [&str; 2] = [
    "crds --input src/apis --output config/crd",
    "crds --verify --input src/apis --output config/crd",
];

/// The kind's file in `version`.
fn kind_file(dir: &Path, names: &Names, version: &str) -> PathBuf {
    dir.join(names.kind_file_in(version))
}

/// The versions of the kind in the crate other than `names.version`, sorted.
pub(super) fn other_versions(dir: &Path, names: &Names) -> Vec<String> {
    let group = dir.join("src/apis").join(&names.group_mod);
    let mut versions: Vec<String> = std::fs::read_dir(group)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|v| *v != names.version && kind_file(dir, names, v).is_file())
        .collect();
    versions.sort();
    versions
}

/// Whether the kind's struct in `text` carries `marker` in its docs; `None` when `text`
/// has no struct with `#[kube(...)]`.
fn has_marker(text: &str, marker: &str) -> Option<bool> {
    let file = syn::parse_file(text).ok()?;
    file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.attrs.iter().any(|a| a.path().is_ident("kube")) => {
            Some(s.attrs.iter().any(|a| match &a.meta {
                syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => matches!(
                    &nv.value,
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(doc), .. })
                        if doc.value().trim() == marker
                ),
                _ => false,
            }))
        }
        _ => None,
    })
}

/// `text` with `/// <marker>` on its own line above the first attribute of the kind's struct
/// that is not a doc comment (its `#[derive(...)]`), so it ends the struct's docs.
fn with_marker(text: &str, marker: &str) -> Option<String> {
    let file = syn::parse_file(text).ok()?;
    let line = file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) if s.attrs.iter().any(|a| a.path().is_ident("kube")) => s
            .attrs
            .iter()
            .find(|a| !a.path().is_ident("doc"))
            .map(|a| a.pound_token.span.start().line),
        _ => None,
    })?;
    let mut lines: Vec<&str> = text.lines().collect();
    let at = line.checked_sub(1).filter(|i| *i < lines.len())?;
    let indent: String = lines[at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let added = format!("{indent}/// {marker}");
    lines.insert(at, &added);
    Some(lines.join("\n") + if text.ends_with('\n') { "\n" } else { "" })
}

/// Adds `marker` to the kind's docs in `path`, unless there already.
fn mark(path: &Path, marker: &str) -> Result<(), Error> {
    let text = read(path)?;
    let unreadable = || {
        Error::Refused(format!(
            "`{}` has no struct with `#[kube(...)]` that create could read; add `/// {marker}` to the kind's docs by hand",
            path.display()
        ))
    };
    if has_marker(&text, marker).ok_or_else(unreadable)? {
        return Ok(());
    }
    write(path, &with_marker(&text, marker).ok_or_else(unreadable)?)
}

/// `create api` for a kind the crate has in `others`: the new version's type, sample and
/// module lines; the version already there becomes the storage version unless one is.
pub(super) fn add_version(dir: &Path, names: &Names, others: &[String]) -> Result<(), Error> {
    let files: Vec<_> = names
        .kind_files()
        .into_iter()
        .filter(|f| !f.path.starts_with("src/controllers") && !f.path.starts_with("tests"))
        .collect();
    refuse_existing(
        dir,
        &files,
        "create api adds new versions only and never overwrites your code",
    )?;
    let mut stored = Vec::new();
    for version in others {
        let text = read(&kind_file(dir, names, version))?;
        if has_marker(&text, STORAGE) == Some(true) {
            stored.push(version.clone());
        }
    }
    let from = match (stored.as_slice(), others) {
        ([], [only]) => only,
        ([], _) => {
            return Err(Error::Refused(format!(
                "none of the versions of {} ({}) is marked `{STORAGE}`; mark the one kube-apiserver stores, then add {}",
                names.kind,
                others.join(", "),
                names.version
            )));
        }
        ([first, ..], _) => first,
    };
    // The new version starts as a copy of the stored one, types and sample, so it says what
    // the kind is today rather than what `init`'s template said.
    let from_text = read(&kind_file(dir, names, from))?;
    let copied = copied_version(&from_text, from, &names.version).ok_or_else(|| {
        Error::Refused(format!(
            "`{}` has no struct with `#[kube(..., version = \"{from}\", ...)]` that create could read; write the new version by hand",
            kind_file(dir, names, from).display()
        ))
    })?;
    let from_sample = dir.join(names.sample_file()).with_file_name(format!(
        "{}_{from}_{}.yaml",
        names.group_mod, names.kind_snake
    ));
    let files: Vec<NewFile> = files
        .into_iter()
        .map(|f| {
            if f.path == names.kind_file_in(&names.version) {
                NewFile::new(f.path, copied.clone())
            } else if f.path == names.sample_file() {
                let text = std::fs::read_to_string(&from_sample).map_or(f.text, |t| {
                    t.replace(
                        &format!("apiVersion: {}/{from}", names.group),
                        &format!("apiVersion: {}/{}", names.group, names.version),
                    )
                });
                NewFile::new(f.path, text)
            } else {
                f
            }
        })
        .collect();
    if stored.is_empty() {
        mark(&kind_file(dir, names, from), STORAGE)?;
    }
    super::api::add_modules(dir, names, &copied)?;
    write_files(dir, &files)
}

/// The kind's file `text` of version `from`, as the first text of version `to`: the
/// `version` of its `#[kube(...)]` is `to`, and the markers that belong to one version
/// only (the storage version, the conversion hub) are left out.
fn copied_version(text: &str, from: &str, to: &str) -> Option<String> {
    let file = syn::parse_file(text).ok()?;
    let literal = file.items.iter().find_map(|item| match item {
        syn::Item::Struct(s) => s
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("kube"))
            .find_map(|a| version_literal(a, from)),
        _ => None,
    })?;
    let (start, end) = (literal.span().start(), literal.span().end());
    if start.line != end.line {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim();
        if trimmed == format!("/// {STORAGE}") || trimmed == format!("/// {CONVERSION}") {
            continue;
        }
        if i + 1 == start.line {
            let chars: Vec<char> = line.chars().collect();
            let before: String = chars.get(..start.column)?.iter().collect();
            let after: String = chars.get(end.column..)?.iter().collect();
            out.push_str(&format!("{before}\"{to}\"{after}"));
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

/// The string literal `"from"` given as `version = "from"` in the `#[kube(...)]` attribute.
fn version_literal(attr: &syn::Attribute, from: &str) -> Option<syn::LitStr> {
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    let mut found = None;
    let _ = list.parse_nested_meta(|meta| {
        if meta.path.is_ident("version") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            if lit.value() == from {
                found = Some(lit);
            }
        } else if meta.input.peek(syn::Token![=]) {
            let _: syn::Expr = meta.value()?.parse()?;
        } else if meta.input.peek(syn::token::Paren) {
            let _nested;
            syn::parenthesized!(_nested in meta.input);
        }
        Ok(())
    });
    found
}

/// `create webhook --conversion`: the kind's version `names.version`, its storage version,
/// becomes the hub, and every other version converts to and from it.
pub(super) fn add_conversion(dir: &Path, names: &Names) -> Result<(), Error> {
    let hub = kind_file(dir, names, &names.version);
    let hub_text = read(&hub)?;
    let spokes = other_versions(dir, names);
    if spokes.is_empty() {
        return Err(Error::Refused(format!(
            "{} has one version, {}: a conversion needs a second (`kube-codegen create api --group {} --version v2 --kind {}`)",
            names.kind, names.version, names.group, names.kind
        )));
    }
    if has_marker(&hub_text, STORAGE) != Some(true) {
        let stored = spokes.iter().find(|v| {
            read(&kind_file(dir, names, v))
                .ok()
                .and_then(|t| has_marker(&t, STORAGE))
                == Some(true)
        });
        return Err(Error::Refused(match stored {
            Some(v) => format!(
                "the hub of a conversion is the storage version, and {} stores {v} (`{STORAGE}`): run with `--version {v}`",
                names.kind
            ),
            None => format!(
                "no version of {} is marked `{STORAGE}`; mark {} (the hub) first",
                names.kind, names.version
            ),
        }));
    }
    if has_marker(&hub_text, CONVERSION) == Some(true) {
        return Err(Error::Refused(format!(
            "`{}` is marked `{CONVERSION}` already: create webhook never overwrites your code",
            hub.display()
        )));
    }
    let files: Vec<NewFile> = spokes
        .iter()
        .map(|spoke| {
            let path = PathBuf::from("src/apis")
                .join(&names.group_mod)
                .join(spoke)
                .join(format!("{}_conversion.rs", names.kind_snake));
            let text = names
                .fill(templates::CONVERSION)
                .replace("__SPOKE__", spoke);
            NewFile::new(path, text)
        })
        .chain(std::iter::once(NewFile::new(
            PathBuf::from("tests").join(format!("{}_conversion.rs", names.kind_snake)),
            test_file(names),
        )))
        .collect();
    refuse_existing(dir, &files, "create webhook never overwrites your code")?;
    mark(&hub, CONVERSION)?;
    for spoke in &spokes {
        let module = dir
            .join("src/apis")
            .join(&names.group_mod)
            .join(spoke)
            .join("mod.rs");
        ensure_line(&module, &format!("mod {}_conversion;", names.kind_snake))?;
    }
    let module = dir.join("src/webhooks/mod.rs");
    if !module.exists() {
        add_webhooks_module(dir, names)?;
    }
    let text = read(&module)?;
    if !text.contains(SERVE_CONVERSIONS) {
        if !text.contains(WEBHOOK_SERVER_MARKER) {
            return Err(Error::Refused(format!(
                "`{}` lacks the line create webhook writes above:\n  {}\nput it back, or serve `crate::generated::conversion::conversions()` by hand",
                module.display(),
                WEBHOOK_SERVER_MARKER.trim()
            )));
        }
        write(
            &module,
            &above(&text, WEBHOOK_SERVER_MARKER, SERVE_CONVERSIONS),
        )?;
    }
    allow_ca_injection(&module, names)?;
    for script in ["hack/update-codegen.sh", "hack/verify-codegen.sh"] {
        point_crds_at_service(&dir.join(script), names)?;
    }
    write_files(dir, &files)
}

/// The RBAC marker that lets the operator inject its CA into this kind's CRD, and no other:
/// `get;patch` on `customresourcedefinitions` with the CRD's name, under the webhooks'
/// other RBAC markers in `module`.
fn allow_ca_injection(module: &Path, names: &Names) -> Result<(), Error> {
    let text = read(module)?;
    let line = format!(
        "// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames={}.{}",
        names.plural, names.group
    );
    if text.contains(&line) {
        return Ok(());
    }
    // Below the template's line that says so, else the last RBAC marker of the header.
    let Some(last) = text
        .lines()
        .find(|l| l.starts_with("// adds a kind's line below."))
        .or_else(|| {
            text.lines()
                .rev()
                .find(|l| l.starts_with("// +kubebuilder:rbac:"))
        })
    else {
        return Err(Error::Refused(format!(
            "`{}` has no `// +kubebuilder:rbac:` marker to add the CRD's after; add `{line}` by hand",
            module.display()
        )));
    };
    write(
        module,
        &text.replacen(&format!("{last}\n"), &format!("{last}\n{line}\n"), 1),
    )
}

/// `tests/<kind>_conversion.rs`.
fn test_file(names: &Names) -> String {
    let sample = names
        .sample_file()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let api = if names.cluster {
        "Api::all_with(client.clone(), &resource)"
    } else {
        "Api::default_namespaced_with(client.clone(), &resource)"
    };
    names
        .fill(templates::TEST_CONVERSION)
        .replace("__SAMPLE_FILE__", &sample)
        .replace("__DYNAMIC_API__", api)
}

/// The script at `path` with its `crds` line writing the conversion Service into the CRDs.
fn point_crds_at_service(path: &Path, names: &Names) -> Result<(), Error> {
    let text = read(path)?;
    let with = format!("--conversion-service {}", names.webhook_service());
    if text.contains(&with) {
        return Ok(());
    }
    let Some(line) = CRDS_LINES.iter().find(|l| text.contains(*l)) else {
        return Err(Error::Refused(format!(
            "`{}` has no `{}` line to add `{with}` to; add it by hand",
            path.display(),
            CRDS_LINES[0]
        )));
    };
    write(path, &text.replacen(line, &format!("{line} {with}"), 1))
}
