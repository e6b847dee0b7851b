//! Reading one file's text before syn parses it: input nested too deep for the parser is
//! refused, and markers written in line comments, as Go writes them, become doc comments.

use proc_macro2::Span;

use crate::diag::Ctxt;

/// How deep brackets may nest in an API file. Deeper input is refused with a diagnostic
/// before it reaches the parser, whose recursion it would otherwise overflow.
pub const MAX_NESTING: usize = 128;

/// Parses one file of the tree: markers in line comments are read like doc comments (see
/// [`line_comment_markers`]), and input nested deeper than [`MAX_NESTING`] is refused.
pub(super) fn parse_source(cx: &mut Ctxt, text: &str) -> Result<syn::File, syn::Error> {
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
