//! One CRD version's `openAPIV3Schema` as apiextensions-apiserver checks it: the keyword
//! rules, list and map types, CEL rule syntax, the structural-schema invariants, value
//! validations (`allOf`/`anyOf`/`oneOf`/`not`), and defaults against their own schema.
//!
//! Paths are the real server's: `<P>.properties[spec].items.x-kubernetes-list-type`.
//!
//! [`validate`] runs the checks in the server's order, one file each: `structural` (the
//! structural-schema invariants), `junctors` (value validations), `defaults`, `keywords`
//! (types and forbidden keywords, walking every node), `list_types` (list and map types),
//! `rules` (the form of `x-kubernetes-validations`), `path` (JSON paths into a schema) and
//! `format_warnings` (formats the server ignores).

use serde_json::{Map, Value};

use crate::field::FieldError;

mod defaults;
mod format_warnings;
mod junctors;
mod keywords;
mod list_types;
mod path;
mod rules;
mod structural;

pub use path::resolve;
pub use structural::re2;

/// A schema node.
type Obj = Map<String, Value>;

/// A string keyword of `node`, empty when absent.
fn text<'a>(node: &'a Obj, key: &str) -> &'a str {
    node.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether a boolean keyword of `node` is `true`.
fn flag(node: &Obj, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool) == Some(true)
}

/// A keyword of `node` holding a schema (or a map of them).
fn sub<'a>(node: &'a Obj, key: &str) -> Option<&'a Obj> {
    node.get(key).and_then(Value::as_object)
}

/// The types a schema may name.
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
/// The junctors that hold a list of schemas (`not` holds one).
const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// The errors of one version's schema at `p` (`spec.validation.openAPIV3Schema`), in the
/// real server's order; `status` when the status subresource applies to it.
pub fn validate(
    root: &Value,
    p: &str,
    status: bool,
    warnings: &mut Vec<String>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(s) = root.as_object() else {
        errs.push(FieldError::required(p, ""));
        return errs;
    };
    if status {
        structural::root_restrictions(s, p, &mut errs);
    }
    if flag(s, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{p}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    // Keywords a structural schema cannot hold make the whole structural check impossible;
    // the keyword walk below reports them.
    let convertible = !structural::has_unstructural_keyword(root);
    let mut found = Vec::new();
    if convertible {
        structural::invariants(s, p, structural::Level::Root, &mut found);
        junctors::value_validations(s, p, &mut found);
        found.sort_by_key(ToString::to_string);
    }
    let structural_ok = convertible && found.is_empty();
    errs.extend(found);
    if structural_ok {
        defaults::defaults(s, p, true, &mut errs);
    }
    keywords::keywords(s, p, keywords::Meta::None, &mut errs);
    if !convertible && errs.is_empty() && s.contains_key("$schema") {
        errs.push(FieldError::invalid_str(
            p,
            "",
            "OpenAPIV3Schema 'schema' is not supported",
        ));
    }
    format_warnings::formats(s, warnings);
    // Rules are compiled only once the schema they are typed by is valid.
    #[cfg(feature = "cel")]
    if errs.is_empty() {
        errs.extend(crate::cel::check::crd_rules(root, p));
    }
    errs
}

/// Every sub-schema with its path suffix: properties, additionalProperties, items and the
/// junctors.
fn children(s: &Obj) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            out.push((format!(".properties[{k}]"), v));
        }
    }
    if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
        out.push((".additionalProperties".into(), a));
    }
    if let Some(i) = s.get("items").filter(|i| i.is_object()) {
        out.push((".items".into(), i));
    }
    for j in JUNCTORS {
        if let Some(list) = s.get(j).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                out.push((format!(".{j}[{i}]"), v));
            }
        }
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        out.push((".not".into(), n));
    }
    out
}
