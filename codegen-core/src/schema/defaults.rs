//! Defaults: `+kubebuilder:default` checked against the field's own markers and Rust enum
//! (kube-apiserver validates a default against its schema), and on a nullable `Option`,
//! where kube-apiserver never applies it to objects written from Rust.

use serde_json::{Map, Value};
use syn::Attribute;

use super::patch::Patch;
use super::walk::{FieldAt, Own};
use crate::ast::{self, Shape, is_option};
use crate::diag::{Ctxt, did_you_mean};

/// `#[serde(default)]` on a field.
pub(super) fn serde_default(attrs: &[Attribute]) -> bool {
    ast::serde_flag(attrs, "default")
}

/// A `+kubebuilder:default` on an `Option` that serde writes as `null` when `None`: kube's
/// schema makes the field `nullable`, and kube-apiserver keeps a `null` of a nullable field
/// instead of defaulting it, so the default never applies to objects written from Rust.
/// Legal (YAML that leaves the field out is defaulted), hence a warning.
pub(super) fn default_on_nullable(cx: &mut Ctxt, at: &FieldAt<'_, '_>) {
    let (f, name, markers) = (at.syn, at.name, at.markers);
    let Some(dm) = markers.iter().find(|m| m.name == "kubebuilder:default") else {
        return;
    };
    let not_nullable = markers
        .iter()
        .any(|m| m.name == "nullable" && m.value.as_deref() == Some("false"));
    let skips_none = ast::serde_value(&f.attrs, "skip_serializing_if").is_some();
    if is_option(&f.ty) && !not_nullable && !skips_none {
        cx.warn_at(
            &dm.name_loc,
            format!("`+kubebuilder:default` on `{name}`, an `Option` serde writes as `null` when `None`: kube-apiserver keeps the `null` of a nullable field and never applies the default to objects written from Rust; add `#[serde(skip_serializing_if = \"Option::is_none\")]` (or `+nullable=false`)"),
        );
    }
}

/// A `+kubebuilder:default` that breaks the field's own markers or its Rust enum: the API
/// server validates defaults against their schema and rejects the CRD. Patterns are left to
/// the check of the built CRD (`kube_codegen_runtime::crd`), which has a regex engine.
pub(super) fn check_default(cx: &mut Ctxt, own: &Own<'_>, f: &FieldAt<'_, '_>) {
    let (name, shape, markers) = (f.name, &f.shape, f.markers);
    let Some(dm) = markers.iter().find(|m| m.name == "kubebuilder:default") else {
        return;
    };
    let mut schema = Map::new();
    for p in &own.patches {
        if let Patch::Schema { path, set } = p
            && path.len() == 1
            && path[0] == name
        {
            schema.extend(set.clone());
        }
    }
    let Some(default) = schema.get("default") else {
        return;
    };
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut why = Vec::new();
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(default)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        why.push(format!(
            "is not one of `+kubebuilder:validation:Enum` ({})",
            list.join(", ")
        ));
    }
    if let (Shape::Enum(e), Value::String(text)) = (shape, default)
        && e.variants.iter().all(|v| v.fields.is_empty())
    {
        let rule = ast::serde_value(&e.attrs, "rename_all");
        let names: Vec<String> = e
            .variants
            .iter()
            .map(|v| {
                ast::serde_value(&v.attrs, "rename")
                    .unwrap_or_else(|| ast::renamed_variant(&v.ident.to_string(), rule.as_deref()))
            })
            .collect();
        if !names.contains(text) {
            why.push(format!(
                "is not a variant of `{}` ({}){}",
                e.ident,
                names.join(", "),
                did_you_mean(text, names.iter().map(String::as_str))
            ));
        }
    }
    if let Some(d) = default.as_f64() {
        if let Some(min) = num("minimum") {
            if flag("exclusiveMinimum") && d <= min {
                why.push(format!("is not greater than the exclusive minimum {min}"));
            } else if d < min {
                why.push(format!(
                    "is less than `+kubebuilder:validation:Minimum={min}`"
                ));
            }
        }
        if let Some(max) = num("maximum") {
            if flag("exclusiveMaximum") && d >= max {
                why.push(format!("is not less than the exclusive maximum {max}"));
            } else if d > max {
                why.push(format!(
                    "is greater than `+kubebuilder:validation:Maximum={max}`"
                ));
            }
        }
        if let Some(m) = num("multipleOf")
            && m > 0.0
            && ((d / m) - (d / m).round()).abs() > 1e-9
        {
            why.push(format!("is not a multiple of {m}"));
        }
    }
    let count = match default {
        Value::String(t) => Some(("Length", t.chars().count())),
        Value::Array(a) => Some(("Items", a.len())),
        Value::Object(o) => Some(("Properties", o.len())),
        _ => None,
    };
    if let Some((what, n)) = count {
        let key = |prefix: &str| format!("{prefix}{what}");
        if let Some(min) = schema.get(&key("min")).and_then(Value::as_u64)
            && (n as u64) < min
        {
            why.push(format!(
                "is shorter than `+kubebuilder:validation:Min{what}={min}`"
            ));
        }
        if let Some(max) = schema.get(&key("max")).and_then(Value::as_u64)
            && (n as u64) > max
        {
            why.push(format!(
                "is longer than `+kubebuilder:validation:Max{what}={max}`"
            ));
        }
    }
    if !why.is_empty() {
        cx.error_at(
            &dm.value_loc,
            format!(
                "the default of `{name}` ({default}) {}: kube-apiserver rejects a CRD whose default breaks the field's own schema",
                why.join(", and ")
            ),
        );
    }
}
