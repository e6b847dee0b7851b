//! The Markdown pages of `docs`: the model's pages as mdBook and GitHub render them, with
//! anchors as they give headings.
//!
//! Every text of the CRDs (names, types, descriptions, column names, values, rules and their
//! messages) is escaped for the place it goes, so none of it becomes markup: `&`, `<` and
//! `>` as entities (no raw HTML), the characters of inline Markdown (`\`, backticks, `*`,
//! `_`, `[`, `]`, `|`, `~`, `$`) backslash-escaped, in headings also `#`, `{`, `}` (mdBook's
//! heading attributes), and `-`, quotes and `..` (which mdBook's smart punctuation would
//! turn into dashes, curly quotes and an ellipsis: a heading shows its path as written, and
//! `--` would change its anchor), and a
//! paragraph's first character when it could open a block. Code spans get a backtick fence
//! longer than any run of backticks inside them, padded when they start or end with one, and
//! `|` in table cells as `\|`. Line breaks become spaces, so a text never leaves its cell or
//! line. The pages hold no HTML but their header comment, and every link is one the
//! generator makes: to a heading of the page, or to another page.

use std::fmt::Write as _;

use super::model::{Inline, Kind, Object, Page, Span, href, one_line, prose, url_segment};

/// Where a text goes: each place has its own characters that would be markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Running text: a paragraph or a list item.
    Line,
    /// A table cell: `|` ends it, in code spans too.
    Cell,
    /// A heading: `#`, `{` and `}` at its end are markup, and its text makes its anchor.
    Heading,
}

/// A page of one group and version, after `head` (the header and the command).
pub fn page(head: &str, page: &Page) -> String {
    let mut out = format!("{head}# {}\n\n", heading(&page.title()));
    for kind in &page.kinds {
        let _ = writeln!(
            out,
            "- {}",
            link(&text(&kind.name, Place::Line), &format!("#{}", kind.anchor))
        );
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
            "- {}",
            link(
                &text(&page.title(), Place::Line),
                &format!("{}.md", url_segment(&page.stem()))
            )
        );
    }
    out
}

/// `[shown](destination)`, or `shown` alone when the destination could run script.
fn link(shown: &str, destination: &str) -> String {
    match href(destination) {
        Some(destination) => format!("[{shown}]({destination})"),
        None => shown.to_owned(),
    }
}

/// `title` as a heading's text: on one line, escaped.
fn heading(title: &str) -> String {
    text(&one_line(title), Place::Heading)
}

/// `s` as literal text in `place`: nothing of it markup, on one line.
fn text(s: &str, place: Place) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '#' | '{' | '}' | '-' | '"' | '\'' if place == Place::Heading => {
                out.push('\\');
                out.push(c);
            }
            '.' if place == Place::Heading && chars.peek() == Some(&'.') => out.push_str("\\."),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `s` as a code span in `place`: a fence of one backtick more than its longest run of them,
/// padded with a space on each side when it starts or ends with a backtick or a space (which
/// CommonMark strips again), on one line; nothing for an empty `s`.
fn code(s: &str, place: Place) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let spaced = s.starts_with(' ') && s.ends_with(' ') && !s.trim_matches(' ').is_empty();
    let pad = if s.starts_with('`') || s.ends_with('`') || spaced {
        " "
    } else {
        ""
    };
    let body = match place {
        Place::Cell => s.replace('|', "\\|"),
        Place::Line | Place::Heading => s,
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// Inline text: code spans as code, prose escaped.
fn inline(spans: &Inline, place: Place) -> String {
    spans
        .iter()
        .map(|span| match span {
            Span::Text(t) => text(t, place),
            Span::Code(c) => code(c, place),
        })
        .collect()
}

/// Several phrases in one run, `; ` between them.
fn joined(phrases: &[Inline], place: Place) -> String {
    phrases
        .iter()
        .map(|p| inline(p, place))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A description in one table cell: its paragraphs on one line.
fn cell(description: &str) -> String {
    let paragraphs = prose(description);
    let shown: Vec<String> = paragraphs.iter().map(|p| inline(p, Place::Cell)).collect();
    shown.join(" ")
}

/// `line` (escaped inline text) safe at the start of a line: a first character that could
/// open a block (`#`, `>`, `-`, `+`, `=`, `:`, `|`, ...) or the `.` or `)` of a number that
/// would start a list, backslash-escaped.
fn paragraph(line: String) -> String {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let Some(first) = line.chars().next() else {
        return line;
    };
    if digits > 0 {
        return match line.as_bytes().get(digits) {
            Some(b'.' | b')') => format!("{}\\{}", &line[..digits], &line[digits..]),
            _ => line,
        };
    }
    // `\` and `&` start escapes and entities `text` wrote; a backtick starts a code span
    // whose closing fence, on the same line, keeps it from reading as a code block's fence.
    if first.is_ascii_punctuation() && !matches!(first, '\\' | '&' | '`') {
        format!("\\{line}")
    } else {
        line
    }
}

/// A kind: what the CRD says of it, then its schema's objects.
fn kind_section(page: &mut String, kind: &Kind) {
    let _ = write!(
        page,
        "\n## {}\n\n{}\n",
        heading(&kind.name),
        paragraph(inline(&kind.summary, Place::Line))
    );
    if let Some(columns) = &kind.columns {
        page.push_str("\nPrinter columns (`kubectl get`):\n\n| name | type | JSONPath | description |\n|---|---|---|---|\n");
        for c in columns {
            let _ = writeln!(
                page,
                "| {} | {} | {} | {} |",
                text(&one_line(&c.name), Place::Cell),
                text(&one_line(&c.ty), Place::Cell),
                code(&c.json_path, Place::Cell),
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
        let _ = write!(page, "\n### {}\n\n", heading(&object.path));
        for p in prose(&object.description) {
            let _ = write!(page, "{}\n\n", paragraph(inline(&p, Place::Line)));
        }
    }
    if !object.rules.is_empty() {
        let _ = write!(
            page,
            "Validation: {}\n\n",
            joined(&object.rules, Place::Line)
        );
    }
    page.push_str("| field | type | description | validation |\n|---|---|---|---|\n");
    for field in &object.fields {
        let ty = text(&one_line(&field.ty), Place::Cell);
        let ty = match &field.link {
            Some(target) => link(&ty, &format!("#{target}")),
            None => ty,
        };
        let _ = writeln!(
            page,
            "| {} | {ty} | {} | {} |",
            code(&field.name, Place::Cell),
            cell(&field.description),
            joined(&field.checks, Place::Cell)
        );
    }
}
