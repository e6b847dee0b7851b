//! The OpenAPI v3 documents kubectl reads: `/openapi/v3` lists one document per served
//! group-version, and each document has the paths of its resources (a `PATCH` that takes
//! `fieldValidation`, so `kubectl apply` validates on the server) and the schemas of its
//! kinds: built-in ones from the types table (field types, required fields, list and map
//! types, patch merge keys and strategies; no descriptions), custom ones from their CRD's
//! `openAPIV3Schema`. `kubectl explain` finds a kind by `x-kubernetes-group-version-kind`.
//!
//! `/openapi/v2` is not served (kubectl only reads it as protobuf, and uses v3 first).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::resource::ResourceType;
use crate::rules::builtin::{self, Field, Kind, Type};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// `api/v1`, `apis/apps/v1`: the key of a group-version in `/openapi/v3`.
fn key(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The served group-versions and their resources.
fn group_versions(types: &[Arc<ResourceType>]) -> BTreeMap<String, Vec<&ResourceType>> {
    let mut out: BTreeMap<String, Vec<&ResourceType>> = BTreeMap::new();
    for t in types {
        out.entry(key(&t.group, &t.version)).or_default().push(t);
    }
    out
}

/// `/openapi/v3`: each group-version's document, under a URL whose `hash` changes with it.
pub fn root(types: &[Arc<ResourceType>]) -> Value {
    let mut paths = Map::new();
    for (k, resources) in group_versions(types) {
        let doc = document(&resources);
        let hash = hash(doc.to_string().as_bytes());
        paths.insert(
            k.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{k}?hash={hash}")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/<gv>`: the document, and its hash (the `ETag`).
pub fn group_version(types: &[Arc<ResourceType>], gv: &str) -> Option<(Value, String)> {
    let all = group_versions(types);
    let resources = all.get(gv)?;
    let doc = document(resources);
    let hash = hash(doc.to_string().as_bytes());
    Some((doc, hash))
}

/// Uppercase hex of two FNV-1a hashes of the bytes (the real server uses SHA-512; clients
/// only compare it).
fn hash(bytes: &[u8]) -> String {
    let fnv = |seed: u64| {
        bytes.iter().fold(seed, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    format!(
        "{:016X}{:016X}",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x6c62_272e_07bb_0142)
    )
}

fn document(resources: &[&ResourceType]) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for rt in resources {
        let Some(name) = schema_of(rt, &mut schemas) else {
            continue;
        };
        resource_paths(rt, &name, &mut paths);
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0-fake"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// Adds a resource's kind (and what it refers to) to `schemas`; returns its schema name.
fn schema_of(rt: &ResourceType, schemas: &mut Map<String, Value>) -> Option<String> {
    let gvk = json!([{"group": rt.group, "version": rt.version, "kind": rt.kind}]);
    if rt.custom {
        let mut schema = rt
            .schema
            .clone()
            .unwrap_or_else(|| json!({"type": "object"}));
        let props = schema
            .as_object_mut()?
            .entry("properties")
            .or_insert_with(|| json!({}));
        if let Some(props) = props.as_object_mut() {
            props.insert("apiVersion".into(), json!({"type": "string"}));
            props.insert("kind".into(), json!({"type": "string"}));
            props.insert("metadata".into(), reference(OBJECT_META));
        }
        schema["x-kubernetes-group-version-kind"] = gvk;
        let mut reversed: Vec<&str> = rt.group.split('.').collect();
        reversed.reverse();
        let name = format!("{}.{}.{}", reversed.join("."), rt.version, rt.kind);
        schemas.insert(name.clone(), schema);
        add_type(OBJECT_META, schemas);
        return Some(name);
    }
    let ty = builtin::types().kind(&rt.api_version(), &rt.kind)?;
    add_type(&ty.name, schemas);
    if let Some(s) = schemas.get_mut(&ty.name) {
        s["x-kubernetes-group-version-kind"] = gvk;
    }
    Some(ty.name.clone())
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A built-in struct type and every type it refers to.
fn add_type(name: &str, schemas: &mut Map<String, Value>) {
    if schemas.contains_key(name) {
        return;
    }
    let Some(ty) = builtin::types().get(name) else {
        schemas.insert(name.to_owned(), json!({"type": "object"}));
        return;
    };
    schemas.insert(name.to_owned(), json!({}));
    let schema = struct_schema(ty, schemas);
    schemas.insert(name.to_owned(), schema);
}

fn struct_schema(ty: &Type, schemas: &mut Map<String, Value>) -> Value {
    let mut props = Map::new();
    for (k, f) in &ty.fields {
        props.insert(k.clone(), field_schema(f, schemas));
    }
    let mut s = json!({"type": "object", "properties": props});
    if !ty.required.is_empty() {
        s["required"] = json!(ty.required);
    }
    if let Some(m) = &ty.map_type {
        s["x-kubernetes-map-type"] = json!(m);
    }
    s
}

fn field_schema(f: &Field, schemas: &mut Map<String, Value>) -> Value {
    let mut s = match &f.kind {
        Kind::String => json!({"type": "string"}),
        Kind::Bytes => json!({"type": "string", "format": "byte"}),
        Kind::Int32 => json!({"type": "integer", "format": "int32"}),
        Kind::Int64 => json!({"type": "integer", "format": "int64"}),
        Kind::Float64 => json!({"type": "number", "format": "double"}),
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Time | Kind::MicroTime => json!({"type": "string", "format": "date-time"}),
        Kind::Quantity => json!({"type": "string"}),
        Kind::IntStr => json!({"type": "string", "format": "int-or-string"}),
        Kind::Any => json!({"type": "object"}),
        Kind::Ref(name) => {
            add_type(name, schemas);
            match &f.default {
                Some(d) => json!({"allOf": [reference(name)], "default": d}),
                None => reference(name),
            }
        }
        Kind::List(item) => json!({"type": "array", "items": field_schema(item, schemas)}),
        Kind::Map(value) => {
            json!({"type": "object", "additionalProperties": field_schema(value, schemas)})
        }
    };
    let ext = [
        (
            "x-kubernetes-list-type",
            f.list_type.as_ref().map(|v| json!(v)),
        ),
        (
            "x-kubernetes-list-map-keys",
            (!f.keys.is_empty()).then(|| json!(f.keys)),
        ),
        (
            "x-kubernetes-map-type",
            f.map_type.as_ref().map(|v| json!(v)),
        ),
        (
            "x-kubernetes-patch-merge-key",
            f.merge_key.as_ref().map(|v| json!(v)),
        ),
        (
            "x-kubernetes-patch-strategy",
            f.strategy.as_ref().map(|v| json!(v)),
        ),
    ];
    for (k, v) in ext {
        if let Some(v) = v {
            s[k] = v;
        }
    }
    if !matches!(f.kind, Kind::Ref(_))
        && let Some(d) = &f.default
    {
        s["default"] = d.clone();
    }
    s
}

/// The collection and item paths of a resource, with the operations kubectl looks at.
fn resource_paths(rt: &ResourceType, schema: &str, paths: &mut Map<String, Value>) {
    let prefix = if rt.group.is_empty() {
        format!("/api/{}", rt.version)
    } else {
        format!("/apis/{}/{}", rt.group, rt.version)
    };
    let collection = if rt.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", rt.plural)
    } else {
        format!("{prefix}/{}", rt.plural)
    };
    let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    let path_param = |name: &str| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "uniqueItems": true}});
    let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference(schema)}}}});
    let op = |action: &str, verb: &str, params: Vec<Value>, body: Option<Vec<&str>>| {
        let mut o = json!({
            "operationId": format!("{verb}{}", rt.kind),
            "parameters": params,
            "responses": ok,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        if let Some(types) = body {
            let content: Map<String, Value> = types
                .into_iter()
                .map(|t| (t.to_owned(), json!({"schema": {"type": "object"}})))
                .collect();
            o["requestBody"] = json!({"content": content, "required": true});
        }
        o
    };
    let write = || {
        vec![
            query("dryRun"),
            query("fieldManager"),
            query("fieldValidation"),
        ]
    };
    let mut common = vec![query("pretty")];
    if rt.namespaced {
        common.push(path_param("namespace"));
    }
    let mut item_common = common.clone();
    item_common.insert(0, path_param("name"));
    paths.insert(
        collection.clone(),
        json!({
            "parameters": common,
            "get": op("list", "list", vec![query("labelSelector"), query("fieldSelector"), query("limit"), query("continue"), query("watch")], None),
            "post": op("post", "create", write(), Some(vec!["application/json", "application/yaml"])),
        }),
    );
    let mut patch_types = vec![
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    if !rt.custom {
        patch_types.push("application/strategic-merge-patch+json");
    }
    let mut patch_params = write();
    patch_params.push(query("force"));
    paths.insert(
        format!("{collection}/{{name}}"),
        json!({
            "parameters": item_common,
            "get": op("get", "read", vec![], None),
            "put": op("put", "replace", write(), Some(vec!["application/json", "application/yaml"])),
            "patch": op("patch", "patch", patch_params, Some(patch_types)),
            "delete": op("delete", "delete", vec![query("dryRun"), query("gracePeriodSeconds"), query("propagationPolicy")], None),
        }),
    );
}
