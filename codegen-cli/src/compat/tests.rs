//! The classification of every change kind, one row each: a baseline CRD, an edit, and the
//! change ids (with their class) the comparison must report, and nothing else; the edits
//! kube-apiserver does not tell apart must report nothing.

use serde_json::{Value, json};

use super::diff::{Class, compare};
use super::normal;

use Class::{Breaking, Compatible, Tightening};

fn base() -> Value {
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList", "shortNames": ["wd"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10, "description": "How many."},
                                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                                "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z]+$"},
                                "tags": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
                                    "items": {"type": "object", "required": ["name", "port"], "properties": {"name": {"type": "string"}, "port": {"type": "integer", "multipleOf": 4}}}},
                                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                                "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 20}},
                                "note": {"type": "string", "nullable": true}
                            },
                            "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "too big"}]
                        },
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
                    }
                }}
            }]
        }
    });
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.color"}]);
    let more = json!({
        "hosts": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"owner": {"type": "string"}}},
        "replicas": {"type": "integer", "default": 1, "enum": [1, 2, 3]},
        "target": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        "port": {"x-kubernetes-int-or-string": true},
        "since": {"type": "string", "format": "date-time"},
        "free": {"type": "object", "additionalProperties": true},
        "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"a": {"type": "string"}}}
    });
    let spec = schema_at(&mut crd, "spec")["properties"]
        .as_object_mut()
        .expect("the spec has properties");
    spec.extend(more.as_object().expect("an object").clone());
    crd
}

fn schema_at<'a>(crd: &'a mut Value, path: &str) -> &'a mut Value {
    let mut at = crd
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema")
        .expect("the base has a schema");
    for part in path.split('.').filter(|p| !p.is_empty()) {
        at = if part == "[*]" {
            at.get_mut("items").expect("items")
        } else if part == "{*}" {
            at.get_mut("additionalProperties")
                .expect("additionalProperties")
        } else {
            at.pointer_mut(&format!("/properties/{part}"))
                .unwrap_or_else(|| panic!("no property {part}"))
        };
    }
    at
}

type Edit = fn(&mut Value);

/// One row: what the edit is, the edit, and the `(change id, class)` findings expected.
type Row = (&'static str, Edit, Vec<(&'static str, Class)>);

