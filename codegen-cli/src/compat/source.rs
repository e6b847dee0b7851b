//! With `--input`: each finding shown at the Rust token that made it (the marker that sets
//! the changed keyword, the field's type, the field, or the struct that lost a field), as
//! `generate` shows a bad marker, and the `+kube-codegen:compat:acknowledge` that covers it.

use std::collections::BTreeSet;
use std::path::Path;

use kube_codegen_core::diag::Diagnostic;
use kube_codegen_core::render;
use kube_codegen_core::source::SourceFile;
use kube_codegen_core::tree::locate::{At, KindSource, PathSource};

use super::diff::Finding;
use crate::error::Error;

/// The API tree as written: its files and where each part of its CRDs is.
pub(super) struct Sources {
    files: Vec<SourceFile>,
    kinds: Vec<KindSource>,
}

/// Where a finding is shown, and the acknowledgement that covers it (its reason and place).
pub(super) struct Located<'s> {
    /// The token.
    pub(super) at: &'s At,
    /// `+kube-codegen:compat:acknowledge="reason"` on the field or struct it is shown at.
    pub(super) acknowledged: Option<&'s (String, At)>,
}

/// Changes shown at the field's type rather than its name, when no marker sets them.
const AT_TYPE: &[&str] = &[
    "type-changed",
    "format-changed",
    "enum-added",
    "enum-value-removed",
    "enum-value-added",
    "field-required",
    "nullable-removed",
    "nullable-added",
];

/// The marker on a kind's storage version (its hub) that has the crate serve the kind's
/// conversion webhook.
const CONVERSION: &str = "+kube-codegen:conversion";

impl Sources {
    /// Reads the API tree under `input`.
    pub(super) fn load(input: &Path) -> Result<Self, Error> {
        let files = kube_codegen_core::source::load(input)
            .map_err(|e| Error::BadInput(Box::new(Error::Refused(e.to_string()))))?;
        let kinds = kube_codegen_core::tree::locate::sources(&files, crate::generate::API_MODULE);
        Ok(Self { files, kinds })
    }

    /// Where `f` is shown; `kind` is the baseline CRD's kind, for a CRD whose name changed.
    pub(super) fn locate(&self, f: &Finding, kind: Option<&str>) -> Option<Located<'_>> {
        let mut of_crd: Vec<&KindSource> = self.kinds.iter().filter(|k| k.crd == f.crd).collect();
        if of_crd.is_empty()
            && let Some(kind) = kind
        {
            of_crd = self.kinds.iter().filter(|k| k.kind_name == kind).collect();
        }
        let Some(version) = &f.version else {
            // A change to the CRD as a whole: where its field is set, or at the kind.
            let k = of_crd.first()?;
            let at = k
                .crd_fields
                .iter()
                .find(|(path, _)| *path == f.path)
                .map_or(&k.kind, |(_, at)| at);
            return Some(Located {
                at,
                acknowledged: root(k).and_then(|r| r.acknowledged.as_ref()),
            });
        };
        let k = of_crd.into_iter().find(|k| &k.version == version)?;
        // What is not in the schema (the version itself, its subresources, printer
        // columns) is shown at the kind.
        let at_kind = || Located {
            at: &k.kind,
            acknowledged: root(k).and_then(|r| r.acknowledged.as_ref()),
        };
        if f.path.is_empty() {
            return Some(at_kind());
        }
        schema_at(k, f).or_else(|| Some(at_kind()))
    }

    /// `severity: message`, `--> file:line:col`, the line and a caret.
    pub(super) fn render(&self, severity: &str, at: &At, message: &str) -> String {
        match self.files.get(at.file) {
            Some(file) => render::render_as(severity, file, &diagnostic(at, message)),
            None => format!("{severity}: {message}\n"),
        }
    }

    /// `file:line:col` of `at`, as the file, line and column.
    pub(super) fn position(&self, at: &At) -> Option<(String, usize, usize)> {
        let file = self.files.get(at.file)?;
        let pos = render::position(file, &diagnostic(at, ""));
        Some((file.path.display().to_string(), pos.line, pos.column))
    }

    /// The CRD and version of each kind version whose spec struct is marked
    /// `+kube-codegen:conversion` (which `generate` accepts on the storage version only).
    pub(super) fn conversion_hubs(&self) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        for k in &self.kinds {
            let Some(file) = self.files.get(k.kind.file) else {
                continue;
            };
            // `// +marker` line comments are markers too, read as `///+marker` (the same
            // length, so positions stay).
            let text: String = file
                .text
                .split_inclusive('\n')
                .map(|line| {
                    let indent = line.len() - line.trim_start().len();
                    if line[indent..].starts_with("// +") {
                        format!("{}///+{}", &line[..indent], &line[indent + 4..])
                    } else {
                        line.to_owned()
                    }
                })
                .collect();
            let Ok(ast) = syn::parse_file(&text) else {
                continue;
            };
            let at = k.kind.loc.span.start();
            let marked = ast.items.iter().any(|item| match item {
                syn::Item::Struct(s) => {
                    s.ident.span().start() == at && has_marker(&s.attrs, CONVERSION)
                }
                _ => false,
            });
            if marked {
                out.insert((k.crd.clone(), k.version.clone()));
            }
        }
        out
    }

    /// Every acknowledgement in the tree, with the CRD and version it is in.
    pub(super) fn acknowledgements(&self) -> Vec<(&str, &str, &(String, At))> {
        let mut out = Vec::new();
        for k in &self.kinds {
            for entry in k.paths.values() {
                if let Some(ack) = &entry.acknowledged {
                    out.push((k.crd.as_str(), k.version.as_str(), ack));
                }
            }
        }
        out
    }
}

