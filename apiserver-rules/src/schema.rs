//! CRD structural schemas: defaults, pruning and validation, in the real server's order
//! and with its messages (`spec.replicas in body should be less than or equal to 10`).

use regex::Regex;
use serde_json::{Map, Value};

use crate::field::{FieldError, child, go_quote};
use crate::formats;

/// Applies defaults, prunes unknown fields and validates `obj` against a CRD version's
/// `openAPIV3Schema`. `apiVersion`, `kind` and `metadata` at the root are left alone.
/// The paths of pruned fields (`spec.bogus`) go to `unknown`: the real server warns about
/// them, or rejects the request with `fieldValidation=Strict`.
pub fn admit(schema: &Value, obj: &mut Value, unknown: &mut Vec<String>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(root) = obj.as_object_mut() else {
        errors.push(FieldError::type_invalid(
            "",
            &Value::Null,
            "must be an object",
        ));
        return errors;
    };
    coerce_root(schema, root, true, unknown);
    let mut stripped = Map::new();
    for (k, v) in root.iter() {
        if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            stripped.insert(k.clone(), v.clone());
        }
    }
    let mut root_schema = schema.clone();
    if let Some(required) = root_schema
        .get_mut("required")
        .and_then(Value::as_array_mut)
    {
        required.retain(|r| !matches!(r.as_str(), Some("apiVersion" | "kind" | "metadata")));
    }
    if let Some(p) = root_schema
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        p.remove("metadata");
        p.remove("apiVersion");
        p.remove("kind");
    }
    validate(&root_schema, &Value::Object(stripped), "", "", &mut errors);
    errors
}

/// What kube-apiserver's storage codec does to a custom resource on its way into or out of
/// a version: unknown fields pruned, `null`s the schema does not allow dropped and, with
/// `defaults`, the version's defaults applied. `apiVersion`, `kind` and `metadata` at the
/// root are left alone. Returns the pruned paths, which the storage codec discards: only
/// the request's own decoding warns about them or refuses them.
///
/// Writing through a version other than the storage version, the object is converted, then
/// coerced by the storage version's schema (without defaults); reading, coerced and
/// defaulted by the version it is stored in, converted, then coerced by the version asked
/// for (without defaults).
pub fn coerce(schema: &Value, obj: &mut Value, defaults: bool) -> Vec<String> {
    let mut unknown = Vec::new();
    if let Some(root) = obj.as_object_mut() {
        coerce_root(schema, root, defaults, &mut unknown);
    }
    unknown
}

/// [`coerce`] of an object's root.
fn coerce_root(
    schema: &Value,
    root: &mut Map<String, Value>,
    defaults: bool,
    unknown: &mut Vec<String>,
) {
    let props = schema.get("properties").and_then(Value::as_object);
    let preserve = preserves(schema);
    let keys: Vec<String> = root.keys().cloned().collect();
    for key in keys {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        match props.and_then(|p| p.get(&key)) {
            Some(sub) => {
                let value = root.get_mut(&key).expect("key listed above");
                coerce_at(sub, value, &key, defaults, unknown);
                if value.is_null() && !nullable(sub) {
                    root.remove(&key);
                }
            }
            None if !preserve => {
                unknown.push(key.clone());
                root.remove(&key);
            }
            None => {}
        }
    }
    if !defaults {
        return;
    }
    if let Some(props) = props {
        for (key, sub) in props {
            if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if !root.contains_key(key)
                && let Some(default) = sub.get("default")
            {
                let mut value = default.clone();
                coerce_at(sub, &mut value, key, true, &mut Vec::new());
                root.insert(key.clone(), value);
            }
        }
    }
}

