//! Server-side apply: field ownership per manager, recorded in `managedFields`.
//!
//! Fields are leaf paths; maps are granular, lists are atomic (the whole list is one field),
//! except lists merged by a key in the built-in types, which are also treated atomically
//! here (a simplification stated in the README).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field path: object keys from the root.
pub type FieldPath = Vec<String>;

/// Every leaf path set in `config` (any list counts as a leaf; an empty object claims nothing).
pub fn leaf_paths(config: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    collect(config, &mut Vec::new(), &mut out);
    out
}

fn collect(v: &Value, prefix: &mut Vec<String>, out: &mut BTreeSet<FieldPath>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, child) in map {
                if prefix.is_empty() && matches!(k.as_str(), "apiVersion" | "kind") {
                    continue;
                }
                if prefix.len() == 1
                    && prefix[0] == "metadata"
                    && !matches!(
                        k.as_str(),
                        "labels" | "annotations" | "finalizers" | "ownerReferences"
                    )
                {
                    continue;
                }
                prefix.push(k.clone());
                collect(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Object(_) => {}
        _ if !prefix.is_empty() => {
            out.insert(prefix.clone());
        }
        _ => {}
    }
}

/// `fieldsV1` (`{"f:spec": {"f:replicas": {}}}`) of a set of paths.
pub fn to_fields_v1(paths: &BTreeSet<FieldPath>) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for key in path {
            node = node
                .entry(format!("f:{key}"))
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("fieldsV1 nodes are objects");
        }
    }
    Value::Object(root)
}

/// The paths of a `fieldsV1` value (the leaves of the tree).
pub fn from_fields_v1(fields: &Value) -> BTreeSet<FieldPath> {
    fn walk(v: &Value, prefix: &mut Vec<String>, out: &mut BTreeSet<FieldPath>) {
        let Some(map) = v.as_object() else { return };
        let children: Vec<(&String, &Value)> =
            map.iter().filter(|(k, _)| k.starts_with("f:")).collect();
        if children.is_empty() {
            if !prefix.is_empty() {
                out.insert(prefix.clone());
            }
            return;
        }
        for (k, child) in children {
            prefix.push(k[2..].to_owned());
            walk(child, prefix, out);
            prefix.pop();
        }
    }
    let mut out = BTreeSet::new();
    walk(fields, &mut Vec::new(), &mut out);
    out
}

/// The value at `path`, if set.
pub fn get_path<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn set_path(v: &mut Value, path: &[String], value: Value) {
    let mut node = v;
    for key in &path[..path.len() - 1] {
        if !node.get(key).is_some_and(Value::is_object) {
            node[key.as_str()] = Value::Object(Map::new());
        }
        node = node.get_mut(key).expect("created above");
    }
    node[path[path.len() - 1].as_str()] = value;
}

fn remove_path(v: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = v;
    for key in parents {
        let Some(next) = node.get_mut(key) else {
            return;
        };
        node = next;
    }
    if let Some(map) = node.as_object_mut() {
        map.remove(last);
    }
}

/// One manager's entry in `managedFields`.
#[derive(Debug, Clone)]
pub struct Managed {
    /// Manager name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// Subresource (`""` or `status`).
    pub subresource: String,
    /// Owned paths.
    pub fields: BTreeSet<FieldPath>,
    /// `time` as stored.
    pub time: String,
    /// `apiVersion` as stored.
    pub api_version: String,
}

/// Reads `metadata.managedFields`.
pub fn read_managed(obj: &Value) -> Vec<Managed> {
    let Some(list) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            Managed {
                manager: s("manager"),
                operation: s("operation"),
                subresource: s("subresource"),
                fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                time: s("time"),
                api_version: s("apiVersion"),
            }
        })
        .collect()
}

/// Writes `metadata.managedFields`, dropping managers that own nothing.
pub fn write_managed(obj: &mut Value, managed: &[Managed]) {
    let list: Vec<Value> = managed
        .iter()
        .filter(|m| !m.fields.is_empty())
        .map(|m| {
            let mut e = json!({
                "manager": m.manager,
                "operation": m.operation,
                "apiVersion": m.api_version,
                "time": m.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&m.fields),
            });
            if !m.subresource.is_empty() {
                e["subresource"] = Value::String(m.subresource.clone());
            }
            e
        })
        .collect();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".to_owned(), Value::Array(list));
        }
    }
}

/// Why an apply conflicts: each field another manager owns with a different value.
#[derive(Debug)]
pub struct Conflicts(pub Vec<(String, FieldPath)>);

