//! CRD structural schemas: defaults, pruning and validation, in the real server's order.

use regex::Regex;
use serde_json::{Map, Value};

use crate::error::FieldError;

/// Applies defaults, prunes unknown fields and validates `obj` against a CRD version's
/// `openAPIV3Schema`. `apiVersion`, `kind` and `metadata` at the root are left alone.
pub fn admit(schema: &Value, obj: &mut Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(root) = obj.as_object_mut() else {
        errors.push(FieldError {
            reason: "FieldValueTypeInvalid",
            field: "<root>".into(),
            detail: "must be an object".into(),
        });
        return errors;
    };
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
                default_and_prune(sub, value);
                if value.is_null() && !nullable(sub) {
                    root.remove(&key);
                }
            }
            None if !preserve => {
                root.remove(&key);
            }
            None => {}
        }
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
                default_and_prune(sub, &mut value);
                root.insert(key.clone(), value);
            }
        }
    }
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
    validate(&root_schema, &Value::Object(stripped), "", &mut errors);
    errors
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

/// Fills defaults of missing properties and drops unknown ones, recursively.
fn default_and_prune(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    match props.get(&key) {
                        Some(sub) => {
                            let v = map.get_mut(&key).expect("key listed above");
                            default_and_prune(sub, v);
                            if v.is_null() && !nullable(sub) {
                                map.remove(&key);
                            }
                        }
                        None if !preserves(schema) && !is_embedded_meta(schema, &key) => {
                            map.remove(&key);
                        }
                        None => {}
                    }
                }
                for (key, sub) in props {
                    if !map.contains_key(key)
                        && let Some(default) = sub.get("default")
                    {
                        let mut v = default.clone();
                        default_and_prune(sub, &mut v);
                        map.insert(key.clone(), v);
                    }
                }
            } else if let Some(items) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for v in map.values_mut() {
                    default_and_prune(items, v);
                }
            } else if !preserves(schema) && schema.get("additionalProperties").is_none() {
                // An object with neither properties nor additionalProperties keeps nothing.
                if schema.get("type").and_then(Value::as_str) == Some("object") {
                    map.clear();
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for v in items {
                    default_and_prune(item_schema, v);
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

fn shown(v: &Value) -> String {
    v.to_string()
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn invalid(errors: &mut Vec<FieldError>, path: &str, value: &Value, detail: String) {
    errors.push(FieldError {
        reason: "FieldValueInvalid",
        field: path.to_owned(),
        detail: format!("Invalid value: {}: {detail}", shown(value)),
    });
}

/// `x-kubernetes-list-type: set` (no equal items) and `map` (no two items with the same
/// `x-kubernetes-list-map-keys`), reported as the real server does: `Duplicate value`.
fn unique_items(schema: &Value, items: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    let keys: Vec<&str> = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => Vec::new(),
        Some("map") => schema
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
        _ => return,
    };
    let identity = |v: &Value| -> Value {
        if keys.is_empty() {
            v.clone()
        } else {
            Value::Array(
                keys.iter()
                    .map(|k| v.get(*k).cloned().unwrap_or(Value::Null))
                    .collect(),
            )
        }
    };
    let mut seen: Vec<Value> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = identity(item);
        if seen.contains(&id) {
            errors.push(FieldError {
                reason: "FieldValueDuplicate",
                field: format!("{path}[{i}]"),
                detail: format!("Duplicate value: {id}"),
            });
        } else {
            seen.push(id);
        }
    }
}

/// Validates `value` at `path`; appends one error per violation.
pub fn validate(schema: &Value, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        if !nullable(schema) && !path.is_empty() {
            invalid(
                errors,
                path,
                value,
                format!(
                    "{path} in body must be of type {}: \"null\"",
                    type_name(schema)
                ),
            );
        }
        return;
    }
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
    if !type_ok {
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
        errors.push(FieldError {
            reason: "FieldValueTypeInvalid",
            field: path.to_owned(),
            detail: format!("Invalid value: \"{actual}\": {path} in body must be of type {shown_type}: \"{actual}\""),
        });
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(shown).collect();
        errors.push(FieldError {
            reason: "FieldValueNotSupported",
            field: path.to_owned(),
            detail: format!(
                "Unsupported value: {}: supported values: {}",
                shown(value),
                list.join(", ")
            ),
        });
    }
    match value {
        Value::Object(map) => {
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for key in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(key) {
                        errors.push(FieldError {
                            reason: "FieldValueRequired",
                            field: child(path, key),
                            detail: "Required value".to_owned(),
                        });
                    }
                }
            }
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                if let Some(sub) = props.and_then(|p| p.get(k)).or(additional) {
                    validate(sub, v, &child(path, k), errors);
                }
            }
            bound(
                schema,
                "minProperties",
                map.len(),
                path,
                value,
                errors,
                |n| format!("should have at least {n} properties"),
                true,
            );
            bound(
                schema,
                "maxProperties",
                map.len(),
                path,
                value,
                errors,
                |n| format!("should have at most {n} properties"),
                false,
            );
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    validate(item_schema, v, &format!("{path}[{i}]"), errors);
                }
            }
            bound(
                schema,
                "minItems",
                items.len(),
                path,
                value,
                errors,
                |n| format!("should have at least {n} items"),
                true,
            );
            bound(
                schema,
                "maxItems",
                items.len(),
                path,
                value,
                errors,
                |n| format!("should have at most {n} items"),
                false,
            );
            unique_items(schema, items, path, errors);
        }
        Value::String(s) => {
            let len = s.chars().count();
            bound(
                schema,
                "minLength",
                len,
                path,
                value,
                errors,
                |n| format!("should be at least {n} chars long"),
                true,
            );
            bound(
                schema,
                "maxLength",
                len,
                path,
                value,
                errors,
                |n| format!("should be at most {n} chars long"),
                false,
            );
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                match Regex::new(pattern) {
                    Ok(re) if !re.is_match(s) => {
                        invalid(
                            errors,
                            path,
                            value,
                            format!("{path} in body should match '{pattern}'"),
                        );
                    }
                    Ok(_) => {}
                    Err(_) => invalid(
                        errors,
                        path,
                        value,
                        format!(
                            "the schema's pattern '{pattern}' is not a valid regular expression"
                        ),
                    ),
                }
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
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
                        path,
                        value,
                        format!("{path} in body should be {op} {}", num(min)),
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
                        path,
                        value,
                        format!("{path} in body should be {op} {}", num(max)),
                    );
                }
            }
            if let Some(m) = schema.get("multipleOf").and_then(Value::as_f64)
                && m > 0.0
                && (x / m).fract().abs() > f64::EPSILON
            {
                invalid(
                    errors,
                    path,
                    value,
                    format!("{path} in body should be a multiple of {}", num(m)),
                );
            }
        }
        _ => {}
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

