//! API-convention lint: the rules of kube-api-linter (sigs.k8s.io/kube-api-linter) that
//! apply to Rust API types, run over a whole tree (`kube-codegen lint`) or, on request, one
//! derive input (as warnings).
//!
//! Each rule has a kebab-case id ([`RULES`]), a message saying why the convention exists,
//! and a fix after `;` where one is mechanical. A finding is silenced at its field (or for
//! every field of a struct, on the struct) by `+kube-codegen:lint:ignore=<id> <reason>`; the
//! reason is required. The rules live in `rules`; this file walks the types and applies
//! the silences.

mod rules;

use std::collections::BTreeSet;

use proc_macro2::Span;
use syn::{Attribute, ItemStruct};

use crate::ast::{Layer, Shape, Structs, shape};
use crate::attr::genclient::for_each_marker;
use crate::diag::{Ctxt, Diagnostic, Loc, did_you_mean};
use crate::source::SourceFile;
use crate::tree::ApiTree;

/// One lint rule: its id, as findings and silences name it, and what it asks for.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The kebab-case id (`no-bools`).
    pub id: &'static str,
    /// One line: what the rule asks for.
    pub summary: &'static str,
}

/// Every rule, in the order the reference lists them.
pub const RULES: &[Rule] = &[
    Rule {
        id: "conditions",
        summary: "`conditions` is a list-map keyed by `type` (`+listType=map`, `+listMapKey=type`) of items with the standard condition fields",
    },
    Rule {
        id: "optional-or-required",
        summary: "every field is marked `+optional` or `+required`",
    },
    Rule {
        id: "optional-fields",
        summary: "a field marked `+optional` is an `Option` (lists and maps: `#[serde(default)]`)",
    },
    Rule {
        id: "required-fields",
        summary: "a field marked `+required` is not an `Option`",
    },
    Rule {
        id: "integers",
        summary: "integers are `i32` or `i64`",
    },
    Rule {
        id: "no-floats",
        summary: "no `f32`/`f64`",
    },
    Rule {
        id: "max-length",
        summary: "strings have `MaxLength`, lists `MaxItems`, lists of strings `items:MaxLength`",
    },
    Rule {
        id: "string-enums",
        summary: "enums serialize as strings: unit variants, no serde tag, no integer enums",
    },
    Rule {
        id: "status-optional",
        summary: "every field of a status is optional",
    },
    Rule {
        id: "no-bools",
        summary: "no `bool`: an enum of string values can gain a third state",
    },
    Rule {
        id: "no-maps",
        summary: "maps hold strings only (labels, annotations); other maps are lists of named items",
    },
    Rule {
        id: "no-durations",
        summary: "no `Duration`: an integer with the unit in its name (`timeoutSeconds`)",
    },
    Rule {
        id: "json-names",
        summary: "JSON names are camelCase",
    },
    Rule {
        id: "no-flatten",
        summary: "no `#[serde(flatten)]`",
    },
];

/// The marker that silences a rule at a field or struct.
pub(crate) const IGNORE: &str = "+kube-codegen:lint:ignore";

/// The marker that asks the derives for lint warnings.
const OPT_IN: &str = "+kube-codegen:lint";

/// What a lint run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Each finding not silenced, rendered as `error[<id>]: ...`, `--> file:line:col`, a caret.
    pub findings: Vec<String>,
    /// How many findings a `+kube-codegen:lint:ignore` silenced.
    pub silenced: usize,
    /// How many kinds (one per version) were linted.
    pub kinds: usize,
}

/// Where a struct sits in its kind: the spec, the status, or below one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Root {
    /// The spec struct.
    Spec,
    /// The status struct: its fields are all optional.
    Status,
    /// A struct a spec or status field names.
    Nested,
}

/// One finding: the rule, where, and the message.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// The rule's id.
    pub(crate) rule: &'static str,
    /// The tokens it is about.
    pub(crate) span: Span,
    /// Lowercase, why, then the fix after `;`.
    pub(crate) message: String,
}

