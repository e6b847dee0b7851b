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
    finish(&mut file.items);
    Ok(space_items(&prettyplease::unparse(&file)))
}

/// The last pass over generated items, the same from both front ends: forwarders return
/// their callee's future ([`forward_futures`]) and every function is `#[inline]`
/// ([`mark_inline`]).
fn finish(items: &mut [syn::Item]) {
    forward_futures(items);
    mark_inline(items);
}

/// What a derive expands to: `tokens` after the same last pass as the CLI's files
/// (`finish`) (tokens that do not parse as items, such as compile errors, are left as
/// they are).
pub fn inline_items(tokens: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(mut file) => {
            finish(&mut file.items);
            quote::ToTokens::into_token_stream(file)
        }
        Err(_) => tokens,
    }
}

/// Turns each client method written as
/// `async fn m(&self, a: &A) -> R { self.handle.__handle().m(a).await }` into
/// `fn m<'a>(&'a self, a: &'a A) -> impl Future<Output = R> + 'a { self.handle.__handle().m(a) }`:
/// the caller awaits the same future, and the method has no state machine of its own to
/// type-check and compile (for 20 kinds, a crate's `cargo check` goes from 2.4 s to 1.4 s).
/// Methods whose result holds an `impl Trait` (`watch`) stay `async`.
pub fn forward_futures(items: &mut [syn::Item]) {
    for item in items {
        match item {
            syn::Item::Impl(i) => {
                for member in &mut i.items {
                    if let syn::ImplItem::Fn(f) = member {
                        forward_future(f);
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, content)) = &mut m.content {
                    forward_futures(content);
                }
            }
            _ => {}
        }
    }
}

fn forward_future(f: &mut syn::ImplItemFn) {
    use quote::ToTokens;
    if f.sig.asyncness.is_none() {
        return;
    }
    let syn::ReturnType::Type(_, output) = &f.sig.output else {
        return;
    };
    if output.to_token_stream().to_string().contains("impl") {
        return;
    }
    // The body must be one `self.handle.__handle().<method>(..).await`.
    let [syn::Stmt::Expr(syn::Expr::Await(awaited), None)] = f.block.stmts.as_slice() else {
        return;
    };
    let syn::Expr::MethodCall(call) = &*awaited.base else {
        return;
    };
    if call.receiver.to_token_stream().to_string().replace(' ', "") != "self.handle.__handle()" {
        return;
    }
    let call = syn::Expr::MethodCall(call.clone());
    // Every borrow gets the one lifetime of the returned future: only plain `&self` and
    // references without a lifetime of their own are rewritten.
    let eligible = f.sig.inputs.iter().all(|input| match input {
        syn::FnArg::Receiver(r) => matches!(r.kind, syn::ReceiverKind::Reference(_, None, None)),
        syn::FnArg::Typed(arg) => {
            !matches!(&*arg.ty, syn::Type::Reference(t) if t.lifetime.is_some())
        }
    });
    if !eligible {
        return;
    }
    let lifetime: syn::Lifetime = syn::parse_quote!('a);
    for input in &mut f.sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                if let syn::ReceiverKind::Reference(_, lt, _) = &mut r.kind {
                    *lt = Some(lifetime.clone());
                }
            }
            syn::FnArg::Typed(arg) => {
                if let syn::Type::Reference(ty) = &mut *arg.ty {
                    ty.lifetime = Some(lifetime.clone());
                }
            }
        }
    }
    let output = (**output).clone();
    f.sig.asyncness = None;
    f.sig.generics.params.insert(0, syn::parse_quote!('a));
    f.sig.output = syn::parse_quote!(-> impl ::core::future::Future<Output = #output> + 'a);
    f.block.stmts = vec![syn::Stmt::Expr(call, None)];
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
