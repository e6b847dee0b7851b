//! Third-party text in the Rust that import writes: descriptions as doc comments that never
//! read as markers, and other text (paths, file names) as comments that stay on their line.
//!
//! Both front ends read a doc line whose text, trimmed of any whitespace, starts with `+` as a
//! marker (codegen-core's `for_each_marker`; the built CRD's descriptions drop such lines),
//! wherever it stands: first, after a blank line, after other text, indented. So no line of
//! a description may start with `+`: such a line is joined to the nearest line of text before
//! it (blank lines between dropped), which says the same words, and a description that
//! starts with one has nothing to join it to, so its first `+` is written `\+` (a Markdown
//! escape: rustdoc shows `+`, the rebuilt description keeps the backslash, which import
//! reports).

/// Characters rustc refuses in comments (`text_direction_codepoint_in_comment`, an error by
/// default): the bidirectional controls.
const BIDI: &[char] = &[
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];

/// A description as doc-comment text, and what of it could not be written as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocText {
    /// The text: lines separated by `\n`, none starting with `+`.
    pub text: String,
    /// What differs from the description, for the exceptions.
    pub notes: Vec<String>,
}

/// `raw` (a description) as doc text that no reader takes for a marker; see the module docs.
/// A carriage return is a line break (rustc refuses a bare one in a doc comment), and a
/// bidirectional control is written as its `\u{...}` escape.
pub fn doc_text(raw: &str) -> DocText {
    let mut notes = Vec::new();
    let normalized = raw.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = Vec::new();
    for line in normalized.split('\n') {
        if !line.trim_start().starts_with('+') {
            lines.push(line.to_owned());
            continue;
        }
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        match lines.last_mut() {
            Some(prev) => {
                prev.truncate(prev.trim_end().len());
                prev.push(' ');
                prev.push_str(line.trim());
            }
            None => {
                lines.push(format!("\\{}", line.trim()));
                notes.push(
                    "the description starts with `+`, which would read as a marker; it is written `\\+` (a Markdown escape), so the rebuilt description has the backslash"
                        .to_owned(),
                );
            }
        }
    }
    let mut text = lines.join("\n");
    if text.contains(BIDI) {
        text = escape_bidi(&text);
        notes.push(
            "the description's bidirectional control characters are written as `\\u{...}` (rustc refuses them in comments)"
                .to_owned(),
        );
    }
    DocText { text, notes }
}

/// `text` for a `//` or `//!` comment: on one line (control characters escaped, as Rust's
/// `{:?}` escapes them) and without what rustc refuses in comments.
pub fn comment_text(text: &str) -> String {
    if !text.contains(|c: char| c.is_control() || BIDI.contains(&c)) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() || BIDI.contains(&c) {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn escape_bidi(text: &str) -> String {
    text.chars()
        .map(|c| {
            if BIDI.contains(&c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What codegen-core reads as a marker: a doc line whose trimmed text starts with `+`.
    fn reads_as_marker(doc: &str) -> bool {
        doc.split('\n').any(|l| l.trim().starts_with('+'))
    }

    #[test]
    fn no_line_of_a_description_reads_as_a_marker_wherever_it_stands() {
        for (raw, text, escaped) in [
            ("+a", "\\+a", true),
            (
                "+kubebuilder:validation:MaxLength=1\nThe name.",
                "\\+kubebuilder:validation:MaxLength=1\nThe name.",
                true,
            ),
            (
                "The name.\n\n+kubebuilder:validation:MaxLength=1",
                "The name. +kubebuilder:validation:MaxLength=1",
                false,
            ),
            ("The name.\n+x", "The name. +x", false),
            ("The name.\n   \t+x\nmore", "The name. +x\nmore", false),
            ("A.\n\n+x\n\nB.", "A. +x\n\nB.", false),
            ("A.\r+x\r\nB.", "A. +x\nB.", false),
            ("A.\n\u{3000}+x", "A. +x", false),
            ("A.\n\u{2028}+x", "A. +x", false),
            ("+a\n+b", "\\+a +b", true),
            ("A. +b", "A. +b", false),
        ] {
            let doc = doc_text(raw);
            assert_eq!(doc.text, text, "{raw:?}");
            assert!(!reads_as_marker(&doc.text), "{raw:?}");
            assert_eq!(!doc.notes.is_empty(), escaped, "{raw:?}");
            // Joined lines say the same words.
            if !escaped {
                let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
                assert_eq!(words(&doc.text), words(raw), "{raw:?}");
            }
        }
    }

    #[test]
    fn comments_stay_on_their_line_and_bidi_controls_are_escaped() {
        assert_eq!(comment_text("a\n+b\rc"), "a\\n+b\\rc");
        assert_eq!(comment_text("plain"), "plain");
        assert_eq!(comment_text("x\u{202E}y"), "x\\u{202e}y");
        let doc = doc_text("x\u{202E}y");
        assert_eq!(doc.text, "x\\u{202e}y");
        assert_eq!(doc.notes.len(), 1);
    }
}