/// Findings and silences of one file, and the mistakes in its silence markers.
pub(crate) struct Sink {
    /// Findings not silenced.
    pub(crate) findings: Vec<Finding>,
    /// How many were silenced.
    pub(crate) silenced: usize,
    /// Mistakes in `+kube-codegen:lint:ignore` markers.
    pub(crate) cx: Ctxt,
}

impl Sink {
    fn new() -> Self {
        Self {
            findings: Vec::new(),
            silenced: 0,
            cx: Ctxt::new(),
        }
    }
}

/// The rules silenced on a field or struct, read from its markers; mistakes go to `cx`.
fn silences(cx: &mut Ctxt, attrs: &[Attribute]) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    for_each_marker(attrs, |text, loc| {
        let Some(rest) = text.strip_prefix(IGNORE) else {
            return;
        };
        // `+kube-codegen:lint:ignore` without `=` is reported by the marker table.
        let Some(value) = rest.strip_prefix('=') else {
            return;
        };
        let start = IGNORE.len() + 1;
        let id_len = value.find(char::is_whitespace).unwrap_or(value.len());
        let id = &value[..id_len];
        let reason = value[id_len..].trim();
        let Some(rule) = RULES.iter().find(|r| r.id == id) else {
            cx.error_at(
                &loc(start, start + id.len().max(1)),
                format!(
                    "unknown lint rule `{id}` in `{IGNORE}`{}",
                    match did_you_mean(id, RULES.iter().map(|r| r.id)).as_str() {
                        "" => format!(
                            "; the rules are {}",
                            RULES
                                .iter()
                                .map(|r| format!("`{}`", r.id))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        hint => hint.to_owned(),
                    }
                ),
            );
            return;
        };
        if reason.is_empty() {
            cx.error_at(
                &loc(0, text.len()),
                format!(
                    "`{IGNORE}={id}` needs a reason after the rule id, for the next reader: `{IGNORE}={id} <why the rule does not apply here>`"
                ),
            );
            return;
        }
        out.insert(rule.id);
    });
    out
}

/// Whether the struct's docs ask the derives for lint warnings (`+kube-codegen:lint`).
fn opted_in(attrs: &[Attribute]) -> bool {
    let mut found = false;
    for_each_marker(attrs, |text, _| found |= text == OPT_IN);
    found
}

/// Lints one struct's fields as `root`, silences applied; the structs its fields name are
/// added to `next`.
fn lint_struct<'a>(
    sink: &mut Sink,
    s: &'a ItemStruct,
    root: Root,
    structs: &Structs<'a>,
    next: &mut Vec<&'a ItemStruct>,
) {
    let on_struct = silences(&mut sink.cx, &s.attrs);
    let container = crate::ast::Container::read(s);
    for field in &container.fields {
        let on_field = silences(&mut sink.cx, &field.syn.attrs);
        let mut found = Vec::new();
        rules::field(&mut found, s, &container, field, root, structs);
        for f in found {
            if on_field.contains(f.rule) || on_struct.contains(f.rule) {
                sink.silenced += 1;
            } else {
                sink.findings.push(f);
            }
        }
        if field.json.is_some() {
            nested(shape(field.ty, structs), structs, next);
        }
    }
}

/// The structs inside a field's shape (through lists and maps).
fn nested<'a>(s: Shape<'a>, structs: &Structs<'a>, next: &mut Vec<&'a ItemStruct>) {
    match s {
        Shape::Struct(s) => next.push(s),
        Shape::Array(t) | Shape::Map(t) => nested(shape(t, structs), structs, next),
        _ => {}
    }
}

/// Lints a kind: its spec, its status, and every struct they reach, each struct once in
/// each place (`seen` spans the run, so a status two versions share is linted once); each
/// struct's findings go to the sink of the file that defines it (`file_of`).
fn lint_kind<'a>(
    sinks: &mut [Sink],
    file_of: &dyn Fn(&ItemStruct) -> Option<usize>,
    seen: &mut Vec<(*const ItemStruct, Root)>,
    roots: Vec<(&'a ItemStruct, Root)>,
    structs: &Structs<'a>,
) {
    let mut queue = roots;
    queue.reverse();
    while let Some((s, root)) = queue.pop() {
        let key = (std::ptr::from_ref(s), root);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Some(sink) = file_of(s).and_then(|i| sinks.get_mut(i)) else {
            continue;
        };
        let mut next = Vec::new();
        lint_struct(sink, s, root, structs, &mut next);
        queue.extend(next.into_iter().rev().map(|n| (n, Root::Nested)));
    }
}