/// Applies `config` as `manager` onto `current` (the live object, or `None` to create).
///
/// Returns the new object. Conflicts are fields set to a different value and owned by
/// another manager; with `force` they change hands instead of failing.
pub fn apply(
    current: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    subresource: &str,
    now: &str,
    api_version: &str,
) -> Result<Value, Conflicts> {
    let applied = leaf_paths(config);
    // Creation starts from the applied configuration itself.
    let mut obj = current.cloned().unwrap_or_else(|| config.clone());
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let mut managed = read_managed(&obj);
    // Conflicts: a field this apply sets to another value, owned by another manager.
    let mut conflicts = Vec::new();
    for path in &applied {
        let differs = get_path(&obj, path) != get_path(config, path);
        if !differs {
            continue;
        }
        for m in managed
            .iter()
            .filter(|m| m.manager != manager && m.subresource == subresource)
        {
            if m.fields
                .iter()
                .any(|f| f == path || f.starts_with(path) || path.starts_with(f))
            {
                conflicts.push((m.manager.clone(), path.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(Conflicts(conflicts));
    }
    // Fields this manager applied before and no longer applies are removed, unless another
    // manager also owns them.
    let previous: BTreeSet<FieldPath> = managed
        .iter()
        .filter(|m| m.manager == manager && m.operation == "Apply" && m.subresource == subresource)
        .flat_map(|m| m.fields.iter().cloned())
        .collect();
    for path in previous.difference(&applied) {
        let shared = managed
            .iter()
            .any(|m| m.manager != manager && m.fields.contains(path));
        if !shared {
            remove_path(&mut obj, path);
        }
    }
    for path in &applied {
        if let Some(v) = get_path(config, path) {
            set_path(&mut obj, path, v.clone());
        }
    }
    // Ownership: this manager owns exactly what it applied; others lose what was forced.
    for m in managed.iter_mut() {
        if m.manager != manager {
            m.fields.retain(|f| {
                !applied
                    .iter()
                    .any(|a| a == f || f.starts_with(a) || a.starts_with(f))
            });
        }
    }
    managed.retain(|m| {
        !(m.manager == manager && m.operation == "Apply" && m.subresource == subresource)
    });
    managed.push(Managed {
        manager: manager.to_owned(),
        operation: "Apply".to_owned(),
        subresource: subresource.to_owned(),
        fields: applied,
        time: now.to_owned(),
        api_version: api_version.to_owned(),
    });
    write_managed(&mut obj, &managed);
    Ok(obj)
}

/// Records an `Update` by `manager`: it takes ownership of every leaf that changed.
pub fn record_update(
    obj: &mut Value,
    old: Option<&Value>,
    manager: &str,
    subresource: &str,
    now: &str,
    api_version: &str,
) {
    let mut managed = old.map(read_managed).unwrap_or_default();
    let new_paths = leaf_paths(obj);
    let changed: BTreeSet<FieldPath> = new_paths
        .iter()
        .filter(|p| old.is_none_or(|o| get_path(o, p) != get_path(obj, p)))
        .filter(|p| p.first().map(String::as_str) != Some("status") || subresource == "status")
        .cloned()
        .collect();
    // Fields that no longer exist are owned by nobody.
    for m in managed.iter_mut() {
        m.fields
            .retain(|f| new_paths.contains(f) || new_paths.iter().any(|p| p.starts_with(f)));
        if m.manager != manager {
            m.fields.retain(|f| !changed.contains(f));
        }
    }
    if !changed.is_empty() {
        match managed.iter_mut().find(|m| {
            m.manager == manager && m.operation == "Update" && m.subresource == subresource
        }) {
            Some(m) => {
                m.fields.extend(changed);
                m.time = now.to_owned();
            }
            None => managed.push(Managed {
                manager: manager.to_owned(),
                operation: "Update".to_owned(),
                subresource: subresource.to_owned(),
                fields: changed,
                time: now.to_owned(),
                api_version: api_version.to_owned(),
            }),
        }
    }
    write_managed(obj, &managed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_round_trips() {
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"k": "v"}});
        let paths = leaf_paths(&config);
        assert_eq!(
            to_fields_v1(&paths),
            json!({"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:a": {}}}})
        );
        assert_eq!(from_fields_v1(&to_fields_v1(&paths)), paths);
    }

    #[test]
    fn managers_conflict_unless_forced_and_removed_fields_go_away() {
        let a = json!({"metadata": {"name": "x"}, "data": {"k": "1", "j": "1"}});
        let obj = apply(None, &a, "alice", false, "", "t", "v1").unwrap();
        let b = json!({"metadata": {"name": "x"}, "data": {"k": "2"}});
        let err = apply(Some(&obj), &b, "bob", false, "", "t", "v1").unwrap_err();
        assert_eq!(
            err.0,
            vec![("alice".to_owned(), vec!["data".to_owned(), "k".to_owned()])]
        );
        let forced = apply(Some(&obj), &b, "bob", true, "", "t", "v1").unwrap();
        assert_eq!(forced["data"], json!({"k": "2", "j": "1"}));
        // alice stops applying `j`: it is removed, since nobody else owns it.
        let a2 = json!({"metadata": {"name": "x"}, "data": {}});
        let after = apply(Some(&forced), &a2, "alice", false, "", "t", "v1").unwrap();
        assert_eq!(after["data"], json!({"k": "2"}));
    }
}
