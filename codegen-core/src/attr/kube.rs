//! `#[kube(...)]`: the keys of kube's `CustomResource` derive that the generators need.
//!
//! kube-derive owns this attribute; we read it so the clients agree with the `Resource`
//! impl kube generates. Keys we do not use are still recognised (and skipped) so that a
//! typo is reported with a suggestion instead of passing silently through the CLI.

use proc_macro2::Span;
use syn::{Attribute, LitStr, meta::ParseNestedMeta};

use crate::diag::{Ctxt, did_you_mean};

/// A string value and where the user wrote it.
#[derive(Debug, Clone)]
pub(crate) struct Spanned<T> {
    /// The value.
    pub(crate) value: T,
    /// Where it was written.
    pub(crate) span: Span,
}

impl Spanned<String> {
    fn from_lit(lit: &LitStr) -> Self {
        Self {
            value: lit.value(),
            span: lit.span(),
        }
    }
}

/// `scale(...)` of `#[kube]`: the JSON paths of the scale subresource.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScaleAttr {
    /// Where `scale` was written.
    pub(crate) span: Option<Span>,
    /// `spec_replicas_path`.
    pub(crate) spec_replicas_path: Option<Spanned<String>>,
    /// `status_replicas_path`.
    pub(crate) status_replicas_path: Option<Spanned<String>>,
    /// `label_selector_path`.
    pub(crate) label_selector_path: Option<Spanned<String>>,
}

/// One `printcolumn(...)`.
#[derive(Debug, Clone)]
pub(crate) struct PrintColumn {
    /// `name = "Ready"`.
    pub(crate) name: Option<Spanned<String>>,
    /// `type_ = "integer"`.
    pub(crate) type_: Option<Spanned<String>>,
    /// `json_path = ".spec.replicas"`.
    pub(crate) json_path: Option<Spanned<String>>,
}

/// The `#[kube(...)]` keys, raw: presence is checked later, in the model.
#[derive(Debug, Clone, Default)]
pub(crate) struct KubeAttrs {
    /// Where the first `#[kube]` attribute was written.
    pub(crate) span: Option<Span>,
    /// `group = "..."`.
    pub(crate) group: Option<Spanned<String>>,
    /// `version = "..."`.
    pub(crate) version: Option<Spanned<String>>,
    /// `kind = "..."`.
    pub(crate) kind: Option<Spanned<String>>,
    /// `root = "..."`: the name of the generated struct, when not `kind`.
    pub(crate) root: Option<Spanned<String>>,
    /// `plural = "..."`.
    pub(crate) plural: Option<Spanned<String>>,
    /// `singular = "..."`.
    pub(crate) singular: Option<Spanned<String>>,
    /// `namespaced` (flag).
    pub(crate) namespaced: Option<Span>,
    /// `status = "FooStatus"`.
    pub(crate) status: Option<Spanned<String>>,
    /// `scale(...)` or `scale = "<json>"`.
    pub(crate) scale: Option<ScaleAttr>,
    /// `shortname = "..."`, repeatable.
    pub(crate) shortnames: Vec<Spanned<String>>,
    /// `category = "..."`, repeatable.
    pub(crate) categories: Vec<Spanned<String>>,
    /// `selectable = ".spec.x"`, repeatable.
    pub(crate) selectable: Vec<Spanned<String>>,
    /// `printcolumn(name = "...", type_ = "...", json_path = "...")` entries; the legacy JSON
    /// string form is recorded without content.
    pub(crate) printcolumns: Vec<PrintColumn>,
    /// `annotation("key", "value")` entries (kube puts them on the CRD and on new objects).
    pub(crate) annotations: Vec<(Spanned<String>, Spanned<String>)>,
    /// `label("key", "value")` entries.
    pub(crate) labels: Vec<(Spanned<String>, Spanned<String>)>,
    /// `no_spec`: the struct's fields are the object's root properties (kube flattens it),
    /// so its paths start at the root rather than at `.spec`.
    pub(crate) no_spec: Option<Span>,
}

/// The keys we read.
const READ: &[&str] = &[
    "group",
    "version",
    "kind",
    "root",
    "plural",
    "singular",
    "namespaced",
    "status",
    "scale",
    "shortname",
    "category",
    "selectable",
    "printcolumn",
    "annotation",
    "label",
    "no_spec",
];

/// kube-derive keys we accept and leave to kube.
const PASSED_THROUGH: &[&str] = &[
    "derive",
    "attr",
    "schema",
    "doc",
    "validation",
    "cel",
    "storage",
    "served",
    "deprecated",
    "crates",
];

