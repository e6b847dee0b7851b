//! The `+genclient` family, from `/// +genclient...` doc markers or `#[genclient(...)]`.
//!
//! Both spellings land in one raw [`GenclientAttrs`]; the model validates it. Markers keep
//! Go's names (`+genclient:nonNamespaced`), the attribute uses Rust's (`non_namespaced`),
//! and verbs are accepted in either case style (`updateStatus` or `update_status`).

use proc_macro2::Span;
use quote::ToTokens;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, meta::ParseNestedMeta};

use crate::diag::{Ctxt, Loc, did_you_mean, suggest};

/// A value with its location.
#[derive(Debug, Clone)]
pub(crate) struct Located<T> {
    /// The value.
    pub(crate) value: T,
    /// Where it was written.
    pub(crate) loc: Loc,
}

/// A list of verbs as written (`onlyVerbs=` / `skipVerbs=`); names are checked in the model.
#[derive(Debug, Clone)]
pub(crate) struct VerbList {
    /// The whole marker or key.
    pub(crate) loc: Loc,
    /// Each verb name as written.
    pub(crate) verbs: Vec<Located<String>>,
}

/// A type named in a `+genclient:method` (`input=` / `result=`).
#[derive(Debug, Clone)]
pub(crate) enum TypeRef {
    /// Written as Rust, in the attribute.
    Rust(Box<syn::Type>),
    /// Written as text in a marker: a Rust path or a Go path such as
    /// `k8s.io/api/autoscaling/v1.Scale`.
    Text(String),
}

/// One `+genclient:method=...` or `#[genclient(method(...))]`.
#[derive(Debug, Clone)]
pub(crate) struct MethodAttr {
    /// The whole method spec.
    pub(crate) loc: Loc,
    /// The method name as written (`GetScale` or `get_scale`).
    pub(crate) name: Option<Located<String>>,
    /// `verb=`.
    pub(crate) verb: Option<Located<String>>,
    /// `subresource=`.
    pub(crate) subresource: Option<Located<String>>,
    /// `input=`.
    pub(crate) input: Option<Located<TypeRef>>,
    /// `result=`.
    pub(crate) result: Option<Located<TypeRef>>,
}

/// Everything the `+genclient` family said about one type, not yet validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct GenclientAttrs {
    /// `+genclient` / `#[genclient]`: the type asks for a client.
    pub(crate) enabled: Option<Loc>,
    /// `+genclient:nonNamespaced`.
    pub(crate) non_namespaced: Option<Loc>,
    /// `+genclient:noStatus`.
    pub(crate) no_status: Option<Loc>,
    /// `+genclient:noVerbs`.
    pub(crate) no_verbs: Option<Loc>,
    /// `+genclient:readonly`.
    pub(crate) readonly: Option<Loc>,
    /// `+genclient:onlyVerbs=`.
    pub(crate) only_verbs: Option<VerbList>,
    /// `+genclient:skipVerbs=`.
    pub(crate) skip_verbs: Option<VerbList>,
    /// `+genclient:method=`, in order.
    pub(crate) methods: Vec<MethodAttr>,
    /// `+resourceName=`.
    pub(crate) resource_name: Option<Located<String>>,
    /// The first sub-marker seen, to report sub-markers used without `+genclient`.
    pub(crate) first_option: Option<Loc>,
}

pub(crate) const MARKER_OPTIONS: &[&str] = &[
    "nonNamespaced",
    "noStatus",
    "noVerbs",
    "readonly",
    "onlyVerbs",
    "skipVerbs",
    "method",
];
const ATTR_KEYS: &[&str] = &[
    "non_namespaced",
    "no_status",
    "no_verbs",
    "readonly",
    "only_verbs",
    "skip_verbs",
    "method",
    "resource_name",
];
const METHOD_KEYS: &[&str] = &["verb", "subresource", "input", "result"];

/// One line of doc comment text and where it is.
struct DocLine<'a> {
    span: Span,
    /// Byte offset of `text` in the doc attribute's string.
    offset: usize,
    text: &'a str,
}

impl DocLine<'_> {
    fn loc(&self, start: usize, end: usize) -> Loc {
        Loc {
            span: self.span,
            doc_range: Some(self.offset + start..self.offset + end),
        }
    }
}

