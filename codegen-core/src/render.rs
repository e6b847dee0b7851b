//! Diagnostics as the CLI prints them: `file:line:col`, the source line, a caret.

use std::fmt::Write;

use crate::diag::Diagnostic;
use crate::source::SourceFile;

/// Where a diagnostic points: 1-based line, 1-based column, caret width (in chars).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in chars.
    pub column: usize,
    /// Caret width, at least 1.
    pub width: usize,
}

/// Resolves a diagnostic's span (and, for markers, the word inside the doc comment).
pub fn position(file: &SourceFile, d: &Diagnostic) -> Position {
    let start = d.span.start();
    let end = d.span.end();
    let line_text = file
        .text
        .lines()
        .nth(start.line.saturating_sub(1))
        .unwrap_or("");
    let mut column = start.column;
    let mut width = if end.line == start.line {
        end.column.saturating_sub(start.column)
    } else {
        line_text.chars().count().saturating_sub(start.column)
    };
    if let Some(range) = &d.doc_range {
        let from_token: String = line_text.chars().skip(start.column).collect();
        // `///` and `//!` comments: the doc string starts right after the three characters.
        // (A marker in a line comment, `// +genclient`, is read as `///+genclient`.)
        let prefix = if from_token.starts_with("///")
            || from_token.starts_with("//!")
            || from_token.starts_with("// ")
        {
            Some(3)
        } else if from_token.starts_with("#[doc") || from_token.starts_with("#![doc") {
            from_token.find('"').map(|q| q + 1)
        } else {
            None
        };
        if let Some(prefix) = prefix {
            let text = &from_token[prefix..];
            if range.end <= text.len()
                && text.is_char_boundary(range.start)
                && text.is_char_boundary(range.end)
            {
                column = start.column
                    + from_token[..prefix].chars().count()
                    + text[..range.start].chars().count();
                width = text[range.clone()].chars().count();
            }
        }
    }
    Position {
        line: start.line.max(1),
        column: column + 1,
        width: width.max(1),
    }
}

/// `error: message`, `--> file:line:col`, the line and a caret, as rustc prints them.
pub fn render(file: &SourceFile, d: &Diagnostic) -> String {
    render_as("error", file, d)
}

/// [`render`] with another severity (`warning`).
pub fn render_as(severity: &str, file: &SourceFile, d: &Diagnostic) -> String {
    let pos = position(file, d);
    let line_text = file.text.lines().nth(pos.line - 1).unwrap_or("");
    let number = pos.line.to_string();
    let pad = " ".repeat(number.len());
    let mut out = String::new();
    let _ = writeln!(out, "{severity}: {}", d.message);
    let _ = writeln!(
        out,
        "{pad}--> {}:{}:{}",
        file.path.display(),
        pos.line,
        pos.column
    );
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{number} | {line_text}");
    let caret_pad: String = line_text
        .chars()
        .take(pos.column - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, "{pad} | {caret_pad}{}", "^".repeat(pos.width));
    out
}
