//! What is checked once a CRD is built: every marker fits the schema it landed on, no
//! marker line was left unread, and kube-apiserver would accept the CRD.

use serde_json::{Map, Value};

/// One reason a CRD cannot be used as built.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Where in the schema, as marker paths write it: property names, `[]` for a list's
    /// items, `{}` for a map's values. Empty when the problem is not inside the schema.
    pub path: Vec<String>,
    /// The schema keyword involved (`default`, `x-kubernetes-list-map-keys`), if any.
    pub key: Option<String>,
    /// What is wrong, in kube-apiserver's words where it is the server's rule.
    pub message: String,
}

/// The schema types each keyword a marker sets applies to.
fn applies_to(key: &str) -> Option<(&'static [&'static str], &'static str)> {
    const NUMBERS: &[&str] = &["integer", "number"];
    Some(match key {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            (NUMBERS, "numbers")
        }
        "minLength" | "maxLength" | "pattern" => (&["string"], "strings"),
        "minItems" | "maxItems" | "x-kubernetes-list-type" | "x-kubernetes-list-map-keys" => {
            (&["array"], "lists")
        }
        "minProperties" | "maxProperties" | "x-kubernetes-map-type" => (&["object"], "objects"),
        _ => return None,
    })
}

/// Value validations: kube-apiserver keeps them on a schema of any type and ignores them
/// where they do not apply (Karpenter's `maxLength` on a list of strings).
const VALUE_VALIDATIONS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// Why `key` on a schema of type `ty` does not apply there, when it does not.
fn mismatch(key: &str, ty: &str) -> Option<&'static str> {
    let (types, what) = applies_to(key)?;
    if types.contains(&ty) || (key == "x-kubernetes-map-type" && ty == "array") {
        return None;
    }
    Some(what)
}

/// Structural keywords set on a schema whose type they do not apply to
/// (`x-kubernetes-list-type` on an object): the derive cannot see every field's type, so
/// this is where it is caught. Value validations are kept (see [`kept_validations`]).
pub(super) fn misplaced(crd: &Value, path: &[String], set: &Map<String, Value>) -> Vec<Problem> {
    let Some(schema) = schema(crd, path) else {
        return Vec::new();
    };
    let Some(ty) = schema.get("type").and_then(Value::as_str) else {
        return Vec::new();
    };
    set.keys()
        .filter(|key| !VALUE_VALIDATIONS.contains(&key.as_str()))
        .filter_map(|key| {
            let what = mismatch(key, ty)?;
            Some(Problem {
                path: path.to_vec(),
                key: Some(key.clone()),
                message: format!(
                    "{}: `{key}` applies to {what}, but the schema there is of type {ty}",
                    dotted(path)
                ),
            })
        })
        .collect()
}

/// A warning for each value validation of `crd`'s schemas on a schema of a type it does not
/// apply to: kept as written, as kube-apiserver keeps it, and ignored there.
pub(super) fn kept_validations(crd: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
    for v in versions.into_iter().flatten() {
        if let Some(root) = v.pointer("/schema/openAPIV3Schema") {
            kept_at(root, &mut Vec::new(), &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn kept_at(schema: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let Some(ty) = map.get("type").and_then(Value::as_str) {
        for key in VALUE_VALIDATIONS.iter().filter(|k| map.contains_key(**k)) {
            if let Some(what) = mismatch(key, ty) {
                out.push(format!(
                    "{}: `{key}` applies to {what}, but the schema there is of type {ty}: kube-apiserver accepts it there and ignores it",
                    dotted(path).replace(".[]", "[]").replace(".{}", "{}")
                ));
            }
        }
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            path.push(name.clone());
            kept_at(child, path, out);
            path.pop();
        }
    }
    for (key, seg) in [("items", "[]"), ("additionalProperties", "{}")] {
        if let Some(child) = map.get(key) {
            path.push(seg.to_owned());
            kept_at(child, path, out);
            path.pop();
        }
    }
}

fn schema<'v>(crd: &'v Value, path: &[String]) -> Option<&'v Value> {
    let mut at = crd.pointer("/spec/versions/0/schema/openAPIV3Schema")?;
    for seg in path {
        at = match seg.as_str() {
            "[]" => at.get("items")?,
            "{}" => at.get("additionalProperties")?,
            name => at.get("properties")?.get(name)?,
        };
    }
    Some(at)
}

fn dotted(path: &[String]) -> String {
    if path.is_empty() {
        "the root".to_owned()
    } else {
        path.join(".")
    }
}

/// The markers kube-codegen reads; other `+` lines (`+genclient`, most `+k8s:` tags) are
/// not CRD markers.
fn is_crd_marker(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('+') else {
        return false;
    };
    rest.starts_with("kubebuilder:")
        || [
            "listType",
            "listMapKey",
            "mapType",
            "structType",
            "nullable",
            "optional",
            "required",
            "default",
            "k8s:optional",
            "k8s:required",
            "k8s:listType",
            "k8s:listMapKey",
            "k8s:immutable",
        ]
        .iter()
        .any(|m| rest == *m || rest.starts_with(&format!("{m}=")))
}

/// Marker lines in descriptions that no front end read: on a field of a struct that
/// neither the CLI saw nor derives `CrdMarkers`. `+optional` and `+required` are only
/// reported where they would have changed `required`.
pub(super) fn unapplied(root: &Value, read: &[Vec<String>]) -> Vec<Problem> {
    let mut out = Vec::new();
    walk(root, &mut Vec::new(), None, read, &mut out);
    out
}

fn walk(
    schema: &Value,
    path: &mut Vec<String>,
    parent: Option<&Value>,
    read: &[Vec<String>],
    out: &mut Vec<Problem>,
) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if !path.is_empty()
        && let Some(desc) = map.get("description").and_then(Value::as_str)
    {
        let field_read = read.iter().any(|r| r.as_slice() == &path[..path.len() - 1]);
        let type_read = read.iter().any(|r| r == path);
        if !field_read && !type_read {
            let name = path.last().cloned().unwrap_or_default();
            let required = parent
                .and_then(|p| p.get("required"))
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|v| v == &Value::from(name.as_str())));
            for line in desc.lines().filter(|l| is_crd_marker(l)) {
                let line = line.trim();
                let no_op = (matches!(line, "+optional" | "+k8s:optional") && !required)
                    || (matches!(line, "+required" | "+k8s:required") && required);
                if no_op {
                    continue;
                }
                out.push(Problem {
                    path: path.clone(),
                    key: None,
                    message: format!(
                        "{}: `{line}` was not applied: no kube-codegen front end read the struct it is written in; derive `CrdMarkers` on that struct (or, with the CLI, define it in the API tree)",
                        path.join(".")
                    ),
                });
            }
        }
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, child) in props {
            path.push(name.clone());
            walk(child, path, Some(schema), read, out);
            path.pop();
        }
    }
    for (key, seg) in [("items", "[]"), ("additionalProperties", "{}")] {
        if let Some(child) = map.get(key) {
            path.push(seg.to_owned());
            walk(child, path, None, read, out);
            path.pop();
        }
    }
}

