//! The root schema of a version: the spec and status structs kube's `CustomResource` wants,
//! the root's own struct when properties sit beside them (`#[kube(no_spec)]`), and what of
//! the root cannot be carried over.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::resource::ROOT_REQUIRED;
use super::types::{Exception, Types, description_notes};
use crate::json;

/// Whether a version's properties must sit at the root (`#[kube(no_spec)]`): its schema does
/// not require `spec`, or has properties beside `spec` and `status`. kube's `CustomResource`
/// otherwise requires `spec` and has no other root property.
pub(super) fn at_root(root: &Map<String, Value>) -> bool {
    let required = root
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v == "spec"));
    let beside = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.keys().any(|k| !RESERVED_AT_ROOT.contains(&k.as_str())));
    let has_spec = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key("spec"));
    (has_spec && !required) || beside
}

/// Root properties kube's `CustomResource` writes itself.
const RESERVED_AT_ROOT: &[&str] = &["spec", "status", "apiVersion", "kind", "metadata"];

/// [`top_types`] for a version whose properties sit at the root: the struct `fields_name`
/// of every root property but `apiVersion`, `kind`, `metadata` and `status` (`spec`, an
/// `Option` unless required, typed `spec_name` when it is an object with properties), and
/// the status struct.
pub(super) fn top_fields(
    types: &mut Types,
    crd: &Value,
    root: &Map<String, Value>,
    spec_name: &str,
    status_name: &str,
    fields_name: &str,
) -> (Option<String>, Option<String>, Vec<Exception>) {
    // The spec (and status) first, so that the root's `spec` field reuses the spec's name.
    let (_, status, mut notes) = top_types(types, crd, root, spec_name, status_name);
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let own: Map<String, Value> = props
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "status" | "apiVersion" | "kind" | "metadata"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let required: Vec<Value> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter(|v| own.contains_key(v.as_str().unwrap_or("")))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut schema = Map::new();
    schema.insert("type".into(), Value::from("object"));
    schema.insert("properties".into(), Value::Object(own));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    let Some(fields) = types.top(fields_name, "", &Value::Object(schema)) else {
        return (None, status, notes);
    };
    // `spec` is a field of the root's struct now, typed whatever its schema is.
    notes.retain(|n| n.path != "spec");
    (Some(fields), status, notes)
}

/// The spec and status structs of a version's root schema (their names, when they are
/// structs), and what of the root schema is not carried over. Properties beside them, and
/// a `spec` the schema does not require, are [`top_fields`]' work.
pub(super) fn top_types(
    types: &mut Types,
    crd: &Value,
    root: &Map<String, Value>,
    spec_name: &str,
    status_name: &str,
) -> (Option<String>, Option<String>, Vec<Exception>) {
    let props = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut root_notes: Vec<Exception> = Vec::new();
    let spec_schema = props.get("spec").cloned().unwrap_or(Value::Null);
    let spec = types.top(spec_name, "spec", &spec_schema);
    if spec.is_none() {
        if spec_schema.is_null() {
            note(&mut root_notes, "spec", "the schema has no `spec`; kube's `CustomResource` always has one, so an empty `spec` is required".into());
        } else {
            note(&mut root_notes, "spec", "`spec` is not an object with properties; it becomes an empty struct: what it allows is not carried over, and the typed client neither reads nor writes its contents (use `api()` with `DynamicObject` for them)".into());
        }
    }
    let status_schema = props.get("status").cloned().unwrap_or(Value::Null);
    let status = if status_schema.is_null() {
        None
    } else {
        let s = types.top(status_name, "status", &status_schema);
        if s.is_none() {
            note(
                &mut root_notes,
                "status",
                "`status` is not an object with properties; it is left out".into(),
            );
        }
        s
    };
    root_notes.extend(root_notes_of(crd, root, &props, status.is_some()));
    (spec, status, root_notes)
}

/// What the root schema (beside `spec` and `status` themselves) and the CRD say that the
/// types cannot: `metadata`'s schema, other keys, `required`, `nullable` and `default` on
/// `spec` or `status`, and a conversion strategy.
fn root_notes_of(
    crd: &Value,
    root: &Map<String, Value>,
    props: &Map<String, Value>,
    has_status: bool,
) -> Vec<Exception> {
    let mut notes: Vec<Exception> = Vec::new();
    // The root's description is `#[kube(doc = ...)]`, which the built CRD reads as a
    // description, dropping lines that start with `+` as it does everywhere.
    for n in description_notes(root) {
        note(&mut notes, "", n);
    }
    if let Some(meta) = props.get("metadata").and_then(Value::as_object)
        && meta.keys().any(|k| k != "type")
    {
        note(
            &mut notes,
            "metadata",
            "the schema of `metadata` beyond `type: object` is not carried over".into(),
        );
    }
    for (k, _) in root {
        if !matches!(
            k.as_str(),
            "type" | "description" | "properties" | "required"
        ) {
            note(
                &mut notes,
                "",
                format!("`{k}` on the root schema is not carried over"),
            );
        }
    }
    let root_required: BTreeSet<&str> = json::strings(root.get("required")).collect();
    for r in &root_required {
        // `spec` and the root's own properties are required as the schema says (with
        // `no_spec`, see [`top_fields`]); `apiVersion`, `kind`, `metadata` and a `status`
        // struct by `+kube-codegen:rootRequired` (`resource_markers`).
        if ROOT_REQUIRED.contains(r) || *r == "status" {
            continue;
        }
        if !props.contains_key(*r) {
            note(
                &mut notes,
                "",
                format!("`required` names `{r}`, which is not a root property"),
            );
        }
    }
    if root_required.contains("status") && !has_status {
        note(
            &mut notes,
            "status",
            "`status` is required by the schema, which gives it no struct; not carried over".into(),
        );
    }
    for which in ["spec", "status"] {
        if let Some(s) = props.get(which).and_then(Value::as_object) {
            for key in ["nullable", "default"] {
                if s.contains_key(key) {
                    note(
                        &mut notes,
                        which,
                        format!("`{key}` on `{which}` is not carried over"),
                    );
                }
            }
        }
    }
    if let Some(strategy) = crd
        .pointer("/spec/conversion/strategy")
        .and_then(Value::as_str)
        .filter(|s| *s != "None")
    {
        note(
            &mut notes,
            "",
            format!(
                "conversion strategy `{strategy}` is not carried over; the generated CRD uses `None`"
            ),
        );
    }
    notes
}

/// Adds that `what` at `path` is not carried over.
fn note(notes: &mut Vec<Exception>, path: &str, what: String) {
    notes.push(Exception {
        path: path.to_owned(),
        what,
    });
}