/// Ratcheting, as kube-apiserver does it on updates: schema errors at a value that is
/// unchanged from the old object (found by property, map key, or a list-map's keys) are
/// dropped, so an object stored before a schema got stricter can still be updated
/// elsewhere. `errors` are those of [`admit`] for `new`.
pub fn ratchet(schema: &Value, new: &Value, old: &Value, errors: &mut Vec<FieldError>) {
    let mut unchanged = Vec::new();
    unchanged_paths(schema, new, old, "", true, &mut unchanged);
    errors.retain(|e| {
        !unchanged.iter().any(|p| {
            p.is_empty()
                || e.field == *p
                || e.field
                    .strip_prefix(p.as_str())
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    });
}

/// The paths of the outermost values of `new` equal to their correlated old values.
fn unchanged_paths(
    schema: &Value,
    new: &Value,
    old: &Value,
    path: &str,
    root: bool,
    out: &mut Vec<String>,
) {
    if new == old {
        out.push(path.to_owned());
        return;
    }
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in n {
                if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let sub = props.and_then(|p| p.get(k)).or(additional);
                if let (Some(sub), Some(ov)) = (sub, o.get(k)) {
                    unchanged_paths(sub, v, ov, &child(path, k), false, out);
                }
            }
        }
        (Value::Array(n), Value::Array(o)) => {
            let keys: Vec<&str> = match schema.get("x-kubernetes-list-type").and_then(Value::as_str)
            {
                Some("map") => schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|k| k.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default(),
                _ => return,
            };
            let Some(items) = schema.get("items") else {
                return;
            };
            for (i, v) in n.iter().enumerate() {
                if let Some(ov) = o
                    .iter()
                    .find(|ov| keys.iter().all(|k| ov.get(k) == v.get(k)))
                {
                    unchanged_paths(items, v, ov, &format!("{path}[{i}]"), false, out);
                }
            }
        }
        _ => {}
    }
}

/// Drops what `schema` does not know from `value` and returns the paths dropped
/// (relative to `value`), as the real server prunes a default or a request body.
pub fn prune(schema: &Value, value: &mut Value) -> Vec<String> {
    let mut unknown = Vec::new();
    prune_at(schema, value, "", &mut unknown);
    unknown
}

fn prune_at(schema: &Value, value: &mut Value, path: &str, unknown: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    match props.get(&key) {
                        Some(sub) => {
                            let v = map.get_mut(&key).expect("key listed above");
                            prune_at(sub, v, &child(path, &key), unknown);
                        }
                        None if !preserves(schema) && !is_embedded_meta(schema, &key) => {
                            unknown.push(child(path, &key));
                            map.remove(&key);
                        }
                        None => {}
                    }
                }
            } else if let Some(items) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in map.iter_mut() {
                    prune_at(items, v, &child(path, k), unknown);
                }
            } else if !preserves(schema)
                && schema.get("additionalProperties").is_none()
                && schema.get("type").and_then(Value::as_str) == Some("object")
            {
                for k in map.keys() {
                    unknown.push(child(path, k));
                }
                map.clear();
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter_mut().enumerate() {
                    prune_at(item_schema, v, &format!("{path}[{i}]"), unknown);
                }
            }
        }
        _ => {}
    }
}

fn preserves(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
        || schema
            .get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true)
            && schema
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                == Some(true)
}

fn nullable(schema: &Value) -> bool {
    schema.get("nullable").and_then(Value::as_bool) == Some(true)
}

/// Fills defaults of missing properties and drops unknown ones, recursively; `path` is
/// where `value` sits, for the paths of what is dropped.
fn coerce_at(
    schema: &Value,
    value: &mut Value,
    path: &str,
    defaults: bool,
    unknown: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    match props.get(&key) {
                        Some(sub) => {
                            let v = map.get_mut(&key).expect("key listed above");
                            coerce_at(sub, v, &child(path, &key), defaults, unknown);
                            if v.is_null() && !nullable(sub) {
                                map.remove(&key);
                            }
                        }
                        None if !preserves(schema) && !is_embedded_meta(schema, &key) => {
                            unknown.push(child(path, &key));
                            map.remove(&key);
                        }
                        None => {}
                    }
                }
                for (key, sub) in props.iter().filter(|_| defaults) {
                    if !map.contains_key(key)
                        && let Some(default) = sub.get("default")
                    {
                        let mut v = default.clone();
                        coerce_at(sub, &mut v, key, true, &mut Vec::new());
                        map.insert(key.clone(), v);
                    }
                }
            } else if let Some(items) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in map.iter_mut() {
                    coerce_at(items, v, &child(path, k), defaults, unknown);
                }
            } else if !preserves(schema) && schema.get("additionalProperties").is_none() {
                // An object with neither properties nor additionalProperties keeps nothing.
                if schema.get("type").and_then(Value::as_str) == Some("object") {
                    for k in map.keys() {
                        unknown.push(child(path, k));
                    }
                    map.clear();
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter_mut().enumerate() {
                    coerce_at(item_schema, v, &format!("{path}[{i}]"), defaults, unknown);
                }
            }
        }
        _ => {}
    }
}