impl KubeAttrs {
    /// Reads every `#[kube(...)]` among `attrs`.
    pub(crate) fn from_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = KubeAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("kube")) {
            out.span.get_or_insert(attr.path().segments[0].ident.span());
            if let Err(err) = attr.parse_nested_meta(|meta| out.read_key(cx, meta)) {
                cx.syn_error(err);
            }
        }
        out
    }

    fn read_key(&mut self, cx: &mut Ctxt, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(ident) = meta.path.get_ident() else {
            return Err(meta.error("expected a `#[kube]` key such as `group`, `version` or `kind`"));
        };
        let key = ident.to_string();
        let span = ident.span();
        match key.as_str() {
            "group" => set_once(cx, &mut self.group, &key, string(&meta)?),
            "version" => set_once(cx, &mut self.version, &key, string(&meta)?),
            "kind" => set_once(cx, &mut self.kind, &key, string(&meta)?),
            "root" => set_once(cx, &mut self.root, &key, string(&meta)?),
            "plural" => set_once(cx, &mut self.plural, &key, string(&meta)?),
            "singular" => set_once(cx, &mut self.singular, &key, string(&meta)?),
            "status" => set_once(cx, &mut self.status, &key, string(&meta)?),
            "no_spec" => {
                if self.no_spec.replace(span).is_some() {
                    cx.error(span, "duplicate `no_spec` in `#[kube]`");
                }
            }
            "namespaced" => {
                if self.namespaced.replace(span).is_some() {
                    cx.error(span, "duplicate `namespaced` in `#[kube]`");
                }
            }
            "shortname" => self.shortnames.push(string(&meta)?),
            "category" => self.categories.push(string(&meta)?),
            "selectable" => self.selectable.push(string(&meta)?),
            "printcolumn" => {
                let mut column = PrintColumn {
                    name: None,
                    type_: None,
                    json_path: None,
                };
                if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        let key = inner
                            .path
                            .get_ident()
                            .map(ToString::to_string)
                            .unwrap_or_default();
                        match key.as_str() {
                            "name" => column.name = Some(string(&inner)?),
                            "type_" => column.type_ = Some(string(&inner)?),
                            "json_path" => column.json_path = Some(string(&inner)?),
                            _ => skip_value(&inner)?,
                        }
                        Ok(())
                    })?;
                } else {
                    skip_value(&meta)?;
                }
                self.printcolumns.push(column);
            }
            "annotation" | "label" => {
                let content;
                syn::parenthesized!(content in meta.input);
                let k: LitStr = content.parse()?;
                content.parse::<syn::Token![,]>()?;
                let v: LitStr = content.parse()?;
                let pair = (Spanned::from_lit(&k), Spanned::from_lit(&v));
                if key == "annotation" {
                    self.annotations.push(pair);
                } else {
                    self.labels.push(pair);
                }
            }
            "scale" => {
                if self.scale.is_some() {
                    cx.error(span, "duplicate `scale` in `#[kube]`");
                }
                self.scale = Some(read_scale(cx, &meta, span)?);
            }
            _ if PASSED_THROUGH.contains(&key.as_str()) => skip_value(&meta)?,
            _ => {
                cx.error(
                    span,
                    format!(
                        "unknown key `{key}` in `#[kube(...)]`{}",
                        did_you_mean(&key, READ.iter().chain(PASSED_THROUGH).copied())
                    ),
                );
                skip_value(&meta)?;
            }
        }
        Ok(())
    }
}

fn set_once(cx: &mut Ctxt, slot: &mut Option<Spanned<String>>, key: &str, value: Spanned<String>) {
    if slot.is_some() {
        cx.error(value.span, format!("duplicate `{key}` in `#[kube]`"));
    } else {
        *slot = Some(value);
    }
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<Spanned<String>> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(Spanned::from_lit(&lit))
}

/// Consumes whatever follows a key we do not interpret: `= expr`, `(...)` or nothing.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

fn read_scale(cx: &mut Ctxt, meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<ScaleAttr> {
    let mut scale = ScaleAttr {
        span: Some(span),
        ..ScaleAttr::default()
    };
    if meta.input.peek(syn::Token![=]) {
        // The legacy JSON form: kube parses it; we only need to know scale is on.
        meta.value()?.parse::<LitStr>()?;
        return Ok(scale);
    }
    meta.parse_nested_meta(|inner| {
        let key = inner
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let value = string(&inner)?;
        let slot = match key.as_str() {
            "spec_replicas_path" => &mut scale.spec_replicas_path,
            "status_replicas_path" => &mut scale.status_replicas_path,
            "label_selector_path" => &mut scale.label_selector_path,
            _ => {
                cx.error(
                    inner.path.span_of_first(),
                    format!(
                        "unknown key `{key}` in `scale(...)`{}",
                        did_you_mean(
                            &key,
                            [
                                "spec_replicas_path",
                                "status_replicas_path",
                                "label_selector_path"
                            ]
                        )
                    ),
                );
                return Ok(());
            }
        };
        set_once(cx, slot, &key, value);
        Ok(())
    })?;
    Ok(scale)
}

/// The span of a path's first segment (paths here are single identifiers).
trait SpanOfFirst {
    fn span_of_first(&self) -> Span;
}

impl SpanOfFirst for syn::Path {
    fn span_of_first(&self) -> Span {
        self.segments
            .first()
            .map_or_else(Span::call_site, |s| s.ident.span())
    }
}
