//! What server-side apply needs to know of a type: which lists are atomic, sets or keyed
//! maps (and their keys' defaults), which maps and structs are atomic, which fields are
//! declared. Built-in kinds answer from the built-in types, custom resources from their
//! CRD schema (with the built-in `ObjectMeta` as `metadata`), anything else is "deduced":
//! granular maps, atomic lists.

use serde_json::{Map, Value, json};

use crate::rules::builtin::{self, Field, Kind, Type};

/// A type, or a schema node.
#[derive(Debug, Clone, Copy)]
pub enum Ty<'a> {
    /// A built-in struct.
    Struct(&'a Type),
    /// A built-in field's type.
    Field(&'a Field),
    /// The root of a custom resource: its schema, with `metadata` the built-in one.
    CrdRoot(&'a Value),
    /// A node of a CRD schema.
    Schema(&'a Value),
    /// No schema: objects are granular maps of deduced values, lists atomic.
    Deduced,
    /// Replaced as a whole.
    Atomic,
}

/// How a value of a type is walked.
#[derive(Debug, Clone)]
pub enum Shape<'a> {
    /// A scalar, or an atomic list, map or struct: one field.
    Leaf,
    /// A set (`keys` is `None`) or a keyed list.
    List {
        /// The items' type.
        item: Ty<'a>,
        /// The key fields of a `listType=map` list.
        keys: Option<Vec<String>>,
    },
    /// A granular map or struct: its fields are walked one by one.
    Map,
}

fn object_meta() -> Option<&'static Type> {
    builtin::types().get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
}

impl<'a> Ty<'a> {
    /// The type of a built-in kind, or of a custom resource with `schema`.
    pub fn of(api_version: &str, kind: &str, schema: Option<&'a Value>, custom: bool) -> Ty<'a> {
        if custom {
            return schema.map_or(Ty::Deduced, Ty::CrdRoot);
        }
        builtin::types()
            .kind(api_version, kind)
            .map_or(Ty::Deduced, Ty::Struct)
    }

    /// How a value of this type is walked.
    pub fn shape(self, value: &Value) -> Shape<'a> {
        match self {
            Ty::Atomic => Shape::Leaf,
            Ty::Deduced => match value {
                Value::Object(_) => Shape::Map,
                _ => Shape::Leaf,
            },
            Ty::Struct(t) => {
                if t.map_type.as_deref() == Some("atomic") {
                    Shape::Leaf
                } else {
                    Shape::Map
                }
            }
            Ty::Field(f) => field_shape(f),
            Ty::CrdRoot(_) => Shape::Map,
            Ty::Schema(s) => schema_shape(s, value),
        }
    }

    /// The type of field `name` of a map or struct, and whether the type declares it.
    pub fn field(self, name: &str) -> (Ty<'a>, bool) {
        match self {
            Ty::Struct(t) => match t.fields.get(name) {
                Some(f) => (Ty::Field(f), true),
                None => (Ty::Deduced, false),
            },
            Ty::Field(f) => match &f.kind {
                Kind::Ref(r) => match builtin::types().get(r) {
                    Some(t) => Ty::Struct(t).field(name),
                    None => (Ty::Deduced, false),
                },
                Kind::Map(values) => (Ty::Field(values), false),
                _ => (Ty::Deduced, false),
            },
            Ty::CrdRoot(s) => {
                if name == "metadata" {
                    return (object_meta().map_or(Ty::Deduced, Ty::Struct), true);
                }
                Ty::Schema(s).field(name)
            }
            Ty::Schema(s) => {
                if let Some(p) = s.pointer(&format!("/properties/{}", escape(name))) {
                    return (Ty::Schema(p), true);
                }
                match s.get("additionalProperties") {
                    Some(a) if a.is_object() => (Ty::Schema(a), false),
                    _ => (Ty::Deduced, false),
                }
            }
            Ty::Deduced => (Ty::Deduced, false),
            Ty::Atomic => (Ty::Atomic, false),
        }
    }

    /// A list's strategic-merge strategy: `Some(Some(key))` merges items by `key`,
    /// `Some(None)` takes the union of scalars, `None` replaces the list.
    pub fn patch_strategy(self) -> Option<Option<String>> {
        match self {
            Ty::Field(f) if matches!(f.kind, Kind::List(_)) => {
                let merge = f
                    .strategy
                    .as_deref()
                    .is_some_and(|s| s.split(',').any(|p| p == "merge"));
                merge.then(|| f.merge_key.clone())
            }
            _ => None,
        }
    }

    /// The items' type of a list.
    pub fn list_item(self) -> Ty<'a> {
        match self {
            Ty::Field(f) => match &f.kind {
                Kind::List(item) => Ty::Field(item),
                _ => Ty::Deduced,
            },
            Ty::Schema(s) => s.get("items").map_or(Ty::Deduced, Ty::Schema),
            _ => Ty::Deduced,
        }
    }

    /// The default of an item's field `key` (a missing key field takes it).
    pub fn default_of(self, key: &str) -> Option<Value> {
        match self {
            Ty::Field(f) => match &f.kind {
                Kind::Ref(r) => builtin::types()
                    .get(r)
                    .and_then(|t| t.fields.get(key))
                    .and_then(|kf| kf.default.clone()),
                _ => None,
            },
            Ty::Struct(t) => t.fields.get(key).and_then(|kf| kf.default.clone()),
            Ty::Schema(s) => s
                .pointer(&format!("/properties/{}/default", escape(key)))
                .cloned(),
            _ => None,
        }
    }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn field_shape(f: &Field) -> Shape<'_> {
    match &f.kind {
        Kind::List(item) => {
            let keys = match (f.list_type.as_deref(), f.strategy.as_deref()) {
                (Some("set"), _) => Some(None),
                (Some("map"), _) => Some(Some(f.keys.clone())),
                (Some(_), _) => None,
                (None, Some(s)) if s.split(',').any(|p| p == "merge") => {
                    Some(f.merge_key.clone().map(|k| vec![k]))
                }
                (None, _) => None,
            };
            match keys {
                Some(keys) => Shape::List {
                    item: Ty::Field(item),
                    keys,
                },
                None => Shape::Leaf,
            }
        }
        Kind::Map(_) => {
            if f.map_type.as_deref() == Some("atomic") {
                Shape::Leaf
            } else {
                Shape::Map
            }
        }
        Kind::Ref(r) => match builtin::types().get(r) {
            Some(t)
                if t.map_type.as_deref() != Some("atomic")
                    && f.map_type.as_deref() != Some("atomic") =>
            {
                Shape::Map
            }
            _ => Shape::Leaf,
        },
        _ => Shape::Leaf,
    }
}