fn is_embedded_meta(schema: &Value, key: &str) -> bool {
    schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
        && matches!(key, "apiVersion" | "kind" | "metadata")
}

fn invalid(errors: &mut Vec<FieldError>, field: &str, value: &Value, detail: String) {
    errors.push(FieldError::invalid(field, value, detail));
}

/// `x-kubernetes-list-type: set` (no equal items) and `map` (no two items with the same
/// `x-kubernetes-list-map-keys`), reported as the real server does: `Duplicate value`.
fn unique_items(schema: &Value, items: &[Value], field: &str, errors: &mut Vec<FieldError>) {
    let keys: Vec<&str> = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => Vec::new(),
        Some("map") => schema
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
        _ => return,
    };
    // A set item is its own identity; a map item is the object of its keys.
    let identity = |v: &Value| -> Value {
        if keys.is_empty() {
            v.clone()
        } else {
            Value::Object(
                keys.iter()
                    .filter_map(|k| v.get(*k).map(|x| ((*k).to_owned(), x.clone())))
                    .collect(),
            )
        }
    };
    let mut seen: Vec<Value> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = identity(item);
        if seen.contains(&id) {
            errors.push(FieldError::duplicate(format!("{field}[{i}]"), &id));
        } else {
            seen.push(id);
        }
    }
}

/// Validates `value` against `schema`; appends one error per violation. `field` is the path
/// errors name; `msg` the path their messages name (the same for an object; empty for a
/// CRD's `default`, whose messages read ` in body should be ...`).
pub fn validate(
    schema: &Value,
    value: &Value,
    field: &str,
    msg: &str,
    errors: &mut Vec<FieldError>,
) {
    if value.is_null() {
        if !nullable(schema) && !field.is_empty() {
            invalid(
                errors,
                field,
                value,
                format!(
                    "{msg} in body must be of type {}: \"null\"",
                    type_name(schema)
                ),
            );
        }
        return;
    }
    if let Some((found, stop)) = integer_errors(schema, value, field, msg) {
        errors.extend(found);
        if stop {
            return;
        }
    } else if let Some(e) = type_error(schema, value, field, msg) {
        errors.push(e);
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed
            .iter()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&other.to_string()),
            })
            .collect();
        let mut e = FieldError::not_supported(field, value, &[]);
        e.detail = format!("supported values: {}", list.join(", "));
        errors.push(e);
    }
    let at = (field, msg);
    match value {
        Value::Object(map) => validate_object(schema, map, at, errors),
        Value::Array(items) => validate_array(schema, items, at, errors),
        Value::String(s) => validate_string(schema, value, s, at, errors),
        Value::Number(n) => validate_number(schema, value, n.as_f64().unwrap_or(0.0), at, errors),
        _ => {}
    }
}

/// kube-apiserver's answer for a number or boolean at an `integer` schema that is not an
/// int64 (or, with `format: int32`, an int32), and whether validation stops there. A number
/// that is not an int64 (`1.5`, `1e19`) gets the type error, in the format's words when
/// there is one (`must be of type int32: "float64"`), then the format check's error, named
/// at `<nil>`; validation goes on to the bounds. An int64 outside `int32` gets the format
/// check's error alone. A boolean with a format gets the type error in the format's words
/// (the Go type name it shows is empty). `None`: an int64 in range, or anything the plain
/// type check answers. Integral floats (`2.0`) are refused too, where kube-apiserver reads
/// them as integers.
fn integer_errors(
    schema: &Value,
    value: &Value,
    field: &str,
    msg: &str,
) -> Option<(Vec<FieldError>, bool)> {
    if schema.get("type").and_then(Value::as_str) != Some("integer")
        || schema
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            == Some(true)
    {
        return None;
    }
    let format = schema
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| matches!(*f, "int32" | "int64"));
    let checked = || {
        let with = format.map_or("(default format)".to_owned(), |f| {
            format!("with format {f}")
        });
        FieldError::invalid_str(
            "<nil>",
            "",
            format!("Checked value must be of type integer {with} in {msg}"),
        )
    };
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) if format == Some("int32") && i32::try_from(i).is_err() => {
                Some((vec![checked()], false))
            }
            Some(_) => None,
            None => {
                let (shown, actual) = format.map_or(("integer", "number"), |f| (f, "float64"));
                let typed = FieldError::type_invalid(
                    field,
                    &Value::from(actual),
                    format!("{msg} in body must be of type {shown}: \"{actual}\""),
                );
                Some((vec![typed, checked()], false))
            }
        },
        Value::Bool(_) => {
            let f = format?;
            let typed = FieldError::type_invalid(
                field,
                &Value::from(""),
                format!("{msg} in body must be of type {f}: \"\""),
            );
            Some((vec![typed], true))
        }
        _ => None,
    }
}

