//! Apply configurations: what the generated `FooApplyConfiguration` types build on.
//!
//! An apply configuration holds only what a field manager has an opinion on: every field is
//! optional and left out of the request when unset, so server-side apply gives the manager
//! exactly those fields (client-go's `applyconfigurations`). A struct reaches the apply
//! configuration of the type of one of its fields through [`Apply`]: generated code and
//! `#[derive(ApplyConfiguration)]` implement it for the structs and enums of an API, and
//! every k8s-openapi type is its own apply configuration (its optional fields are left out
//! when unset, so it says only what is set, apart from the fields Kubernetes requires).
//!
//! [`extract`] goes the other way: from an object and a field manager to the apply
//! configuration holding exactly the fields that manager owns, read from `managedFields`,
//! which is what a read-modify-apply loop needs. It reads them as client-go's `Extract*`
//! does, along the type's [`Merge`]: a value owned whole is taken whole when the type
//! replaces it whole (atomic), and not at all when the type merges it item by item or
//! field by field (a manager that applied an empty map owns none of the entries others
//! added to it).

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The apply configuration of a type: for a struct of an API, a generated struct with every
/// field optional; for a k8s-openapi type, the type itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no apply configuration",
    label = "derive `ApplyConfiguration` on `{Self}` (a struct or enum of your API), or mark the field `+structType=atomic`"
)]
pub trait Apply {
    /// The apply configuration.
    type Configuration: Serialize + DeserializeOwned + Clone + Debug + PartialEq;
    /// How server-side apply merges a value of this type; whole by default.
    const MERGE: Merge = Merge::Atomic;
}

// Left out of diagnostics, so that a type of the user's API without an apply configuration
// is reported as lacking `Apply` (with the advice above), not k8s-openapi's `DeepMerge`.
#[diagnostic::do_not_recommend]
impl<T> Apply for T
where
    T: k8s_openapi::DeepMerge + Serialize + DeserializeOwned + Clone + Debug + PartialEq,
{
    type Configuration = T;
}

/// How server-side apply merges a value of a type, which is how [`extract`] reads what a
/// manager owns of it. Generated code says it for every apply configuration.
#[derive(Clone, Copy)]
pub enum Merge {
    /// Replaced whole: scalars, atomic lists, maps and structs, and types used as they are.
    Atomic,
    /// A struct merged field by field: the merge of each field, by JSON name.
    Struct(fn(&str) -> Merge),
    /// A list merged item by item (`+listType=map` by keys, `+listType=set` by value):
    /// the merge of its items.
    List(fn() -> Merge),
    /// A map merged key by key: the merge of its values.
    Map(fn() -> Merge),
}

impl Merge {
    /// A struct merged field by field, each field replaced whole.
    pub const FIELDS: Merge = Merge::Struct(|_| Merge::Atomic);
    /// A list merged item by item, each item replaced whole (a set, or a keyed list of
    /// atomic items).
    pub const ITEMS: Merge = Merge::List(|| Merge::Atomic);
    /// A map merged key by key, each value replaced whole.
    pub const ENTRIES: Merge = Merge::Map(|| Merge::Atomic);
}

impl std::fmt::Debug for Merge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Merge::Atomic => "Atomic",
            Merge::Struct(_) => "Struct",
            Merge::List(_) => "List",
            Merge::Map(_) => "Map",
        })
    }
}

/// How server-side apply merges `metadata` (`ObjectMeta`): labels and annotations key by
/// key, finalizers as a set, owner references by uid (each reference replaced whole: it is
/// `+structType=atomic`, so its managed-fields entry is the bare `k:{"uid":..}`).
pub const OBJECT_META: Merge = Merge::Struct(|field| match field {
    "labels" | "annotations" => Merge::ENTRIES,
    "finalizers" | "ownerReferences" => Merge::ITEMS,
    _ => Merge::Atomic,
});

/// The apply configuration of a whole object (`FooApplyConfiguration`): it knows the name
/// it applies to.
pub trait ObjectConfiguration: Serialize + DeserializeOwned {
    /// Its `metadata`, if set.
    fn metadata(&self) -> Option<&ObjectMeta>;
}

/// Why an apply configuration could not be extracted.
#[derive(Debug)]
pub enum ExtractError {
    /// The owned fields do not read as the apply configuration (a bug, or an object that
    /// does not match its type).
    Decode(serde_json::Error),
}

impl std::fmt::Display for ExtractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtractError::Decode(e) => write!(f, "cannot read the owned fields: {e}"),
        }
    }
}

