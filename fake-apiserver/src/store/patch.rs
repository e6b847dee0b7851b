//! Patches: JSON merge (RFC 7386), JSON patch (RFC 6902) and strategic merge.

use serde_json::{Map, Value};

use crate::store::ssa::schema::Ty;

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

/// Strategic merge patch, driven by the type's patch strategies: lists with a merge key
/// merge item by item (`$patch: delete` removes one), lists of scalars with the `merge`
/// strategy take the union, other lists are replaced; `$patch: replace`,
/// `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are
/// honoured.
/// A list item without its list's merge key, where the live object has the list, is the
/// real server's 500: `map: map[image:nginx] does not contain declared merge key: name`.
pub fn strategic_merge_patch(target: &mut Value, patch: &Value, ty: Ty<'_>) -> Result<(), String> {
    match patch {
        Value::Object(p) => {
            match p.get("$patch").and_then(Value::as_str) {
                Some("replace") => {
                    let mut replaced = patch.clone();
                    replaced.as_object_mut().expect("object").remove("$patch");
                    *target = replaced;
                    return Ok(());
                }
                Some("delete") => {
                    *target = Value::Object(Map::new());
                    return Ok(());
                }
                _ => {}
            }
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            let t = target.as_object_mut().expect("made an object above");
            if let Some(keep) = p.get("$retainKeys").and_then(Value::as_array) {
                t.retain(|k, _| keep.iter().any(|x| x == k.as_str()));
            }
            for (k, v) in p {
                if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
                    if let (Some(Value::Array(list)), Some(drop)) = (t.get_mut(field), v.as_array())
                    {
                        list.retain(|x| !drop.contains(x));
                    }
                    continue;
                }
                if k.starts_with('$') {
                    continue;
                }
                if v.is_null() {
                    t.remove(k);
                    continue;
                }
                let (fty, _) = ty.field(k);
                let order = p
                    .get(&format!("$setElementOrder/{k}"))
                    .and_then(Value::as_array)
                    .cloned();
                match (fty.patch_strategy(), v, t.get_mut(k)) {
                    (Some(key), Value::Array(items), Some(Value::Array(existing))) => {
                        let server = existing.clone();
                        match &key {
                            Some(key) => merge_list(existing, items, key, fty)?,
                            None => {
                                for item in items {
                                    if !existing.contains(item) {
                                        existing.push(item.clone());
                                    }
                                }
                            }
                        }
                        let order = order.unwrap_or_else(|| items.clone());
                        let merged = std::mem::take(existing);
                        *existing = ordered(merged, &order, &server, key.as_deref());
                    }
                    _ => strategic_merge_patch(t.entry(k.clone()).or_insert(Value::Null), v, fty)?,
                }
            }
        }
        Value::Array(items) => {
            let cleaned: Vec<Value> = items
                .iter()
                .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
                .cloned()
                .collect();
            *target = Value::Array(cleaned);
        }
        other => *target = other.clone(),
    }
    Ok(())
}

/// A JSON value as Go's `%+v` prints a `map[string]interface{}`: `map[data:map[k:1]]`.
pub fn go_map(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_map(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(go_map).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

fn merge_list(
    existing: &mut Vec<Value>,
    items: &[Value],
    key: &str,
    ty: Ty<'_>,
) -> Result<(), String> {
    let item_ty = ty.list_item();
    for item in items {
        let Some(id) = item.get(key).cloned() else {
            if item.is_object() {
                return Err(format!(
                    "map: {} does not contain declared merge key: {key}",
                    go_map(item)
                ));
            }
            existing.push(item.clone());
            continue;
        };
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match existing.iter().position(|e| e.get(key) == Some(&id)) {
            Some(i) if delete => {
                existing.remove(i);
            }
            Some(i) => strategic_merge_patch(&mut existing[i], item, item_ty)?,
            None if delete => {}
            None => existing.push(item.clone()),
        }
    }
    Ok(())
}

/// The order of a merged list, as the real server settles it: the items the patch names
/// in the patch's order, with the others put back among them where the live list had
/// them.
fn ordered(
    merged: Vec<Value>,
    patch_order: &[Value],
    server: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let id = |v: &Value| match key {
        Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
        None => v.clone(),
    };
    let patch_pos = |v: &Value| patch_order.iter().position(|p| id(p) == id(v));
    let server_pos = |v: &Value| server.iter().position(|s| id(s) == id(v));
    let (mut named, others): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|v| patch_pos(v).is_some());
    named.sort_by_key(|v| patch_pos(v));
    let mut out = Vec::with_capacity(named.len() + others.len());
    let (mut i, mut j) = (0, 0);
    while i < others.len() || j < named.len() {
        let take_other = if i >= others.len() {
            false
        } else if j >= named.len() {
            true
        } else {
            matches!((server_pos(&others[i]), server_pos(&named[j])), (Some(a), Some(b)) if a < b)
        };
        if take_other {
            out.push(others[i].clone());
            i += 1;
        } else {
            out.push(named[j].clone());
            j += 1;
        }
    }
    out
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
            Ty::of("v1", "Pod", None, false),
        )
        .unwrap();
        assert_eq!(
            pod,
            json!({"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}})
        );
        // An item without the merge key, where the live object has the list.
        let err = strategic_merge_patch(
            &mut pod,
            &json!({"spec": {"containers": [{"image": "x"}]}}),
            Ty::of("v1", "Pod", None, false),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "map: map[image:x] does not contain declared merge key: name"
        );
    }
}
