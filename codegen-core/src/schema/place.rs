//! Where a field marker may sit: the Rust shapes each marker applies to, the value
//! validations kube-apiserver keeps on a field of another type, the validation schemars
//! already writes (so a marker does not set it twice), and the enums a CRD schema cannot
//! express.

use std::collections::BTreeSet;

use syn::{Attribute, ItemEnum};

use crate::ast::{self, Shape};
use crate::diag::Ctxt;

/// What a marker may sit on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Needs {
    Numeric,
    Text,
    TextOrNumeric,
    List,
    Object,
    /// Preserve-unknown-fields: kube-apiserver takes it on a list too, as CRDs write it on
    /// a list whose items carry it.
    ObjectOrList,
    Struct,
    Scalar,
    Anything,
}

/// What the marker `name` may sit on.
pub(super) fn needs(name: &str) -> Needs {
    match name.rsplit(':').next().unwrap_or(name) {
        "Minimum" | "Maximum" | "ExclusiveMinimum" | "ExclusiveMaximum" | "MultipleOf" => {
            Needs::Numeric
        }
        "MinLength" | "MaxLength" | "Pattern" => Needs::Text,
        "Format" => Needs::TextOrNumeric,
        "MinItems" | "MaxItems" | "UniqueItems" | "listType" | "listMapKey" => Needs::List,
        "MinProperties" | "MaxProperties" | "mapType" | "EmbeddedResource"
        | "XEmbeddedResource" => Needs::Object,
        "PreserveUnknownFields" | "XPreserveUnknownFields" => Needs::ObjectOrList,
        "structType" => Needs::Struct,
        "Enum" => Needs::Scalar,
        _ => Needs::Anything,
    }
}

/// Whether a field of `shape` is something a marker that `needs` may sit on.
pub(super) fn fits(needs: Needs, shape: &Shape<'_>) -> bool {
    let unit_enum =
        matches!(shape, Shape::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()));
    match (needs, shape) {
        (Needs::Anything, _) | (_, Shape::Unknown) => true,
        (Needs::Numeric, s) => matches!(s, Shape::Integer | Shape::Number),
        (Needs::Text, s) => matches!(s, Shape::String) || unit_enum,
        (Needs::TextOrNumeric, s) => {
            matches!(s, Shape::String | Shape::Integer | Shape::Number) || unit_enum
        }
        (Needs::List, s) => matches!(s, Shape::Array(_)),
        (Needs::Object, s) => matches!(s, Shape::Map(_) | Shape::Struct(_) | Shape::Any),
        (Needs::ObjectOrList, s) => matches!(
            s,
            Shape::Map(_) | Shape::Struct(_) | Shape::Any | Shape::Array(_)
        ),
        (Needs::Struct, s) => matches!(s, Shape::Struct(_) | Shape::Any),
        (Needs::Scalar, s) => matches!(
            s,
            Shape::String | Shape::Integer | Shape::Number | Shape::Bool | Shape::Any
        ),
    }
}

/// What `needs` allows, as messages say it.
pub(super) fn needs_text(needs: Needs) -> &'static str {
    match needs {
        Needs::Numeric => "integers and numbers",
        Needs::Text => "strings",
        Needs::TextOrNumeric => "strings and numbers",
        Needs::List => "lists (`Vec<_>`)",
        Needs::Object => "maps and structs",
        Needs::ObjectOrList => "maps, structs and lists",
        Needs::Struct => "structs",
        Needs::Scalar => "strings, numbers and booleans",
        Needs::Anything => "any field",
    }
}

/// A value validation (bounds, lengths, pattern, format, counts): kube-apiserver accepts one
/// on a field of a type it does not apply to, and ignores it there, as CRDs in the wild have
/// (Karpenter's `values` list carries `maxLength` and `pattern`). Structural markers
/// (`listType`, `mapType`, ...) on the wrong type it refuses. An `Enum` there is kept as well,
/// though the server applies it: see [`kept_note`].
pub(super) fn is_value_validation(name: &str) -> bool {
    matches!(
        name.rsplit(':').next().unwrap_or(name),
        "Minimum"
            | "Maximum"
            | "ExclusiveMinimum"
            | "ExclusiveMaximum"
            | "MultipleOf"
            | "MinLength"
            | "MaxLength"
            | "Pattern"
            | "Format"
            | "MinItems"
            | "MaxItems"
            | "MinProperties"
            | "MaxProperties"
            | "Enum"
    )
}

/// What a warning about a value validation on a field of another type adds.
pub(super) fn kept_note(name: &str) -> &'static str {
    if name.ends_with("Enum") {
        ": kube-apiserver accepts it as written, and then refuses every value the list does not hold"
    } else {
        ": kube-apiserver accepts it there and ignores it"
    }
}

/// The keys of `#[schemars(...)]`, `#[validate(...)]` and `#[garde(...)]` on a field, as
/// `range.min`, `length.max`, `regex`, ...: the validation schemars already writes.
pub(super) fn schemars_keys(attrs: &[Attribute]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for attr in attrs {
        let Some(ident) = attr.path().get_ident() else {
            continue;
        };
        if !["schemars", "validate", "garde"].contains(&ident.to_string().as_str()) {
            continue;
        }
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if meta.input.peek(syn::token::Paren) {
                let mut inner_keys = Vec::new();
                let _ = meta.parse_nested_meta(|inner| {
                    inner_keys.push(
                        inner
                            .path
                            .get_ident()
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                    );
                    if inner.input.peek(syn::Token![=]) {
                        inner.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                });
                if inner_keys.is_empty() {
                    out.insert(key.clone());
                }
                for k in inner_keys {
                    out.insert(format!("{key}.{k}"));
                }
            } else {
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                out.insert(key);
            }
            Ok(())
        });
    }
    out
}

/// The schemars keys a marker would clash with.
pub(super) fn clashes(name: &str) -> &'static [&'static str] {
    match name.rsplit(':').next().unwrap_or(name) {
        "Minimum" => &["range.min"],
        "Maximum" => &["range.max"],
        "MinLength" | "MinItems" => &["length.min", "length.equal"],
        "MaxLength" | "MaxItems" => &["length.max", "length.equal"],
        "Pattern" => &[
            "regex",
            "regex.path",
            "regex.pattern",
            "pattern",
            "contains",
        ],
        "Format" => &["email", "url", "ip", "ipv4", "ipv6"],
        _ => &[],
    }
}

/// Reports an enum that kube's `crd()` would panic on: internally or adjacently tagged, or
/// externally tagged with both unit and data variants.
pub(super) fn check_enum(cx: &mut Ctxt, e: &ItemEnum) {
    if ast::serde_flag(&e.attrs, "untagged") || e.variants.len() < 2 {
        return;
    }
    if let Some(tag) = ast::serde_value(&e.attrs, "tag") {
        cx.error(
            e.ident.span(),
            format!("`{}` is tagged with `#[serde(tag = \"{tag}\")]`: a CRD's structural schema cannot express that (each variant gives `{tag}` a different schema, and kube's `crd()` panics); use an externally tagged enum (serde's default) with data in every variant, or a struct with optional fields", e.ident),
        );
        return;
    }
    let unit = e.variants.iter().find(|v| v.fields.is_empty());
    let data = e.variants.iter().find(|v| !v.fields.is_empty());
    if let (Some(u), Some(d)) = (unit, data) {
        cx.error(
            u.ident.span(),
            format!("`{}` mixes unit variants (`{}`, a string) with data variants (`{}`, an object): a CRD's structural schema needs one type, and kube's `crd()` panics; give every variant data, or none", e.ident, u.ident, d.ident),
        );
    }
}