fn rows() -> Vec<Row> {
    vec![
        (
            "field removed",
            |c| {
                schema_at(c, "spec")["properties"]
                    .as_object_mut()
                    .unwrap()
                    .remove("name");
            },
            vec![("field-removed", Breaking)],
        ),
        (
            "type changed",
            |c| {
                schema_at(c, "spec.size")["type"] = json!("string");
            },
            vec![("type-changed", Breaking)],
        ),
        (
            "int-or-string",
            |c| {
                schema_at(c, "spec.size")["x-kubernetes-int-or-string"] = json!(true);
            },
            vec![("type-changed", Breaking)],
        ),
        (
            "int32 to int64: int64 checks no more than the type",
            |c| {
                schema_at(c, "spec.size")["format"] = json!("int64");
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "format added",
            |c| {
                schema_at(c, "spec.name")["format"] = json!("email");
            },
            vec![("format-changed", Tightening)],
        ),
        (
            "format removed",
            |c| {
                schema_at(c, "spec.size")
                    .as_object_mut()
                    .unwrap()
                    .remove("format");
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "made required",
            |c| {
                schema_at(c, "spec")["required"] = json!(["size", "name"]);
            },
            vec![("field-required", Tightening)],
        ),
        (
            "no longer required",
            |c| {
                schema_at(c, "spec")["required"] = json!([]);
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "enum value removed",
            |c| {
                schema_at(c, "spec.color")["enum"] = json!(["red"]);
            },
            vec![("enum-value-removed", Tightening)],
        ),
        (
            "enum value added",
            |c| {
                schema_at(c, "spec.color")["enum"] = json!(["red", "blue", "green"]);
            },
            vec![("enum-value-added", Compatible)],
        ),
        (
            "enum added",
            |c| {
                schema_at(c, "spec.name")["enum"] = json!(["a"]);
            },
            vec![("enum-added", Tightening)],
        ),
        (
            "minimum raised",
            |c| {
                schema_at(c, "spec.size")["minimum"] = json!(2);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "maximum lowered",
            |c| {
                schema_at(c, "spec.size")["maximum"] = json!(5);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "maximum raised",
            |c| {
                schema_at(c, "spec.size")["maximum"] = json!(50);
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "exclusive minimum",
            |c| {
                schema_at(c, "spec.size")["exclusiveMinimum"] = json!(true);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "maxLength lowered",
            |c| {
                schema_at(c, "spec.name")["maxLength"] = json!(10);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "minLength added",
            |c| {
                schema_at(c, "spec.name")["minLength"] = json!(1);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "maxItems lowered",
            |c| {
                schema_at(c, "spec.tags")["maxItems"] = json!(4);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "maxItems removed",
            |c| {
                schema_at(c, "spec.tags")
                    .as_object_mut()
                    .unwrap()
                    .remove("maxItems");
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "item bound in a map value",
            |c| {
                schema_at(c, "spec.labels.{*}")["maxLength"] = json!(5);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "pattern changed",
            |c| {
                schema_at(c, "spec.name")["pattern"] = json!("^[a-z0-9]+$");
            },
            vec![("pattern-changed", Tightening)],
        ),
        (
            "pattern added",
            |c| {
                schema_at(c, "spec.color")["pattern"] = json!("^r");
            },
            vec![("pattern-changed", Tightening)],
        ),
        (
            "pattern removed",
            |c| {
                schema_at(c, "spec.name")
                    .as_object_mut()
                    .unwrap()
                    .remove("pattern");
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "list type changed",
            |c| {
                schema_at(c, "spec.tags")["x-kubernetes-list-type"] = json!("atomic");
            },
            vec![("list-type-changed", Breaking)],
        ),
        (
            "list map keys changed",
            |c| {
                schema_at(c, "spec.ports")["x-kubernetes-list-map-keys"] = json!(["port"]);
            },
            vec![("list-type-changed", Breaking)],
        ),
        (
            "list map keys reordered",
            |c| {
                schema_at(c, "spec.ports")["x-kubernetes-list-map-keys"] = json!(["port", "name"]);
            },
            vec![],
        ),
        (
            "unset list type made atomic",
            |c| {
                schema_at(c, "spec.hosts")["x-kubernetes-list-type"] = json!("atomic");
            },
            vec![],
        ),
        (
            "unset map type made granular",
            |c| {
                schema_at(c, "spec.meta")["x-kubernetes-map-type"] = json!("granular");
                schema_at(c, "spec.labels")["x-kubernetes-map-type"] = json!("granular");
            },
            vec![],
        ),
        (
            "map type made atomic",
            |c| {
                schema_at(c, "spec.labels")["x-kubernetes-map-type"] = json!("atomic");
            },
            vec![("list-type-changed", Breaking)],
        ),
        (
            "preserve unknown removed",
            |c| {
                schema_at(c, "spec.extra")
                    .as_object_mut()
                    .unwrap()
                    .remove("x-kubernetes-preserve-unknown-fields");
            },
            vec![("preserve-unknown-removed", Breaking)],
        ),
        (
            "additionalProperties true removed",
            |c| {
                schema_at(c, "spec.free")
                    .as_object_mut()
                    .unwrap()
                    .remove("additionalProperties");
            },
            vec![("preserve-unknown-removed", Breaking)],
        ),
        (
            "field removed from an object that keeps unknown fields",
            |c| {
                schema_at(c, "spec.open")["properties"]
                    .as_object_mut()
                    .unwrap()
                    .remove("a");
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "unknown fields kept",
            |c| {
                schema_at(c, "spec.meta")["x-kubernetes-preserve-unknown-fields"] = json!(true);
            },
            vec![("preserve-unknown-added", Compatible)],
        ),
        (
            "nullable added",
            |c| {
                schema_at(c, "spec.name")["nullable"] = json!(true);
            },
            vec![("nullable-added", Compatible)],
        ),
        (
            "false flags and empty keywords",
            |c| {
                let name = schema_at(c, "spec.name");
                name["nullable"] = json!(false);
                name["x-kubernetes-embedded-resource"] = json!(false);
                name["x-kubernetes-int-or-string"] = json!(false);
                name["format"] = json!("");
                name["enum"] = json!([]);
                name["minLength"] = json!(0);
                name["x-kubernetes-validations"] = json!([]);
                let tags = schema_at(c, "spec.tags");
                tags["uniqueItems"] = json!(false);
                tags["minItems"] = json!(0);
                let status = schema_at(c, "status");
                status["required"] = json!([]);
                status["x-kubernetes-preserve-unknown-fields"] = json!(false);
                schema_at(c, "spec.labels")["minProperties"] = json!(0);
                schema_at(c, "spec.color")["pattern"] = json!("");
            },
            vec![],
        ),
        (
            "exclusive bound without its bound",
            |c| {
                schema_at(c, "spec.ports.[*].port")["exclusiveMaximum"] = json!(true);
            },
            vec![],
        ),
        (
            "keywords of another type, multipleOf 1 on an integer",
            |c| {
                let size = schema_at(c, "spec.size");
                size["maxLength"] = json!(3);
                size["pattern"] = json!("^1$");
                size["maxItems"] = json!(2);
                schema_at(c, "spec.name")["maximum"] = json!(3);
                schema_at(c, "spec.ports.[*].port")["multipleOf"] = json!(1);
                schema_at(c, "spec.hosts")["multipleOf"] = json!(1);
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "enum reordered, numbers written as floats",
            |c| {
                let replicas = schema_at(c, "spec.replicas");
                replicas["enum"] = json!([3.0, 2, 1.0, 1]);
                replicas["default"] = json!(1.0);
                schema_at(c, "spec.color")["enum"] = json!(["blue", "red"]);
                schema_at(c, "spec.size")["maximum"] = json!(10.0);
            },
            vec![],
        ),
        (
            "formats kube-apiserver does not check, or spells otherwise",
            |c| {
                schema_at(c, "spec.since")["format"] = json!("datetime");
                schema_at(c, "spec.name")["format"] = json!("password");
                schema_at(c, "spec.color")["format"] = json!("color-name");
                schema_at(c, "spec.ports.[*].port")["format"] = json!("int64");
                schema_at(c, "spec.meta")["format"] = json!("email");
                schema_at(c, "spec.hosts.[*]")["format"] = json!("k8s-short-name");
                schema_at(c, "spec.port")["format"] = json!("int32");
            },
            vec![("format-changed", Tightening)],
        ),
        (
            "the anyOf that int-or-string allows",
            |c| {
                schema_at(c, "spec.port")["anyOf"] =
                    json!([{"type": "string"}, {"type": "integer"}]);
            },
            vec![],
        ),
        (
            "the allOf that int-or-string allows",
            |c| {
                schema_at(c, "spec.port")["allOf"] =
                    json!([{"anyOf": [{"type": "integer"}, {"type": "string"}]}]);
            },
            vec![],
        ),
        (
            "oneOf reordered",
            |c| {
                schema_at(c, "spec.target")["oneOf"] =
                    json!([{"required": ["b"]}, {"required": ["a"]}]);
            },
            vec![],
        ),
        (
            "nullable removed",
            |c| {
                schema_at(c, "spec.note")
                    .as_object_mut()
                    .unwrap()
                    .remove("nullable");
            },
            vec![("nullable-removed", Tightening)],
        ),
        (
            "rule added",
            |c| {
                schema_at(c, "spec.name")["x-kubernetes-validations"] =
                    json!([{"rule": "self != 'x'"}]);
            },
            vec![("cel-rule-added", Tightening)],
        ),
        (
            "rule changed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] =
                    json!([{"rule": "self.size <= 5", "message": "too big"}]);
            },
            vec![("cel-rule-changed", Tightening)],
        ),
        (
            "rule removed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([]);
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "rule message changed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([{"rule": "self.size <= 10", "message": "at most 10", "messageExpression": "'at most 10'"}]);
            },
            vec![],
        ),
        (
            "rule reason changed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([{"rule": "self.size <= 10", "message": "too big", "reason": "FieldValueForbidden"}]);
            },
            vec![("cel-rule-message-changed", Compatible)],
        ),
        (
            "rule fields at their defaults",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([{"rule": "self.size <= 10", "message": "too big", "reason": "FieldValueInvalid", "fieldPath": "", "optionalOldSelf": false}]);
            },
            vec![],
        ),
        (
            "rule spaced and commented differently",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] =
                    json!([{"rule": "self.size<=10 // at most ten\n", "message": "too big"}]);
            },
            vec![],
        ),
        (
            "empty rule added",
            |c| {
                schema_at(c, "spec.name")["x-kubernetes-validations"] = json!([{"rule": "  "}]);
            },
            vec![],
        ),
        (
            "optionalOldSelf set",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([{"rule": "self.size <= 10", "message": "too big", "optionalOldSelf": true}]);
            },
            vec![("cel-rule-changed", Tightening)],
        ),
        (
            "transition rule added",
            |c| {
                schema_at(c, "spec.name")["x-kubernetes-validations"] =
                    json!([{"rule": "self == oldSelf"}]);
            },
            vec![("cel-rule-added", Tightening)],
        ),
        (
            "rule added at the root",
            |c| {
                c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] =
                    json!([{"rule": "has(self.spec)"}]);
            },
            vec![("cel-rule-added", Breaking)],
        ),
        (
            "required at the root",
            |c| {
                c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["required"] = json!(["spec"]);
            },
            vec![("field-required", Breaking)],
        ),
        (
            "made required with a default",
            |c| {
                schema_at(c, "spec")["required"] = json!(["size", "color"]);
            },
            vec![("field-required", Compatible)],
        ),
        (
            "default changed",
            |c| {
                schema_at(c, "spec.color")["default"] = json!("blue");
            },
            vec![("default-changed", Breaking)],
        ),
        (
            "default removed",
            |c| {
                schema_at(c, "spec.color")
                    .as_object_mut()
                    .unwrap()
                    .remove("default");
            },
            vec![("default-changed", Breaking)],
        ),
        (
            "default added",
            |c| {
                schema_at(c, "spec.name")["default"] = json!("a");
            },
            vec![("default-added", Compatible)],
        ),
        (
            "optional field added",
            |c| {
                schema_at(c, "spec")["properties"]["owner"] = json!({"type": "string"});
            },
            vec![("field-added", Compatible)],
        ),
        (
            "required field added",
            |c| {
                let s = schema_at(c, "spec");
                s["properties"]["owner"] = json!({"type": "string"});
                s["required"] = json!(["size", "owner"]);
            },
            vec![("field-required", Tightening)],
        ),
        (
            "documentation changed",
            |c| {
                let size = schema_at(c, "spec.size");
                size["description"] = json!("How many widgets.");
                size["title"] = json!("Size");
                size["example"] = json!(3);
                size["externalDocs"] = json!({"url": "https://example.com"});
            },
            vec![],
        ),
        (
            "scope changed",
            |c| {
                c["spec"]["scope"] = json!("Cluster");
            },
            vec![("scope-changed", Breaking)],
        ),
        (
            "kind changed",
            |c| {
                c["spec"]["names"]["kind"] = json!("Gadget");
            },
            vec![("kind-changed", Breaking)],
        ),
        (
            "plural changed",
            |c| {
                c["spec"]["names"]["plural"] = json!("widgetz");
                c["metadata"]["name"] = json!("widgetz.example.com");
            },
            vec![("plural-changed", Breaking)],
        ),
        (
            "group changed",
            |c| {
                c["spec"]["group"] = json!("example.org");
                c["metadata"]["name"] = json!("widgets.example.org");
            },
            vec![("group-changed", Breaking)],
        ),
        (
            "short name added",
            |c| {
                c["spec"]["names"]["shortNames"] = json!(["wd", "wdg"]);
            },
            vec![("names-changed", Compatible)],
        ),
        (
            "version unserved",
            |c| {
                c["spec"]["versions"][0]["served"] = json!(false);
            },
            vec![("version-unserved", Breaking)],
        ),
        (
            "status subresource removed",
            |c| {
                c["spec"]["versions"][0]["subresources"]
                    .as_object_mut()
                    .unwrap()
                    .remove("status");
            },
            vec![("subresource-removed", Breaking)],
        ),
        (
            "scale path changed",
            |c| {
                c["spec"]["versions"][0]["subresources"]["scale"]["specReplicasPath"] =
                    json!(".spec.replicas");
            },
            vec![("scale-path-changed", Breaking)],
        ),
        (
            "version added",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
            },
            vec![("version-added", Compatible)],
        ),
        (
            "storage moved without conversion, to other fields",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                    .as_object_mut()
                    .unwrap()
                    .remove("note");
                c["spec"]["versions"][0]["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
            },
            vec![
                ("version-added", Compatible),
                ("storage-changed-without-conversion", Breaking),
            ],
        ),
        (
            "storage moved without conversion, to other validation only",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["maximum"] =
                    json!(20);
                c["spec"]["versions"][0]["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
            },
            vec![
                ("version-added", Compatible),
                ("storage-version-changed", Compatible),
            ],
        ),
        (
            "storage moved with a webhook",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["maximum"] =
                    json!(20);
                c["spec"]["versions"][0]["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
                c["spec"]["conversion"] = json!({"strategy": "Webhook"});
            },
            vec![
                ("version-added", Compatible),
                ("storage-version-changed", Compatible),
            ],
        ),
        (
            "multipleOf added",
            |c| {
                schema_at(c, "spec.size")["multipleOf"] = json!(2);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "multipleOf loosened",
            |c| {
                schema_at(c, "spec.ports.[*].port")["multipleOf"] = json!(2);
            },
            vec![("validation-loosened", Compatible)],
        ),
        (
            "multipleOf changed",
            |c| {
                schema_at(c, "spec.ports.[*].port")["multipleOf"] = json!(6);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "map became an object",
            |c| {
                let labels = schema_at(c, "spec.labels");
                labels
                    .as_object_mut()
                    .unwrap()
                    .remove("additionalProperties");
                labels["properties"] = json!({"app": {"type": "string"}});
            },
            vec![("type-changed", Breaking)],
        ),
        (
            "oneOf added",
            |c| {
                schema_at(c, "spec")["oneOf"] =
                    json!([{"required": ["name"]}, {"required": ["tags"]}]);
            },
            vec![("validation-changed", Tightening)],
        ),
        (
            "maxProperties added",
            |c| {
                schema_at(c, "spec.labels")["maxProperties"] = json!(4);
            },
            vec![("bound-tightened", Tightening)],
        ),
        (
            "exclusive maximum dropped",
            |c| {
                schema_at(c, "spec.size")["exclusiveMaximum"] = json!(false);
            },
            vec![],
        ),
        (
            "printer column added",
            |c| {
                c["spec"]["versions"][0]["additionalPrinterColumns"] =
                    json!([{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]);
            },
            vec![("printer-columns-changed", Compatible)],
        ),
        (
            "selectable field removed",
            |c| {
                c["spec"]["versions"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("selectableFields");
            },
            vec![("selectable-field-removed", Breaking)],
        ),
        (
            "version deprecated",
            |c| {
                c["spec"]["versions"][0]["deprecated"] = json!(true);
            },
            vec![("version-deprecated", Compatible)],
        ),
        ("nothing", |_| {}, vec![]),
    ]
}

#[test]
fn every_change_kind_is_classified() {
    let mut failures = Vec::new();
    let rows = rows();
    assert!(
        rows.len() >= 30,
        "the table covers at least 30 change kinds"
    );
    for (what, edit, want) in rows {
        let baseline = base();
        let mut current = base();
        edit(&mut current);
        let mut got: Vec<(&str, Class)> = compare(&[baseline], &[current])
            .iter()
            .map(|f| (f.change, f.class))
            .collect();
        got.sort();
        let mut want = want;
        want.sort();
        if got != want {
            failures.push(format!("{what}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_version_removed_while_stored_says_so() {
    let mut baseline = base();
    let mut v0 = baseline["spec"]["versions"][0].clone();
    v0["name"] = json!("v0");
    v0["storage"] = json!(false);
    baseline["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(v0);
    baseline["status"] = json!({"storedVersions": ["v0", "v1"]});
    let findings = compare(&[baseline], &[base()]);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].change, "version-removed");
    assert_eq!(findings[0].class, Breaking);
    assert!(
        findings[0].message.contains("storedVersions"),
        "{}",
        findings[0].message
    );
}

#[test]
fn a_new_rule_explains_ratcheting() {
    let baseline = base();
    let mut current = base();
    schema_at(&mut current, "spec.name")["x-kubernetes-validations"] =
        json!([{"rule": "self != 'x'"}]);
    let findings = compare(&[baseline], &[current]);
    assert_eq!(findings[0].path, "spec.name");
    assert!(
        findings[0]
            .message
            .contains("writable while it is left unchanged (validation ratcheting"),
        "{}",
        findings[0].message
    );
}

/// Two versions, listed in either order: the same CRD.
#[test]
fn the_order_of_versions_is_no_change() {
    let mut baseline = base();
    let mut v2 = baseline["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    baseline["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(v2);
    let mut current = baseline.clone();
    current["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let findings = compare(&[baseline], &[current]);
    assert!(findings.is_empty(), "{findings:?}");
}

/// Conversion through a webhook given up while the versions store different fields.
#[test]
fn a_webhook_conversion_given_up_is_breaking() {
    let mut baseline = base();
    let mut v2 = baseline["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("note");
    baseline["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(v2);
    baseline["spec"]["conversion"] = json!({"strategy": "Webhook"});
    let mut current = baseline.clone();
    current["spec"]["conversion"] = json!({"strategy": "None"});
    let findings = compare(&[baseline.clone()], &[current]);
    let got: Vec<(&str, Class)> = findings.iter().map(|f| (f.change, f.class)).collect();
    assert_eq!(got, [("conversion-removed", Breaking)]);

    // Versions that differ in validation only read each other's objects unchanged.
    baseline["spec"]["versions"][1] = baseline["spec"]["versions"][0].clone();
    baseline["spec"]["versions"][1]["name"] = json!("v2");
    baseline["spec"]["versions"][1]["storage"] = json!(false);
    baseline["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["size"]["maximum"] = json!(3);
    let mut current = baseline.clone();
    current["spec"]
        .as_object_mut()
        .unwrap()
        .remove("conversion");
    assert!(compare(&[baseline], &[current]).is_empty());
}

/// Rules are compared by their CEL tokens; `oldSelf` makes a transition rule only as the
/// variable, not inside a string or as a field name.
#[test]
fn rules_compare_by_tokens() {
    assert_eq!(
        normal::cel_text("self.a  in [1, 2] && // why\n  self.b == 'x  y'"),
        normal::cel_text("self.a in [1,2]&&self.b=='x  y'")
    );
    assert_ne!(
        normal::cel_text("self.b == 'x  y'"),
        normal::cel_text("self.b == 'x y'")
    );
    assert_ne!(normal::cel_text("a in b"), normal::cel_text("ainb"));
    assert!(normal::uses_old_self("self == oldSelf"));
    assert!(normal::uses_old_self("!has(oldSelf.x) || has(self.x)"));
    assert!(!normal::uses_old_self("self.oldSelf == 'oldSelf'"));
    assert!(!normal::uses_old_self("self.x == \"it's oldSelf\""));
}

/// An unserved version removed: breaking from manifests (objects may have been stored in
/// it once, and kube-apiserver then refuses the update); compatible when the cluster says
/// none are.
#[test]
fn an_unserved_version_removed_is_breaking_unless_nothing_is_stored_in_it() {
    let mut baseline = base();
    let mut v0 = baseline["spec"]["versions"][0].clone();
    v0["name"] = json!("v0");
    v0["storage"] = json!(false);
    v0["served"] = json!(false);
    baseline["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(v0);
    let classes = |baseline: &Value| -> Vec<(&'static str, Class)> {
        compare(std::slice::from_ref(baseline), &[base()])
            .iter()
            .map(|f| (f.change, f.class))
            .collect()
    };
    assert_eq!(classes(&baseline), [("version-removed", Breaking)]);
    baseline["status"] = json!({"storedVersions": ["v1"]});
    assert_eq!(classes(&baseline), [("version-removed", Compatible)]);
}