impl std::error::Error for ExtractError {}

/// The apply configuration holding exactly the fields `manager` owns in `obj` through
/// server-side apply (`subresource`: `None` for the object, `Some("status")` for its status),
/// with `apiVersion`, `kind`, and the name and namespace. A manager that owns nothing gives
/// just those. `merge` is how the object's type merges (the apply configuration's `MERGE`).
pub fn extract<C: DeserializeOwned>(
    obj: &impl Serialize,
    manager: &str,
    subresource: Option<&str>,
    merge: Merge,
) -> Result<C, ExtractError> {
    let value = serde_json::to_value(obj).map_err(ExtractError::Decode)?;
    serde_json::from_value(extracted(&value, manager, subresource, merge))
        .map_err(ExtractError::Decode)
}

/// [`extract`] on the object as JSON: not generic, so a crate compiles it once rather than
/// once per kind.
fn extracted(value: &Value, manager: &str, subresource: Option<&str>, merge: Merge) -> Value {
    let entry = value
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|e| {
            e.get("manager").and_then(Value::as_str) == Some(manager)
                && e.get("operation").and_then(Value::as_str) == Some("Apply")
                && e.get("subresource").and_then(Value::as_str).unwrap_or("")
                    == subresource.unwrap_or("")
        });
    let mut out = match entry.and_then(|e| e.get("fieldsV1")) {
        Some(fields) => owned(value, fields, merge).unwrap_or_else(|| Value::Object(Map::new())),
        None => Value::Object(Map::new()),
    };
    if !out.is_object() {
        out = Value::Object(Map::new());
    }
    for key in ["apiVersion", "kind"] {
        if let Some(v) = value.get(key) {
            out[key] = v.clone();
        }
    }
    if !out.get("metadata").is_some_and(Value::is_object) {
        out["metadata"] = Value::Object(Map::new());
    }
    for key in ["name", "namespace"] {
        if let Some(v) = value.pointer(&format!("/metadata/{key}")) {
            out["metadata"][key] = v.clone();
        }
    }
    out
}