/// kube-apiserver's verdict on creating `crd`, each error with the schema place it names.
pub(super) fn review(crd: &Value) -> Vec<Problem> {
    apiserver_rules::crd::review_create(crd)
        .errors
        .iter()
        .map(|e| {
            let (path, key) = schema_place(&e.field);
            Problem {
                path,
                key,
                message: e.to_string(),
            }
        })
        .collect()
}

/// `spec.validation.openAPIV3Schema.properties[spec].items.default` (or
/// `spec.versions[0].schema.openAPIV3Schema...`) as `(["spec", "[]"], Some("default"))`.
pub fn schema_place(field: &str) -> (Vec<String>, Option<String>) {
    let rest = ["spec.validation.openAPIV3Schema", "spec.versions["]
        .iter()
        .find_map(|p| field.strip_prefix(p).map(|r| (p, r)));
    let rest = match rest {
        Some((p, r)) if p.ends_with('[') => match r.split_once("].schema.openAPIV3Schema") {
            Some((_, after)) => after,
            None => return (Vec::new(), None),
        },
        Some((_, r)) => r,
        None => return (Vec::new(), None),
    };
    let mut path = Vec::new();
    let mut rest = rest;
    loop {
        if let Some(r) = rest.strip_prefix(".properties[") {
            let Some((name, after)) = r.split_once(']') else {
                break;
            };
            path.push(name.to_owned());
            rest = after;
        } else if let Some(r) = rest.strip_prefix(".items") {
            path.push("[]".to_owned());
            rest = r;
        } else if let Some(r) = rest.strip_prefix(".additionalProperties") {
            path.push("{}".to_owned());
            rest = r;
        } else {
            break;
        }
    }
    let key = rest
        .strip_prefix('.')
        .map(|r| r.split(['.', '[']).next().unwrap_or_default().to_owned())
        .filter(|k| !k.is_empty());
    (path, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_places_are_read_from_the_servers_field_paths() {
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            schema_place(
                "spec.validation.openAPIV3Schema.properties[spec].properties[ports].x-kubernetes-list-map-keys"
            ),
            (
                s(&["spec", "ports"]),
                Some("x-kubernetes-list-map-keys".to_owned())
            )
        );
        assert_eq!(
            schema_place(
                "spec.versions[1].schema.openAPIV3Schema.properties[spec].items.additionalProperties.default.a"
            ),
            (s(&["spec", "[]", "{}"]), Some("default".to_owned()))
        );
        assert_eq!(schema_place("metadata.name"), (Vec::new(), None));
    }

    #[test]
    fn only_unread_markers_that_change_something_are_reported() {
        let root = serde_json::json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "required": ["a"], "properties": {
                    "a": {"type": "integer", "description": "A.\n+kubebuilder:validation:Minimum=1"},
                    "n": {"type": "object", "required": ["x"], "properties": {
                        "x": {"type": "integer", "description": "+kubebuilder:validation:Maximum=3"},
                        "o": {"type": "integer", "description": "+optional"},
                        "r": {"type": "integer", "description": "+required"},
                        "g": {"type": "integer", "description": "+genclient"},
                    }},
                }},
            },
        });
        let read = vec![vec!["spec".to_owned()]];
        let mut found: Vec<String> = unapplied(&root, &read)
            .into_iter()
            .map(|p| p.path.join("."))
            .collect();
        found.sort();
        assert_eq!(found, ["spec.n.r", "spec.n.x"]);
    }
}