/// The CLI's lint (`kube-codegen lint`) over a tree that [`crate::tree::build`] accepted:
/// every version of every custom resource kind. `Err` holds the mistakes in silence
/// markers, rendered.
pub(crate) fn run(files: &[SourceFile], tree: &ApiTree) -> Result<Report, Vec<String>> {
    let asts: Vec<Option<syn::File>> = files.iter().map(|f| crate::tree::syntax(&f.text)).collect();
    let mut everywhere = Layer::default();
    for ast in asts.iter().flatten() {
        everywhere.extend(&ast.items);
    }
    let file_of = |s: &ItemStruct| {
        asts.iter().position(|ast| {
            ast.as_ref().is_some_and(|ast| {
                ast.items
                    .iter()
                    .any(|i| matches!(i, syn::Item::Struct(x) if std::ptr::eq(x, s)))
            })
        })
    };
    let mut sinks: Vec<Sink> = files.iter().map(|_| Sink::new()).collect();
    let mut seen = Vec::new();
    let mut report = Report::default();
    for crd in &tree.crds {
        let r = &crd.resource.resource;
        let (Some(Some(ast)), false) = (asts.get(crd.resource.file), r.builtin) else {
            continue;
        };
        let structs = Structs::new(&ast.items, None).with_layer(everywhere.clone());
        let Some(spec) = structs.get(&r.spec_ident.to_string()) else {
            continue;
        };
        // `status = "FooStatus"` (or a path to it).
        let status = r.kube.status.as_ref().and_then(|t| {
            let ty = syn::parse_str::<syn::Type>(&t.value).ok()?;
            let name = match &ty {
                syn::Type::Path(p) => p.path.segments.last()?.ident.to_string(),
                _ => return None,
            };
            structs.get(&name)
        });
        report.kinds += 1;
        let mut roots = vec![(spec, Root::Spec)];
        roots.extend(status.map(|s| (s, Root::Status)));
        lint_kind(&mut sinks, &file_of, &mut seen, roots, &structs);
    }
    let mut errors = Vec::new();
    for (file, sink) in files.iter().zip(sinks) {
        report.silenced += sink.silenced;
        let mut findings = sink.findings;
        findings.sort_by_key(|f| (f.span.start().line, f.span.start().column));
        for f in findings {
            let d = Diagnostic::new(f.span, f.message);
            let severity = format!("error[{}]", f.rule);
            report
                .findings
                .push(crate::render::render_as(&severity, file, &d));
        }
        for d in sink.cx.into_diagnostics() {
            errors.push(crate::render::render(file, &d));
        }
    }
    if errors.is_empty() {
        Ok(report)
    } else {
        Err(errors)
    }
}

/// The derives' lint, for a struct whose docs say `+kube-codegen:lint`: its findings as
/// warnings (`root` is what the derive knows of it), its silence mistakes as errors in `cx`.
/// Only the struct itself is seen, so rules about the types its fields name are skipped.
pub(crate) fn derive_warnings(cx: &mut Ctxt, s: &ItemStruct, root: Root) -> Vec<Diagnostic> {
    if !opted_in(&s.attrs) {
        return Vec::new();
    }
    let structs = Structs::new([], Some(s));
    let mut sink = Sink::new();
    lint_struct(&mut sink, s, root, &structs, &mut Vec::new());
    for d in sink.cx.into_diagnostics() {
        cx.error_at(
            &Loc {
                span: d.span,
                doc_range: d.doc_range,
            },
            d.message,
        );
    }
    sink.findings
        .into_iter()
        .map(|f| {
            Diagnostic::new(
                f.span,
                format!("kube-codegen lint `{}`: {}", f.rule, f.message),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
