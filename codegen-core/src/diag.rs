//! Diagnostics: every mistake found in the user's annotations, collected with its span.
//!
//! Nothing in the pipeline panics on user input. Each stage pushes a [`Diagnostic`] into a
//! `Ctxt` and carries on, so the user sees every mistake at once. The derive turns them
//! into `compile_error!`s; the CLI renders them as `file:line:col` with a caret.

use std::ops::Range;

use proc_macro2::{Span, TokenStream};

/// One mistake in the user's input, pointing at the offending tokens.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The tokens the mistake is about.
    pub span: Span,
    /// Byte range inside a doc comment's text, when the mistake is one word of a marker.
    ///
    /// Spans cannot point inside a doc comment, so the CLI uses this to put its caret
    /// under the exact word; the derive underlines the whole comment.
    pub doc_range: Option<Range<usize>>,
    /// Lowercase message without a trailing period; a remedy follows after `;`.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic for a whole token span.
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            doc_range: None,
            message: message.into(),
        }
    }

    /// The diagnostic as a `syn::Error`, for the derive.
    pub(crate) fn to_syn_error(&self) -> syn::Error {
        syn::Error::new(self.span, &self.message)
    }
}

/// Where a piece of user input is: a token span, and for markers the word inside the comment.
#[derive(Debug, Clone)]
pub struct Loc {
    /// The tokens (for a marker, the whole doc comment).
    pub span: Span,
    /// Byte range inside the doc comment's text, for markers.
    pub doc_range: Option<Range<usize>>,
}

impl Loc {
    /// A location that is a whole token span.
    pub(crate) fn span(span: Span) -> Self {
        Self {
            span,
            doc_range: None,
        }
    }
}

/// Collects diagnostics; the pipeline checks it once at the end of each stage.
///
/// A context must be checked ([`Ctxt::finish`] or [`Ctxt::into_diagnostics`]): one dropped
/// with its mistakes unread would let a run succeed that should fail, so dropping it
/// unchecked panics (a bug in kube-codegen, never the user's input).
#[derive(Debug, Default)]
pub(crate) struct Ctxt {
    diagnostics: Vec<Diagnostic>,
    /// What is legal but most likely not what the user meant; never fails a run.
    warnings: Vec<Diagnostic>,
    checked: bool,
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !self.checked && !std::thread::panicking() {
            panic!("kube-codegen: a diagnostics context was dropped without being checked (a bug)");
        }
    }
}

impl Ctxt {
    /// An empty collector.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records a mistake spanning `span`.
    pub(crate) fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic::new(span, message));
    }

    /// Records a warning at `span` (see [`Ctxt::warn_at`]).
    pub(crate) fn warn(&mut self, span: Span, message: impl Into<String>) {
        self.warnings.push(Diagnostic::new(span, message));
    }

    /// Records a mistake at `loc`.
    pub(crate) fn error_at(&mut self, loc: &Loc, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            span: loc.span,
            doc_range: loc.doc_range.clone(),
            message: message.into(),
        });
    }

    /// Records a warning at `loc`: legal, but most likely not what the user meant. The CLI
    /// prints it and succeeds; the derive reports it as a deprecation warning
    /// ([`to_warnings`]).
    pub(crate) fn warn_at(&mut self, loc: &Loc, message: impl Into<String>) {
        self.warnings.push(Diagnostic {
            span: loc.span,
            doc_range: loc.doc_range.clone(),
            message: message.into(),
        });
    }

    /// The warnings recorded so far, taken out.
    pub(crate) fn take_warnings(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.warnings)
    }

    /// Records a `syn` parse error, keeping its span.
    pub(crate) fn syn_error(&mut self, err: syn::Error) {
        for e in err {
            self.diagnostics
                .push(Diagnostic::new(e.span(), e.to_string()));
        }
    }

    /// How many mistakes were recorded so far.
    pub(crate) fn len(&self) -> usize {
        self.diagnostics.len()
    }

    /// The recorded mistakes, in the order they were found.
    pub(crate) fn into_diagnostics(mut self) -> Vec<Diagnostic> {
        self.checked = true;
        std::mem::take(&mut self.diagnostics)
    }

    /// `Ok(value)` when nothing was recorded, the diagnostics otherwise.
    pub(crate) fn finish<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        let diagnostics = self.into_diagnostics();
        if diagnostics.is_empty() {
            Ok(value)
        } else {
            Err(diagnostics)
        }
    }
}

/// Warnings for the derive: stable Rust has no warnings from proc macros, so each becomes the
/// use of a deprecated constant at its span, which rustc reports as a warning with the
/// message (`use of deprecated constant `_::kube_codegen`: ...`).
pub(crate) fn to_warnings(diagnostics: &[Diagnostic]) -> TokenStream {
    diagnostics
        .iter()
        .map(|d| {
            let note = &d.message;
            quote::quote_spanned! {d.span=>
                #[allow(clippy::let_unit_value)]
                const _: () = {
                    #[deprecated(note = #note)]
                    #[allow(non_upper_case_globals)]
                    const kube_codegen: () = ();
                    let _ = kube_codegen;
                };
            }
        })
        .collect()
}

/// All diagnostics as `compile_error!` invocations, for the derive.
pub(crate) fn to_compile_errors(diagnostics: &[Diagnostic]) -> TokenStream {
    diagnostics
        .iter()
        .map(|d| d.to_syn_error().to_compile_error())
        .collect()
}

/// The closest candidate to `word` within a small edit distance, for "did you mean".
pub(crate) fn suggest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Appends "; did you mean `x`" when a candidate is close enough.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match suggest(word, candidates) {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

/// Edit distance over chars where swapping two neighbours counts as one edit
/// (optimal string alignment), so `lsit` is one edit from `list`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words_only() {
        assert_eq!(
            suggest("nonNamespace", ["nonNamespaced", "noStatus"]),
            Some("nonNamespaced")
        );
        assert_eq!(suggest("grup", ["group", "version"]), Some("group"));
        assert_eq!(suggest("lsit", ["list", "get"]), Some("list"));
        assert_eq!(suggest("zzzzzz", ["group", "version"]), None);
        assert_eq!(
            did_you_mean("verison", ["version"]),
            "; did you mean `version`?"
        );
    }

    #[test]
    #[should_panic(expected = "dropped without being checked")]
    fn an_unchecked_context_is_a_bug() {
        let mut cx = Ctxt::new();
        cx.error(Span::call_site(), "a mistake nobody reads");
    }

    #[test]
    fn a_checked_context_hands_over_its_mistakes() {
        let mut cx = Ctxt::new();
        cx.error(Span::call_site(), "one");
        assert_eq!(cx.finish(()).unwrap_err().len(), 1);
        assert!(Ctxt::new().finish(7).is_ok_and(|v| v == 7));
    }
}