fn diagnostic(at: &At, message: &str) -> Diagnostic {
    Diagnostic {
        span: at.loc.span,
        doc_range: at.loc.doc_range.clone(),
        message: message.to_owned(),
    }
}

/// The spec struct's entry (the root's, for a kind without a spec).
fn root(k: &KindSource) -> Option<&PathSource> {
    k.paths.get("spec").or_else(|| k.paths.get(""))
}

/// A schema finding: the marker that sets its keyword at its path; else the field (or its
/// type) at the path, or at the nearest path above that the sources show (the struct a
/// removed field was in). An acknowledgement on any entry passed on the way counts.
fn schema_at<'s>(k: &'s KindSource, f: &Finding) -> Option<Located<'s>> {
    let mut path = f.path.as_str();
    let mut acknowledged = None;
    loop {
        if let Some(entry) = k.paths.get(path) {
            acknowledged = acknowledged.or(entry.acknowledged.as_ref());
            let marker = f.key.and_then(|key| {
                entry
                    .markers
                    .iter()
                    .rev()
                    .find(|(k, _)| *k == key)
                    .map(|(_, at)| at)
            });
            let typed = AT_TYPE.contains(&f.change).then_some(entry.ty.as_ref());
            // A removed field is shown at the struct it was removed from.
            let (first, second) = if f.change == "field-removed" {
                (entry.structure.as_ref(), entry.field.as_ref())
            } else {
                (entry.field.as_ref(), entry.structure.as_ref())
            };
            let anchor = marker.or(typed.flatten()).or(first).or(second);
            if let Some(at) = anchor {
                return Some(Located { at, acknowledged });
            }
        }
        path = match path.strip_suffix("[*]") {
            Some(up) => up,
            None => path.rsplit_once('.')?.0,
        };
    }
}

/// Whether a doc line of `attrs` is `marker`, alone or followed by `:` arguments.
fn has_marker(attrs: &[syn::Attribute], marker: &str) -> bool {
    attrs.iter().any(|attr| {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            return false;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(doc),
            ..
        }) = &nv.value
        else {
            return false;
        };
        attr.path().is_ident("doc")
            && doc.value().lines().map(str::trim).any(|line| {
                line == marker
                    || line
                        .strip_prefix(marker)
                        .is_some_and(|rest| rest.starts_with(':'))
            })
    })
}
