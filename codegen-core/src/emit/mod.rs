//! Emitters: one module per generated artifact, all reading the validated model.

pub mod apply;
pub mod apply_builtin;
pub mod client;
pub mod clientset;
pub mod crd;
pub mod files;
pub mod informer;

/// Everything generated per resource, in the same order from both front ends: the typed
/// client, then the informer and listers.
pub fn resource_items(r: &crate::model::Resource) -> proc_macro2::TokenStream {
    let mut tokens = client::client_items(r);
    tokens.extend(informer::informer_items(r));
    tokens
}

/// Formats generated items as a Rust source file (prettyplease), without a header, each
/// function marked `#[inline]` (see [`mark_inline`]).
pub fn format_items(tokens: proc_macro2::TokenStream) -> Result<String, syn::Error> {
    let mut file: syn::File = syn::parse2(tokens)?;
    mark_inline(&mut file.items);
    Ok(space_items(&prettyplease::unparse(&file)))
}

/// What a derive expands to: `tokens` with each function marked `#[inline]`, as the CLI
/// writes them (tokens that do not parse as items, such as compile errors, are left as
/// they are).
pub fn inline_items(tokens: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(mut file) => {
            mark_inline(&mut file.items);
            quote::ToTokens::into_token_stream(file)
        }
        Err(_) => tokens,
    }
}

/// Marks every function of generated items `#[inline]`: free functions and the methods of
/// every `impl`, in nested modules too. A non-generic function is otherwise compiled to
/// machine code in the crate that defines it, every verb of every kind whether anything
/// calls it or not (with kube's generic `Api<K>` code and serde for `K` behind each one);
/// marked, it is compiled only where it is used, as generic code is. For 20 kinds this
/// takes a crate's clean build from 14 s to under 3 s (`hack/bench-compile.sh`).
pub fn mark_inline(items: &mut [syn::Item]) {
    let inline: syn::Attribute = syn::parse_quote!(#[inline]);
    let has_inline = |attrs: &[syn::Attribute]| attrs.iter().any(|a| a.path().is_ident("inline"));
    for item in items {
        match item {
            syn::Item::Fn(f) if f.sig.ident != "main" && !has_inline(&f.attrs) => {
                f.attrs.push(inline.clone());
            }
            syn::Item::Impl(i) => {
                for member in &mut i.items {
                    if let syn::ImplItem::Fn(f) = member
                        && !has_inline(&f.attrs)
                    {
                        f.attrs.push(inline.clone());
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, content)) = &mut m.content {
                    mark_inline(content);
                }
            }
            _ => {}
        }
    }
}

/// Puts a blank line between items and between methods, which prettyplease does not, so
/// generated files read like hand-written ones in review.
fn space_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + code.len() / 16);
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
    out
}
