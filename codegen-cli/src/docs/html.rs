//! The HTML pages of `docs`: the model's pages as self-contained documents (inline CSS, no
//! script, no external asset), with the Markdown pages' anchors (the model's, unique in a
//! page), every text escaped, and no link that runs script.

use std::fmt::Write as _;

use super::model::{Inline, Kind, Object, Page, Span, href, prose, url_segment};

/// The stylesheet of every page: readable tables, code set apart, nothing fetched.
const STYLE: &str = "body{font-family:system-ui,sans-serif;line-height:1.5;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}\
code{font-family:ui-monospace,monospace;font-size:.9em;background:#f3f3f3;padding:0 .2em;border-radius:3px}\
table{border-collapse:collapse;margin:1rem 0;width:100%}\
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}\
th{background:#f3f3f3}\
a{color:#0645ad}";

/// A page of one group and version, after `head` (the header and the command, as HTML
/// comments).
pub fn page(head: &str, page: &Page) -> String {
    let title = page.title();
    let mut out = document_start(head, &title);
    out.push_str("<p><a href=\"index.html\">API reference</a></p>\n");
    let _ = writeln!(
        out,
        "<h1 id=\"{}\">{}</h1>",
        escape(&page.anchor),
        escape(&title)
    );
    out.push_str("<ul>\n");
    for kind in &page.kinds {
        let _ = writeln!(
            out,
            "<li>{}</li>",
            link(&escape(&kind.name), &format!("#{}", kind.anchor))
        );
    }
    out.push_str("</ul>\n");
    for kind in &page.kinds {
        kind_section(&mut out, kind);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The index: a link to each page.
pub fn index(head: &str, pages: &[Page]) -> String {
    let mut out = document_start(head, "API reference");
    out.push_str("<h1>API reference</h1>\n<ul>\n");
    for page in pages {
        let destination = format!("{}.html", url_segment(&page.stem()));
        let _ = writeln!(
            out,
            "<li>{}</li>",
            link(&escape(&page.title()), &destination)
        );
    }
    out.push_str("</ul>\n</body>\n</html>\n");
    out
}

fn document_start(head: &str, title: &str) -> String {
    format!(
        "{head}<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    )
}

/// `text` safe in HTML text and in a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `<a href="destination">shown</a>`, or `shown` alone when the destination could run
/// script.
fn link(shown: &str, destination: &str) -> String {
    match href(destination) {
        Some(destination) => format!("<a href=\"{}\">{shown}</a>", escape(&destination)),
        None => shown.to_owned(),
    }
}

/// `text` safe inside an HTML comment: no `-->` (nor `--!>`) to end it early.
pub fn comment_safe(text: &str) -> String {
    text.replace("-->", "-- >").replace("--!>", "--! >")
}

/// Inline text: code spans as `<code>`, prose escaped.
fn inline(spans: &Inline) -> String {
    spans
        .iter()
        .map(|span| match span {
            Span::Text(t) => escape(t),
            Span::Code(c) => format!("<code>{}</code>", escape(c)),
        })
        .collect()
}

/// Several phrases in one run, `; ` between them.
fn joined(phrases: &[Inline]) -> String {
    phrases.iter().map(inline).collect::<Vec<_>>().join("; ")
}

/// A description (a doc comment): escaped, its `code` spans (as the model pairs backticks)
/// as `<code>`, its blank lines as paragraph breaks (`<br><br>` in a cell).
fn description(text: &str, paragraph_break: &str) -> String {
    let paragraphs: Vec<String> = prose(text).iter().map(inline).collect();
    paragraphs.join(paragraph_break)
}

/// A kind: what the CRD says of it, then its schema's objects.
fn kind_section(page: &mut String, kind: &Kind) {
    let _ = write!(
        page,
        "<h2 id=\"{}\">{}</h2>\n<p>{}</p>\n",
        escape(&kind.anchor),
        escape(&kind.name),
        inline(&kind.summary)
    );
    if let Some(columns) = &kind.columns {
        page.push_str("<p>Printer columns (<code>kubectl get</code>):</p>\n<table>\n<thead><tr><th>name</th><th>type</th><th>JSONPath</th><th>description</th></tr></thead>\n<tbody>\n");
        for c in columns {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                escape(&c.name),
                escape(&c.ty),
                escape(&c.json_path),
                description(&c.description, "<br><br>")
            );
        }
        page.push_str("</tbody>\n</table>\n");
    }
    for object in &kind.objects {
        object_section(page, object);
    }
}

/// One object: its heading, description and rules, then a table of its fields. The root
/// object's fields go under the kind's own heading.
fn object_section(page: &mut String, object: &Object) {
    if !object.root {
        let _ = writeln!(
            page,
            "<h3 id=\"{}\">{}</h3>",
            escape(&object.anchor),
            escape(&object.path)
        );
        if !object.description.is_empty() {
            let _ = writeln!(
                page,
                "<p>{}</p>",
                description(&object.description, "</p>\n<p>")
            );
        }
    }
    if !object.rules.is_empty() {
        let _ = writeln!(page, "<p>Validation: {}</p>", joined(&object.rules));
    }
    page.push_str("<table>\n<thead><tr><th>field</th><th>type</th><th>description</th><th>validation</th></tr></thead>\n<tbody>\n");
    for field in &object.fields {
        let ty = match &field.link {
            Some(target) => link(&escape(&field.ty), &format!("#{target}")),
            None => escape(&field.ty),
        };
        let _ = writeln!(
            page,
            "<tr><td><code>{}</code></td><td>{ty}</td><td>{}</td><td>{}</td></tr>",
            escape(&field.name),
            description(&field.description, "<br><br>"),
            joined(&field.checks)
        );
    }
    page.push_str("</tbody>\n</table>\n");
}