/// The string of a `#[doc = "..."]` attribute.
pub(crate) fn doc_string(attr: &Attribute) -> Option<LitStr> {
    if !attr.path().is_ident("doc") {
        return None;
    }
    match &attr.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Calls `f` with every trimmed doc line that starts with `+`, and its location.
pub(crate) fn for_each_marker(
    attrs: &[Attribute],
    mut f: impl FnMut(&str, &dyn Fn(usize, usize) -> Loc),
) {
    for attr in attrs {
        let Some(lit) = doc_string(attr) else {
            continue;
        };
        let value = lit.value();
        let mut offset = 0;
        for raw in value.split_inclusive('\n') {
            let trimmed_start = raw.len() - raw.trim_start().len();
            let text = raw.trim();
            if text.starts_with('+') {
                let line = DocLine {
                    span: lit.span(),
                    offset: offset + trimmed_start,
                    text,
                };
                f(line.text, &|s, e| line.loc(s, e));
            }
            offset += raw.len();
        }
    }
}

impl GenclientAttrs {
    /// Reads the `+genclient` markers in the doc comments and every `#[genclient]` attribute.
    pub(crate) fn from_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = GenclientAttrs::default();
        for_each_marker(attrs, |text, loc| out.read_marker(cx, text, loc));
        for attr in attrs.iter().filter(|a| a.path().is_ident("genclient")) {
            out.read_attribute(cx, attr);
        }
        out
    }

    fn read_marker(&mut self, cx: &mut Ctxt, text: &str, loc: &dyn Fn(usize, usize) -> Loc) {
        // `text` starts with `+`; split `+name[:option][=value]`.
        let body = &text[1..];
        let name_end = body.find([':', '=']).unwrap_or(body.len());
        let name = &body[..name_end];
        let rest = &body[name_end..];
        let name_loc = loc(0, 1 + name_end);
        match name {
            "genclient" => {
                if let Some(value) = rest.strip_prefix('=') {
                    cx.error_at(
                        &loc(0, text.len()),
                        format!(
                            "`+genclient` takes no value, found `={value}`; write `+genclient`, or remove the marker to generate no client"
                        ),
                    );
                } else if let Some(option) = rest.strip_prefix(':') {
                    self.read_marker_option(cx, option, &|s, e| loc(1 + name_end + 1 + s, 1 + name_end + 1 + e));
                } else {
                    set_loc(cx, &mut self.enabled, name_loc, "+genclient");
                }
            }
            "resourceName" => match rest.strip_prefix('=') {
                Some(v) if !v.is_empty() => {
                    let located = Located { value: v.to_owned(), loc: loc(0, text.len()) };
                    if self.resource_name.is_some() {
                        cx.error_at(&located.loc, "duplicate marker `+resourceName`");
                    }
                    self.resource_name = Some(located);
                }
                _ => cx.error_at(&loc(0, text.len()), "`+resourceName` needs a value; write `+resourceName=<plural>`"),
            },
            "groupName" | "groupGoName" => cx.error_at(
                &name_loc,
                format!(
                    "`+{name}` is a package marker, not a type marker; put it in the `//!` docs of the version module"
                ),
            ),
            other => {
                // Markers of other generators are not ours to judge, but a near miss of ours is a typo.
                if let Some(s) = suggest(other, ["genclient", "resourceName"]) {
                    cx.error_at(&name_loc, format!("unknown marker `+{other}`; did you mean `+{s}`?"));
                }
            }
        }
    }

    fn read_marker_option(
        &mut self,
        cx: &mut Ctxt,
        option: &str,
        loc: &dyn Fn(usize, usize) -> Loc,
    ) {
        let key_end = option.find('=').unwrap_or(option.len());
        let key = &option[..key_end];
        let value = option.get(key_end + 1..);
        let key_loc = loc(0, key_end);
        self.first_option.get_or_insert_with(|| key_loc.clone());
        let flag = |cx: &mut Ctxt, slot: &mut Option<Loc>| {
            if value.is_some() {
                cx.error_at(
                    &loc(0, option.len()),
                    format!("`+genclient:{key}` takes no value"),
                );
            }
            set_loc(cx, slot, key_loc.clone(), &format!("+genclient:{key}"));
        };
        match key {
            "nonNamespaced" => flag(cx, &mut self.non_namespaced),
            "noStatus" => flag(cx, &mut self.no_status),
            "noVerbs" => flag(cx, &mut self.no_verbs),
            "readonly" => flag(cx, &mut self.readonly),
            "onlyVerbs" | "skipVerbs" => {
                let list = verb_list_from_text(
                    value.unwrap_or(""),
                    key_end + 1,
                    &loc(0, option.len()),
                    loc,
                );
                let slot = if key == "onlyVerbs" {
                    &mut self.only_verbs
                } else {
                    &mut self.skip_verbs
                };
                set_list(cx, slot, list, &format!("+genclient:{key}"));
            }
            "method" => {
                let method = method_from_text(
                    cx,
                    value.unwrap_or(""),
                    key_end + 1,
                    &loc(0, option.len()),
                    loc,
                );
                self.methods.push(method);
            }
            _ => {
                let hint = match suggest(key, MARKER_OPTIONS.iter().copied()) {
                    Some(s) => format!("; did you mean `+genclient:{s}`?"),
                    None => format!(
                        "; the options are {}",
                        MARKER_OPTIONS
                            .iter()
                            .map(|o| format!("`:{o}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                cx.error_at(&key_loc, format!("unknown marker `+genclient:{key}`{hint}"));
            }
        }
    }

    fn read_attribute(&mut self, cx: &mut Ctxt, attr: &Attribute) {
        let attr_loc = Loc::span(attr.path().segments[0].ident.span());
        if let syn::Meta::Path(_) = attr.meta {
            set_loc(cx, &mut self.enabled, attr_loc, "#[genclient]");
            return;
        }
        self.enabled.get_or_insert(attr_loc);
        let result = attr.parse_nested_meta(|meta| {
            let Some(ident) = meta.path.get_ident() else {
                return Err(meta.error(
                    "expected a `#[genclient]` option such as `readonly` or `only_verbs(...)`",
                ));
            };
            let key = ident.to_string();
            let key_loc = Loc::span(ident.span());
            self.first_option.get_or_insert_with(|| key_loc.clone());
            match key.as_str() {
                "non_namespaced" => {
                    set_loc(cx, &mut self.non_namespaced, key_loc, "non_namespaced")
                }
                "no_status" => set_loc(cx, &mut self.no_status, key_loc, "no_status"),
                "no_verbs" => set_loc(cx, &mut self.no_verbs, key_loc, "no_verbs"),
                "readonly" => set_loc(cx, &mut self.readonly, key_loc, "readonly"),
                "only_verbs" | "skip_verbs" => {
                    let list = verb_list_from_meta(&meta, key_loc)?;
                    let slot = if key == "only_verbs" {
                        &mut self.only_verbs
                    } else {
                        &mut self.skip_verbs
                    };
                    set_list(cx, slot, list, &key);
                }
                "resource_name" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    let located = Located {
                        value: lit.value(),
                        loc: Loc::span(lit.span()),
                    };
                    if self.resource_name.is_some() {
                        cx.error(lit.span(), "duplicate `resource_name`");
                    }
                    self.resource_name = Some(located);
                }
                "method" => {
                    let method = method_from_meta(cx, &meta, key_loc)?;
                    self.methods.push(method);
                }
                _ => {
                    cx.error(
                        ident.span(),
                        format!(
                            "unknown option `{key}` in `#[genclient(...)]`{}",
                            did_you_mean(&key, ATTR_KEYS.iter().copied())
                        ),
                    );
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<Expr>()?;
                    } else if meta.input.peek(syn::token::Paren) {
                        meta.input.parse::<proc_macro2::TokenTree>()?;
                    }
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
}

fn set_loc(cx: &mut Ctxt, slot: &mut Option<Loc>, loc: Loc, what: &str) {
    if slot.is_some() {
        cx.error_at(&loc, format!("duplicate `{what}`"));
    } else {
        *slot = Some(loc);
    }
}

fn set_list(cx: &mut Ctxt, slot: &mut Option<VerbList>, list: VerbList, what: &str) {
    if slot.is_some() {
        cx.error_at(
            &list.loc,
            format!("duplicate `{what}`; list every verb in one"),
        );
    } else {
        *slot = Some(list);
    }
}

/// `get,list,watch` starting at byte `base` of the option text.
fn verb_list_from_text(
    value: &str,
    base: usize,
    whole: &Loc,
    loc: &dyn Fn(usize, usize) -> Loc,
) -> VerbList {
    let mut verbs = Vec::new();
    let mut start = 0;
    for part in value.split(',') {
        let lead = part.len() - part.trim_start().len();
        let word = part.trim();
        if !word.is_empty() {
            let s = base + start + lead;
            verbs.push(Located {
                value: word.to_owned(),
                loc: loc(s, s + word.len()),
            });
        }
        start += part.len() + 1;
    }
    VerbList {
        loc: whole.clone(),
        verbs,
    }
}

/// `only_verbs(get, list)` or `only_verbs = "get,list"`.
fn verb_list_from_meta(meta: &ParseNestedMeta<'_>, key_loc: Loc) -> syn::Result<VerbList> {
    let mut verbs = Vec::new();
    if meta.input.peek(syn::Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        for word in lit
            .value()
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            verbs.push(Located {
                value: word.to_owned(),
                loc: Loc::span(lit.span()),
            });
        }
    } else {
        meta.parse_nested_meta(|inner| {
            let ident = inner
                .path
                .get_ident()
                .ok_or_else(|| inner.error("expected a verb name"))?;
            verbs.push(Located {
                value: ident.to_string(),
                loc: Loc::span(ident.span()),
            });
            Ok(())
        })?;
    }
    Ok(VerbList {
        loc: key_loc,
        verbs,
    })
}

/// `Name,verb=get,subresource=scale,result=T` starting at byte `base` of the option text.
fn method_from_text(
    cx: &mut Ctxt,
    value: &str,
    base: usize,
    whole: &Loc,
    loc: &dyn Fn(usize, usize) -> Loc,
) -> MethodAttr {
    let mut method = MethodAttr {
        loc: whole.clone(),
        name: None,
        verb: None,
        subresource: None,
        input: None,
        result: None,
    };
    let mut start = 0;
    for (i, part) in value.split(',').enumerate() {
        let s = base + start;
        start += part.len() + 1;
        let part_loc = loc(s, s + part.len());
        // The first part is the name; when it is a key instead, the model reports the
        // missing name once and the part is read as a key.
        if i == 0 && !part.contains('=') {
            if !part.is_empty() {
                method.name = Some(Located {
                    value: part.to_owned(),
                    loc: part_loc,
                });
            }
            continue;
        }
        let Some((key, v)) = part.split_once('=') else {
            cx.error_at(
                &part_loc,
                format!("expected `key=value` in `+genclient:method`, found `{part}`"),
            );
            continue;
        };
        let key_loc = loc(s, s + key.len());
        let value_loc = loc(s + key.len() + 1, s + part.len());
        let text = Located {
            value: v.to_owned(),
            loc: value_loc.clone(),
        };
        match key {
            "verb" => set_method_key(cx, &mut method.verb, text, key),
            "subresource" => set_method_key(cx, &mut method.subresource, text, key),
            "input" | "result" => {
                let typed = Located { value: TypeRef::Text(v.to_owned()), loc: value_loc };
                let slot = if key == "input" { &mut method.input } else { &mut method.result };
                set_method_key(cx, slot, typed, key);
            }
            _ => cx.error_at(
                &key_loc,
                format!(
                    "unknown key `{key}` in `+genclient:method`; the keys are `verb`, `subresource`, `input` and `result`{}",
                    did_you_mean(key, METHOD_KEYS.iter().copied()).replace("; ", ", ")
                ),
            ),
        }
    }
    method
}

/// `method(get_scale, verb = get, subresource = "scale", result = path::Scale)`.
fn method_from_meta(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta<'_>,
    key_loc: Loc,
) -> syn::Result<MethodAttr> {
    let mut method = MethodAttr {
        loc: key_loc,
        name: None,
        verb: None,
        subresource: None,
        input: None,
        result: None,
    };
    meta.parse_nested_meta(|inner| {
        let ident = inner.path.get_ident().ok_or_else(|| inner.error("expected a method name or key"))?;
        let key = ident.to_string();
        let key_loc = Loc::span(ident.span());
        let has_value = inner.input.peek(syn::Token![=]);
        if !has_value {
            if method.name.is_some() || method.verb.is_some() {
                cx.error(ident.span(), format!("expected `key = value` in `method(...)`, found `{key}`"));
            } else {
                method.name = Some(Located { value: key, loc: key_loc });
            }
            return Ok(());
        }
        match key.as_str() {
            "verb" | "subresource" => {
                let value = inner.value()?;
                let (text, span) = if value.peek(LitStr) {
                    let lit: LitStr = value.parse()?;
                    (lit.value(), lit.span())
                } else {
                    let id: syn::Ident = value.parse()?;
                    (id.to_string(), id.span())
                };
                let located = Located { value: text, loc: Loc::span(span) };
                let slot = if key == "verb" { &mut method.verb } else { &mut method.subresource };
                set_method_key(cx, slot, located, &key);
            }
            "input" | "result" => {
                let value = inner.value()?;
                let (ty, span) = if value.peek(LitStr) {
                    let lit: LitStr = value.parse()?;
                    (TypeRef::Text(lit.value()), lit.span())
                } else {
                    let ty: syn::Type = value.parse()?;
                    let span = ty.to_token_stream().into_iter().next().map_or(ident.span(), |t| t.span());
                    (TypeRef::Rust(Box::new(ty)), span)
                };
                let located = Located { value: ty, loc: Loc::span(span) };
                let slot = if key == "input" { &mut method.input } else { &mut method.result };
                set_method_key(cx, slot, located, &key);
            }
            _ => {
                cx.error(
                    ident.span(),
                    format!(
                        "unknown key `{key}` in `method(...)`; the keys are `verb`, `subresource`, `input` and `result`{}",
                        did_you_mean(&key, METHOD_KEYS.iter().copied()).replace("; ", ", ")
                    ),
                );
                inner.value()?.parse::<Expr>()?;
            }
        }
        Ok(())
    })?;
    Ok(method)
}

fn set_method_key<T>(cx: &mut Ctxt, slot: &mut Option<Located<T>>, value: Located<T>, key: &str) {
    if slot.is_some() {
        cx.error_at(&value.loc, format!("duplicate key `{key}` in method spec"));
    } else {
        *slot = Some(value);
    }
}
