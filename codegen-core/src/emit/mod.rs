//! Emitters: one module per generated artifact, all reading the validated model.

pub(crate) mod apply;
pub(crate) mod client;
pub(crate) mod clientset;
pub(crate) mod conversion;
pub(crate) mod crd;
pub mod files;
pub(crate) mod fresh;
pub(crate) mod informer;

/// Everything generated per resource, in the same order from both front ends: the typed
/// client, then the informer and listers.
pub(crate) fn resource_items(r: &crate::model::Resource) -> proc_macro2::TokenStream {
    let mut tokens = client::client_items(r);
    tokens.extend(informer::informer_items(r));
    tokens
}

/// Formats generated items as a Rust source file (prettyplease), without a header. The
/// emitters write final code: this is the one formatting pass and changes no syntax.
pub fn format_items(tokens: proc_macro2::TokenStream) -> Result<String, syn::Error> {
    let file: syn::File = syn::parse2(tokens)?;
    Ok(print("", &file))
}

/// [`format_items`] for generated code as text (what formatting threads receive), after
/// `header`; the error is the parser's message.
pub(crate) fn format_source(header: &str, text: &str) -> Result<String, String> {
    let file = syn::parse_file(text).map_err(|e| e.to_string())?;
    Ok(print(header, &file))
}

/// [`format_items`] after `header`; the error is the parser's message.
pub(crate) fn format_tokens(
    header: &str,
    tokens: proc_macro2::TokenStream,
) -> Result<String, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| e.to_string())?;
    Ok(print(header, &file))
}

/// `header`, then `file` printed and spaced.
fn print(header: &str, file: &syn::File) -> String {
    let code = prettyplease::unparse(file);
    let mut out = String::with_capacity(header.len() + code.len() + code.len() / 16);
    out.push_str(header);
    space_items(&code, &mut out);
    out
}

/// Puts a blank line between items and between methods, which prettyplease does not, so
/// generated files read like hand-written ones in review.
fn space_items(code: &str, out: &mut String) {
    let mut prev = "";
    for line in code.lines() {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim_start();
        let prev_indent = prev.len() - prev.trim_start().len();
        let prev_body = prev.trim_start();
        let starts_item = !body.starts_with('}') && !body.starts_with(')') && !body.is_empty();
        let is_decl = |b: &str| {
            ["use ", "pub use ", "mod ", "pub mod "]
                .iter()
                .any(|p| b.starts_with(p))
        };
        let item_ended = (prev_indent == indent && (prev_body == "}" || prev_body == "};"))
            || (indent == 0
                && prev_indent == 0
                && prev_body.ends_with(';')
                && !prev_body.starts_with("//")
                && !(is_decl(prev_body) && is_decl(body)))
            || (indent == 0 && prev_body.starts_with("//!") && !body.starts_with("//!"));
        if starts_item && item_ended && (indent == 0 || indent == 4) {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        prev = line;
    }
}