#[allow(clippy::too_many_arguments)]
fn bound(
    schema: &Value,
    key: &str,
    actual: usize,
    path: &str,
    value: &Value,
    errors: &mut Vec<FieldError>,
    message: impl Fn(u64) -> String,
    lower: bool,
) {
    if let Some(limit) = schema.get(key).and_then(Value::as_u64) {
        let bad = if lower {
            (actual as u64) < limit
        } else {
            (actual as u64) > limit
        };
        if bad {
            invalid(
                errors,
                path,
                value,
                format!("{path} in body {}", message(limit)),
            );
        }
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
        assert_eq!(admit(&schema(), &mut obj), vec![]);
        assert_eq!(
            obj["spec"],
            json!({"deploymentName": "web", "replicas": 1, "extra": {"kept": true}})
        );
        assert!(obj.get("top").is_none());
    }

    #[test]
    fn reports_every_invalid_field_like_the_real_server() {
        let mut obj = json!({"spec": {"replicas": 11, "flavor": "Mint", "tags": ["a", "b", "c"], "deploymentName": "Bad!"}});
        let errors: Vec<String> = admit(&schema(), &mut obj)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(errors.contains(&"spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10".to_owned()), "{errors:?}");
        assert!(errors.contains(&"spec.flavor: Unsupported value: \"Mint\": supported values: \"Vanilla\", \"Chocolate\"".to_owned()), "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("spec.tags: Invalid value")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("should match '^[a-z0-9-]+$'")),
            "{errors:?}"
        );
        let mut missing = json!({"spec": {"replicas": "three"}});
        let errors: Vec<String> = admit(&schema(), &mut missing)
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