/// The parts of `value` that a `fieldsV1` set names, read along `merge`: `f:<field>`
/// fields, `k:{...}` list items by their keys (with the key fields), `v:<json>` set members,
/// `i:<n>` items by index. A value the set owns whole (an empty set, or `.` alone) is taken
/// whole when `merge` replaces it whole, and left out when `merge` merges its items or
/// fields (unless it is empty). `None` when nothing is owned.
pub fn owned(value: &Value, fields: &Value, merge: Merge) -> Option<Value> {
    let set = fields.as_object()?;
    if set.keys().all(|k| k == ".") {
        return match (merge, value) {
            (Merge::Atomic, _) => Some(value.clone()),
            (_, Value::Object(m)) if !m.is_empty() => None,
            (_, Value::Array(a)) if !a.is_empty() => None,
            _ => Some(value.clone()),
        };
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, sub) in set {
                let Some(name) = key.strip_prefix("f:") else {
                    continue;
                };
                let inner = match merge {
                    Merge::Struct(field) => field(name),
                    Merge::Map(values) => values(),
                    _ => Merge::Atomic,
                };
                if let Some(v) = map.get(name)
                    && let Some(kept) = owned(v, sub, inner)
                {
                    out.insert(name.to_owned(), kept);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let inner = match merge {
                Merge::List(items) => items(),
                _ => Merge::Atomic,
            };
            // The set's item keys, read once: `k:` by their key fields, `v:` by value.
            let mut keyed: Vec<(Map<String, Value>, &Value)> = Vec::new();
            let mut members: Vec<(Value, &Value)> = Vec::new();
            let mut indexed: Vec<(usize, &Value)> = Vec::new();
            for (key, sub) in set {
                if let Some(json) = key.strip_prefix("k:") {
                    if let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(json) {
                        keyed.push((keys, sub));
                    }
                } else if let Some(json) = key.strip_prefix("v:") {
                    if let Ok(member) = serde_json::from_str::<Value>(json) {
                        members.push((member, sub));
                    }
                } else if let Some(index) = key.strip_prefix("i:")
                    && let Ok(index) = index.parse::<usize>()
                {
                    indexed.push((index, sub));
                }
            }
            // In the object's order, as the server keeps the items.
            let mut kept = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if let Some((keys, sub)) = keyed
                    .iter()
                    .find(|(keys, _)| keys.iter().all(|(k, v)| item.get(k) == Some(v)))
                {
                    match owned(item, sub, inner) {
                        Some(Value::Object(mut part)) => {
                            // The keys identify the item, owned or not.
                            for (k, v) in keys {
                                part.insert(k.clone(), v.clone());
                            }
                            kept.push(Value::Object(part));
                        }
                        Some(other) => kept.push(other),
                        // Owned as an item (`.`) with none of its other fields: the item
                        // still belongs to the manager, named by its keys.
                        None if sub.get(".").is_some() => kept.push(Value::Object(keys.clone())),
                        None => {}
                    }
                } else if members.iter().any(|(member, _)| member == item) {
                    kept.push(item.clone());
                } else if let Some((_, sub)) = indexed.iter().find(|(index, _)| *index == i)
                    && let Some(part) = owned(item, sub, inner)
                {
                    kept.push(part);
                }
            }
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn owned_fields_follow_the_set_through_objects_keyed_lists_and_sets() {
        let obj = json!({
            "spec": {
                "replicas": 3,
                "paused": false,
                "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "x", "port": 1}],
                "tags": ["a", "b"],
                "labels": {"a": "1", "b": "2"},
            }
        });
        let fields = json!({
            "f:spec": {
                "f:replicas": {},
                "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:port": {}}},
                "f:tags": {"v:\"b\"": {}},
                "f:labels": {"f:a": {}},
            }
        });
        const SPEC: Merge = Merge::Struct(|field| match field {
            "ports" => Merge::List(|| Merge::Struct(|_| Merge::Atomic)),
            "tags" => Merge::List(|| Merge::Atomic),
            "labels" => Merge::Map(|| Merge::Atomic),
            _ => Merge::Atomic,
        });
        let root = Merge::Struct(|field| match field {
            "spec" => SPEC,
            _ => Merge::Atomic,
        });
        assert_eq!(
            owned(&obj, &fields, root).unwrap(),
            json!({"spec": {
                "replicas": 3,
                "ports": [{"name": "http", "port": 80}],
                "tags": ["b"],
                "labels": {"a": "1"},
            }})
        );
    }

    #[test]
    fn a_keyed_item_owned_only_as_an_item_keeps_its_keys() {
        let obj =
            json!({"spec": {"ports": [{"name": "http", "port": 80}, {"name": "x", "port": 1}]}});
        let fields = json!({"f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}}}}});
        let root = Merge::Struct(|field| match field {
            "spec" => Merge::Struct(|field| match field {
                "ports" => Merge::List(|| Merge::FIELDS),
                _ => Merge::Atomic,
            }),
            _ => Merge::Atomic,
        });
        assert_eq!(
            owned(&obj, &fields, root).unwrap(),
            json!({"spec": {"ports": [{"name": "http"}]}})
        );
    }

    #[test]
    fn an_owner_reference_is_owned_whole_by_its_bare_key() {
        // As kube-apiserver 1.36 records an applied owner reference: `OwnerReference` is
        // `+structType=atomic`, so the item's entry has no fields of its own.
        let obj = json!({"metadata": {"name": "child", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u1", "controller": true},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "u2"},
        ]}});
        let fields = json!({"f:metadata": {"f:ownerReferences": {"k:{\"uid\":\"u1\"}": {}}}});
        let root = Merge::Struct(|field| match field {
            "metadata" => OBJECT_META,
            _ => Merge::Atomic,
        });
        assert_eq!(
            owned(&obj, &fields, root).unwrap(),
            json!({"metadata": {"ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u1", "controller": true},
            ]}})
        );
    }

    #[test]
    fn a_value_owned_whole_is_taken_whole_only_where_the_type_replaces_it_whole() {
        let obj = json!({"data": {"k": "v", "other": "x"}, "args": ["a", "b"], "empty": {}});
        let fields = json!({"f:data": {}, "f:args": {}, "f:empty": {}});
        let root = Merge::Struct(|field| match field {
            "data" | "empty" => Merge::Map(|| Merge::Atomic),
            _ => Merge::Atomic,
        });
        // `data` merges key by key: owning it whole (applied as `{}`) owns none of its
        // entries; the atomic `args` is all there; an empty map stays an empty map.
        assert_eq!(
            owned(&obj, &fields, root).unwrap(),
            json!({"args": ["a", "b"], "empty": {}})
        );
        // Without type knowledge everything owned whole is taken whole.
        assert_eq!(
            owned(&obj, &fields, Merge::Atomic).unwrap(),
            json!({"data": {"k": "v", "other": "x"}, "args": ["a", "b"], "empty": {}})
        );
    }
}