/// The error of a value whose JSON type is not the schema's (`type`, or integer or string
/// for `x-kubernetes-int-or-string`).
fn type_error(schema: &Value, value: &Value, field: &str, msg: &str) -> Option<FieldError> {
    let int_or_string = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true);
    let ty = schema.get("type").and_then(Value::as_str);
    let type_ok = match (ty, value) {
        _ if int_or_string => value.is_string() || value.is_i64() || value.is_u64(),
        (None, _) => true,
        (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("string"), Value::String(_)) => true,
        (Some("boolean"), Value::Bool(_)) => true,
        (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Some("number"), Value::Number(_)) => true,
        _ => false,
    };
    if type_ok {
        return None;
    }
    let actual = match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::Null => "null",
    };
    let shown_type = if int_or_string {
        "integer or string".to_owned()
    } else {
        type_name(schema)
    };
    Some(FieldError::type_invalid(
        field,
        &Value::from(actual),
        format!("{msg} in body must be of type {shown_type}: \"{actual}\""),
    ))
}

/// An object: required properties, each property against its schema, the property count.
fn validate_object(
    schema: &Value,
    map: &Map<String, Value>,
    (field, msg): (&str, &str),
    errors: &mut Vec<FieldError>,
) {
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                errors.push(FieldError::required(child(field, key), ""));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|a| a.is_object());
    for (k, v) in map {
        if let Some(sub) = props.and_then(|p| p.get(k)).or(additional) {
            validate(sub, v, &child(field, k), &child(msg, k), errors);
        }
    }
    let n = map.len();
    at_least(
        schema,
        "minProperties",
        n,
        (field, msg),
        &Value::from(n),
        errors,
        "properties",
    );
    at_most(schema, "maxProperties", n, field, errors);
}

/// An array: each item against the item schema, the item count, unique set or map items.
fn validate_array(
    schema: &Value,
    items: &[Value],
    (field, msg): (&str, &str),
    errors: &mut Vec<FieldError>,
) {
    if let Some(item_schema) = schema.get("items") {
        for (i, v) in items.iter().enumerate() {
            validate(
                item_schema,
                v,
                &format!("{field}[{i}]"),
                &format!("{msg}[{i}]"),
                errors,
            );
        }
    }
    let n = items.len();
    at_least(
        schema,
        "minItems",
        n,
        (field, msg),
        &Value::from(n),
        errors,
        "items",
    );
    at_most(schema, "maxItems", n, field, errors);
    unique_items(schema, items, field, errors);
}