fn schema_shape<'a>(s: &'a Value, value: &Value) -> Shape<'a> {
    let ty = s.get("type").and_then(Value::as_str);
    let preserve = s.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    match (ty, value) {
        (Some("array"), _) => {
            let Some(items) = s.get("items").filter(|i| i.is_object()) else {
                return Shape::Leaf;
            };
            match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => Shape::List {
                    item: Ty::Schema(items),
                    keys: None,
                },
                Some("map") => Shape::List {
                    item: Ty::Schema(items),
                    keys: Some(
                        s.get("x-kubernetes-list-map-keys")
                            .and_then(Value::as_array)
                            .map(|k| {
                                k.iter()
                                    .filter_map(Value::as_str)
                                    .map(str::to_owned)
                                    .collect()
                            })
                            .unwrap_or_default(),
                    ),
                },
                _ => Shape::Leaf,
            }
        }
        (Some("object"), _) | (None, Value::Object(_)) if preserve || ty == Some("object") => {
            if s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                Shape::Leaf
            } else {
                Shape::Map
            }
        }
        _ => Shape::Leaf,
    }
}

/// The empty object a create starts from: the kind's Go zero value as the server encodes
/// it (structs `{}`, fields without `omitempty` at their zero value or `null`; see
/// [`apiserver_rules::defaults::go_type`]). A custom resource's has only `apiVersion` and
/// `kind`.
pub fn zero(ty: Ty<'_>, api_version: &str, kind: &str) -> Value {
    let mut out = Value::Object(Map::new());
    if let Ty::Struct(t) = ty {
        apiserver_rules::defaults::go_type::round_trip(t, &mut out);
    }
    out["apiVersion"] = json!(api_version);
    out["kind"] = json!(kind);
    out
}
