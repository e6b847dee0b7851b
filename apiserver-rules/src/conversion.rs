//! What kube-apiserver keeps of the object a conversion webhook returns: the converted
//! content, and of its `metadata` only the labels and annotations, checked as labels and
//! annotations are; the rest of the metadata is the original's (apiextensions-apiserver's
//! `restoreObjectMeta`).

use serde_json::{Map, Value};

use crate::field::aggregate;
use crate::meta;

/// Go's name (`%T`) of a JSON value as kube-apiserver decodes it.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Gives `converted` (an object a conversion returned) the metadata of the object it was
/// converted from (`original`, its `metadata`; `None` when it had none), keeping the labels
/// and annotations `converted` holds: absent or `null` ones are removed, changed ones must
/// be valid labels and annotations. On error, kube-apiserver's words after `conversion
/// webhook for <gvk> returned invalid metadata: `, and `converted` is left as it was.
pub fn restore_object_meta(original: Option<&Value>, converted: &mut Value) -> Result<(), String> {
    let Some(object) = converted.as_object_mut() else {
        return Err("missing metadata in converted object".to_owned());
    };
    let response = match object.get("metadata") {
        None => return Err("missing metadata in converted object".to_owned()),
        Some(Value::Object(response)) => response,
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ));
        }
    };
    let mut restored = match original {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(meta)) => meta.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in input object",
                go_type(other)
            ));
        }
    };
    for field in ["labels", "annotations"] {
        let returned = match response.get(field) {
            None | Some(Value::Null) => {
                restored.remove(field);
                continue;
            }
            Some(Value::Object(returned)) => returned,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ));
            }
        };
        let before = match restored.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::Object(before)) => Some(before),
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ));
            }
        };
        let mut changed = before.map_or(0, Map::len) != returned.len();
        for (key, value) in returned {
            if !value.is_string() {
                return Err(format!(
                    "metadata.{field}[{key}] must be a string, but is {} in converted object",
                    go_type(value)
                ));
            }
            changed |= before.and_then(|b| b.get(key)) != Some(value);
        }
        if changed {
            // Go names the annotations' path `metadata.annotation`.
            let errors = if field == "labels" {
                meta::labels(returned, "metadata.labels")
            } else {
                meta::annotations(returned, "metadata.annotation")
            };
            if !errors.is_empty() {
                return Err(aggregate(&errors));
            }
        }
        restored.insert(field.to_owned(), Value::Object(returned.clone()));
    }
    object.insert("metadata".to_owned(), Value::Object(restored));
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn original() -> Value {
        json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
            "labels": {"app": "a"}, "annotations": {"note": "kept"}})
    }

    fn converted(metadata: Value) -> Value {
        json!({"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": metadata,
            "spec": {"size": 1}})
    }

    #[test]
    fn labels_and_annotations_are_the_conversions_the_rest_the_originals() {
        let mut out = converted(json!({"name": "a", "resourceVersion": "0",
            "generation": 9, "labels": {"app": "a", "tier": "web"},
            "annotations": {"example.com/stash": "{\"x\":1}"}}));
        restore_object_meta(Some(&original()), &mut out).unwrap();
        assert_eq!(
            out,
            json!({"apiVersion": "example.com/v2", "kind": "Gizmo", "spec": {"size": 1},
                "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                    "labels": {"app": "a", "tier": "web"},
                    "annotations": {"example.com/stash": "{\"x\":1}"}}})
        );
        // Left out or null: removed.
        let mut out = converted(json!({"name": "a", "labels": null}));
        restore_object_meta(Some(&original()), &mut out).unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7"})
        );
        // No original metadata: only what the conversion returned of those two.
        let mut out = converted(json!({"name": "b", "labels": {"app": "b"}}));
        restore_object_meta(None, &mut out).unwrap();
        assert_eq!(out["metadata"], json!({"labels": {"app": "b"}}));
    }

    #[test]
    fn what_kube_apiserver_refuses() {
        let refused = |metadata: Value| {
            let mut out = converted(metadata);
            let before = out.clone();
            let err = restore_object_meta(Some(&original()), &mut out).unwrap_err();
            assert_eq!(out, before, "left as it was");
            err
        };
        let mut no_metadata = converted(json!({}));
        no_metadata.as_object_mut().unwrap().remove("metadata");
        assert_eq!(
            restore_object_meta(Some(&original()), &mut no_metadata).unwrap_err(),
            "missing metadata in converted object"
        );
        assert_eq!(
            refused(json!("a")),
            "invalid metadata of type string in converted object"
        );
        assert_eq!(
            refused(json!({"labels": ["a"]})),
            "invalid metadata.labels of type []interface {} in converted object"
        );
        assert_eq!(
            refused(json!({"annotations": {"n": 1}})),
            "metadata.annotations[n] must be a string, but is int64 in converted object"
        );
        assert_eq!(
            refused(json!({"labels": {"app": "a", "bad key!": "x"}})),
            "metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            refused(json!({"annotations": {"a": "x".repeat(256 * 1024)}})),
            "metadata.annotation: Too long: may not be more than 262144 bytes"
        );
        // Unchanged labels are not checked again.
        let mut stored = original();
        stored["labels"] = json!({"bad key!": "x"});
        let mut out = converted(json!({"labels": {"bad key!": "x"}}));
        restore_object_meta(Some(&stored), &mut out).unwrap();
    }
}
