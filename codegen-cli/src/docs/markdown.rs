//! The Markdown pages of `docs`: the model's pages as mdBook and GitHub render them, with
//! anchors as they give headings.

use std::fmt::Write as _;

use super::model::{Inline, Kind, Object, Page, Span, anchor};

/// A page of one group and version, after `head` (the header and the command).
pub fn page(head: &str, page: &Page) -> String {
    let mut out = format!("{head}# {}/{}\n\n", page.group, page.version);
    for kind in &page.kinds {
        let _ = writeln!(out, "- [{}](#{})", kind.name, anchor(&kind.name));
    }
    for kind in &page.kinds {
        kind_section(&mut out, kind);
    }
    out
}

/// The index: a link to each page.
pub fn index(head: &str, pages: &[Page]) -> String {
    let mut out = format!("{head}# API reference\n\n");
    for page in pages {
        let _ = writeln!(
            out,
            "- [{}/{}]({}.md)",
            page.group,
            page.version,
            page.stem()
        );
    }
    out
}

/// Inline text: code spans in backticks, prose as written.
fn inline(spans: &Inline) -> String {
    spans
        .iter()
        .map(|span| match span {
            Span::Text(t) => t.clone(),
            Span::Code(c) => format!("`{c}`"),
        })
        .collect()
}

/// Several phrases in one run, `; ` between them.
fn joined(phrases: &[Inline]) -> String {
    phrases.iter().map(inline).collect::<Vec<_>>().join("; ")
}

/// A kind: what the CRD says of it, then its schema's objects.
fn kind_section(page: &mut String, kind: &Kind) {
    let _ = write!(page, "\n## {}\n\n{}\n", kind.name, inline(&kind.summary));
    if let Some(columns) = &kind.columns {
        page.push_str("\nPrinter columns (`kubectl get`):\n\n| name | type | JSONPath | description |\n|---|---|---|---|\n");
        for c in columns {
            let _ = writeln!(
                page,
                "| {} | {} | `{}` | {} |",
                c.name,
                c.ty,
                c.json_path,
                cell(&c.description)
            );
        }
    }
    for object in &kind.objects {
        object_section(page, object);
    }
}

/// One object: its description and rules, then a table of its fields. The root object's
/// fields go under the kind's own heading.
fn object_section(page: &mut String, object: &Object) {
    if object.root {
        page.push('\n');
    } else {
        let _ = write!(page, "\n### {}\n\n", object.path);
        if !object.description.is_empty() {
            let _ = write!(page, "{}\n\n", object.description);
        }
    }
    if !object.rules.is_empty() {
        let _ = write!(page, "Validation: {}\n\n", joined(&object.rules));
    }
    page.push_str("| field | type | description | validation |\n|---|---|---|---|\n");
    for field in &object.fields {
        let ty = match &field.link {
            Some(target) => format!("[{}](#{target})", field.ty),
            None => field.ty.clone(),
        };
        let _ = writeln!(
            page,
            "| `{}` | {ty} | {} | {} |",
            field.name,
            cell(&field.description),
            cell(&joined(&field.checks))
        );
    }
}

/// `text` fit for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
