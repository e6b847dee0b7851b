//! Patches: JSON merge (RFC 7386), JSON patch (RFC 6902) and strategic merge.

use serde_json::{Map, Value};

/// RFC 7386: objects merge recursively, `null` deletes, everything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let target = target.as_object_mut().expect("made an object above");
    for (k, v) in patch {
        if v.is_null() {
            target.remove(k);
        } else {
            merge_patch(target.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// RFC 6902 operations applied in order; the target is unchanged on error.
pub fn json_patch(target: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("a JSON patch must be an array of operations")?;
    let mut doc = target.clone();
    for (i, op) in ops.iter().enumerate() {
        let field = |k: &str| {
            op.get(k)
                .and_then(Value::as_str)
                .ok_or(format!("operation {i}: `{k}` is required"))
        };
        let path = field("path")?;
        match field("op")? {
            "add" => add(&mut doc, path, value(op, i)?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, value(op, i)?)?;
            }
            "move" => {
                let v = remove(&mut doc, field("from")?)?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let v = doc
                    .pointer(field("from")?)
                    .cloned()
                    .ok_or(format!("operation {i}: `from` not found"))?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                // As the real server's JSON patch library does, a missing path tests equal to null
                // (kube's finalizer helper relies on it).
                if doc.pointer(path).unwrap_or(&Value::Null) != &value(op, i)? {
                    return Err(format!("operation {i}: test failed at {path}"));
                }
            }
            other => return Err(format!("operation {i}: unknown op `{other}`")),
        }
    }
    *target = doc;
    Ok(())
}

fn value(op: &Value, i: usize) -> Result<Value, String> {
    op.get("value")
        .cloned()
        .ok_or(format!("operation {i}: `value` is required"))
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split(path: &str) -> Result<(&str, String), String> {
    let i = path
        .rfind('/')
        .ok_or(format!("invalid JSON pointer `{path}`"))?;
    Ok((&path[..i], unescape(&path[i + 1..])))
}

fn add(doc: &mut Value, path: &str, v: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (parent, last) = split(path)?;
    match doc
        .pointer_mut(parent)
        .ok_or(format!("path `{parent}` not found"))?
    {
        Value::Object(m) => {
            m.insert(last, v);
            Ok(())
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse().map_err(|_| format!("bad index `{last}`"))?
            };
            if i > a.len() {
                return Err(format!("index {i} out of range"));
            }
            a.insert(i, v);
            Ok(())
        }
        _ => Err(format!("`{parent}` is not a container")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split(path)?;
    match doc
        .pointer_mut(parent)
        .ok_or(format!("path `{parent}` not found"))?
    {
        Value::Object(m) => m.remove(&last).ok_or(format!("path `{path}` not found")),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| format!("bad index `{last}`"))?;
            if i >= a.len() {
                return Err(format!("index {i} out of range"));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("`{parent}` is not a container")),
    }
}

/// The merge key of a list field in the built-in types, as their `patchMergeKey` tags say.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "volumeDevices" => "name",
        "volumeMounts" => "mountPath",
        "ports" => "containerPort",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        _ => return None,
    })
}

/// Strategic merge patch: merge patch, except that lists with a merge key merge element by
/// element, `$patch: delete` removes an element, and `$setElementOrder` directives are dropped.
/// Service ports merge by `port` rather than `containerPort`.
pub fn strategic_merge_patch(target: &mut Value, patch: &Value) {
    strategic(target, patch, "");
}

fn strategic(target: &mut Value, patch: &Value, field: &str) {
    match patch {
        Value::Object(p) => {
            if p.get("$patch").and_then(Value::as_str) == Some("replace") {
                let mut replaced = patch.clone();
                replaced.as_object_mut().expect("object").remove("$patch");
                *target = replaced;
                return;
            }
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let t = target.as_object_mut().expect("made an object above");
            for (k, v) in p {
                if k.starts_with("$setElementOrder/")
                    || k.starts_with("$retainKeys")
                    || k == "$patch"
                {
                    continue;
                }
                if v.is_null() {
                    t.remove(k);
                    continue;
                }
                let key = if k == "ports" && t.contains_key("clusterIP") | t.contains_key("type") {
                    Some("port")
                } else {
                    merge_key(k)
                };
                match (key, v, t.get_mut(k)) {
                    (Some(key), Value::Array(items), Some(Value::Array(existing))) => {
                        merge_list(existing, items, key)
                    }
                    _ => strategic(t.entry(k.clone()).or_insert(Value::Null), v, k),
                }
            }
        }
        Value::Array(items) => {
            let cleaned: Vec<Value> = items
                .iter()
                .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
                .cloned()
                .collect();
            let _ = field;
            *target = Value::Array(cleaned);
        }
        other => *target = other.clone(),
    }
}

fn merge_list(existing: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let Some(id) = item.get(key).cloned() else {
            existing.push(item.clone());
            continue;
        };
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match existing.iter().position(|e| e.get(key) == Some(&id)) {
            Some(i) if delete => {
                existing.remove(i);
            }
            Some(i) => strategic(&mut existing[i], item, key),
            None if delete => {}
            None => existing.push(item.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_follows_rfc7386() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut doc, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}}));
    }

    #[test]
    fn json_patch_is_all_or_nothing() {
        let mut doc = json!({"spec": {"replicas": 1, "list": [1, 2]}});
        json_patch(
            &mut doc,
            &json!([
                {"op": "replace", "path": "/spec/replicas", "value": 3},
                {"op": "add", "path": "/spec/list/-", "value": 3},
                {"op": "test", "path": "/spec/replicas", "value": 3}
            ]),
        )
        .unwrap();
        assert_eq!(doc, json!({"spec": {"replicas": 3, "list": [1, 2, 3]}}));
        json_patch(
            &mut doc,
            &json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]),
        )
        .unwrap();
        let before = doc.clone();
        assert!(
            json_patch(
                &mut doc,
                &json!([
                    {"op": "remove", "path": "/spec/replicas"},
                    {"op": "remove", "path": "/spec/missing"}
                ])
            )
            .is_err()
        );
        assert_eq!(doc, before);
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let mut pod = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
        ]}});
        strategic_merge_patch(
            &mut pod,
            &json!({"spec": {"containers": [
                {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}, {"name": "a", "$patch": "delete"}
            ]}}),
        );
        assert_eq!(
            pod,
            json!({"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}})
        );
    }
}