/// A string `s` (the `value`): its length, pattern and format.
fn validate_string(
    schema: &Value,
    value: &Value,
    s: &str,
    (field, msg): (&str, &str),
    errors: &mut Vec<FieldError>,
) {
    let len = s.chars().count() as u64;
    // The first of maxLength, minLength and pattern that fails, as the real server
    // reports them.
    let max = schema.get("maxLength").and_then(Value::as_u64);
    let min = schema.get("minLength").and_then(Value::as_u64);
    let pattern = schema.get("pattern").and_then(Value::as_str);
    if let Some(m) = max.filter(|m| len > *m) {
        errors.push(FieldError::too_long(field, m as usize));
    } else if let Some(m) = min.filter(|m| len < *m) {
        invalid(
            errors,
            field,
            value,
            format!("{msg} in body should be at least {m} chars long"),
        );
    } else if let Some(pattern) = pattern
        && Regex::new(pattern).is_ok_and(|re| !re.is_match(s))
    {
        invalid(
            errors,
            field,
            value,
            format!("{msg} in body should match '{pattern}'"),
        );
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && formats::check(format, s) == Some(false)
    {
        errors.push(FieldError::type_invalid(
            field,
            value,
            format!("{msg} in body must be of type {format}: {}", go_quote(s)),
        ));
    }
}

/// A number `x` (the `value`): its bounds and `multipleOf`.
fn validate_number(
    schema: &Value,
    value: &Value,
    x: f64,
    (field, msg): (&str, &str),
    errors: &mut Vec<FieldError>,
) {
    let exclusive = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        let bad = if exclusive("exclusiveMinimum") {
            x <= min
        } else {
            x < min
        };
        if bad {
            let op = if exclusive("exclusiveMinimum") {
                "greater than"
            } else {
                "greater than or equal to"
            };
            invalid(
                errors,
                field,
                value,
                format!("{msg} in body should be {op} {}", num(min)),
            );
        }
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        let bad = if exclusive("exclusiveMaximum") {
            x >= max
        } else {
            x > max
        };
        if bad {
            let op = if exclusive("exclusiveMaximum") {
                "less than"
            } else {
                "less than or equal to"
            };
            invalid(
                errors,
                field,
                value,
                format!("{msg} in body should be {op} {}", num(max)),
            );
        }
    }
    if let Some(m) = schema.get("multipleOf").and_then(Value::as_f64)
        && m > 0.0
        && (x / m).fract().abs() > f64::EPSILON
    {
        invalid(
            errors,
            field,
            value,
            format!("{msg} in body should be a multiple of {}", num(m)),
        );
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{}", x as i64)
    } else {
        x.to_string()
    }
}

fn type_name(schema: &Value) -> String {
    schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_owned()
}

/// A count below `schema[key]`: `Invalid value: <count>: <msg> in body should have at
/// least N <noun>`.
fn at_least(
    schema: &Value,
    key: &str,
    actual: usize,
    (field, msg): (&str, &str),
    shown: &Value,
    errors: &mut Vec<FieldError>,
    noun: &str,
) {
    if let Some(limit) = schema.get(key).and_then(Value::as_u64)
        && (actual as u64) < limit
    {
        invalid(
            errors,
            field,
            shown,
            format!("{msg} in body should have at least {limit} {noun}"),
        );
    }
}

/// A count above `schema[key]`: `Too many: <count>: must have at most N items`.
fn at_most(schema: &Value, key: &str, actual: usize, field: &str, errors: &mut Vec<FieldError>) {
    if let Some(limit) = schema.get(key).and_then(Value::as_u64)
        && (actual as u64) > limit
    {
        errors.push(FieldError::too_many(field, actual, limit as usize));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["deploymentName"], "properties": {
                "deploymentName": {"type": "string", "minLength": 1, "pattern": "^[a-z0-9-]+$"},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "flavor": {"type": "string", "enum": ["Vanilla", "Chocolate"]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }})
    }

    #[test]
    fn defaults_prunes_and_accepts_a_valid_object() {
        let mut obj = json!({"apiVersion": "x/v1", "kind": "Foo", "metadata": {"name": "a"},
            "spec": {"deploymentName": "web", "unknown": 1, "extra": {"kept": true}}, "top": 1});
        assert_eq!(admit(&schema(), &mut obj, &mut Vec::new()), vec![]);
        assert_eq!(
            obj["spec"],
            json!({"deploymentName": "web", "replicas": 1, "extra": {"kept": true}})
        );
        assert!(obj.get("top").is_none());
    }

    #[test]
    fn reports_every_invalid_field_like_the_real_server() {
        let mut obj = json!({"spec": {"replicas": 11, "flavor": "Mint", "tags": ["a", "b", "c"], "deploymentName": "Bad!"}});
        let errors: Vec<String> = admit(&schema(), &mut obj, &mut Vec::new())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(errors.contains(&"spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10".to_owned()), "{errors:?}");
        assert!(errors.contains(&"spec.flavor: Unsupported value: \"Mint\": supported values: \"Vanilla\", \"Chocolate\"".to_owned()), "{errors:?}");
        assert!(
            errors.contains(&"spec.tags: Too many: 3: must have at most 2 items".to_owned()),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("should match '^[a-z0-9-]+$'")),
            "{errors:?}"
        );
        let mut missing = json!({"spec": {"replicas": "three"}});
        let errors: Vec<String> = admit(&schema(), &mut missing, &mut Vec::new())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            errors.contains(&"spec.deploymentName: Required value".to_owned()),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("spec.replicas in body must be of type integer")),
            "{errors:?}"
        );
    }
}
