//! The classification of every change kind, one row each: a baseline CRD, an edit, and the
//! change ids (with breaking or not) the comparison must report, and nothing else.

use serde_json::{Value, json};

use super::diff::compare;

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
                "subresources": {"status": {}},
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
                                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer", "multipleOf": 4}}}},
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

/// One row: what the edit is, the edit, and the `(change id, breaking)` findings expected.
type Row = (&'static str, Edit, Vec<(&'static str, bool)>);

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
            vec![("field-removed", true)],
        ),
        (
            "type changed",
            |c| {
                schema_at(c, "spec.size")["type"] = json!("string");
            },
            vec![("type-changed", true)],
        ),
        (
            "int-or-string",
            |c| {
                schema_at(c, "spec.size")["x-kubernetes-int-or-string"] = json!(true);
            },
            vec![("type-changed", true)],
        ),
        (
            "format changed",
            |c| {
                schema_at(c, "spec.size")["format"] = json!("int64");
            },
            vec![("format-changed", true)],
        ),
        (
            "format removed",
            |c| {
                schema_at(c, "spec.size")
                    .as_object_mut()
                    .unwrap()
                    .remove("format");
            },
            vec![("validation-loosened", false)],
        ),
        (
            "made required",
            |c| {
                schema_at(c, "spec")["required"] = json!(["size", "name"]);
            },
            vec![("field-required", true)],
        ),
        (
            "no longer required",
            |c| {
                schema_at(c, "spec")["required"] = json!([]);
            },
            vec![("validation-loosened", false)],
        ),
        (
            "enum value removed",
            |c| {
                schema_at(c, "spec.color")["enum"] = json!(["red"]);
            },
            vec![("enum-value-removed", true)],
        ),
        (
            "enum value added",
            |c| {
                schema_at(c, "spec.color")["enum"] = json!(["red", "blue", "green"]);
            },
            vec![("enum-value-added", false)],
        ),
        (
            "enum added",
            |c| {
                schema_at(c, "spec.name")["enum"] = json!(["a"]);
            },
            vec![("enum-added", true)],
        ),
        (
            "minimum raised",
            |c| {
                schema_at(c, "spec.size")["minimum"] = json!(2);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "maximum lowered",
            |c| {
                schema_at(c, "spec.size")["maximum"] = json!(5);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "maximum raised",
            |c| {
                schema_at(c, "spec.size")["maximum"] = json!(50);
            },
            vec![("validation-loosened", false)],
        ),
        (
            "exclusive minimum",
            |c| {
                schema_at(c, "spec.size")["exclusiveMinimum"] = json!(true);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "maxLength lowered",
            |c| {
                schema_at(c, "spec.name")["maxLength"] = json!(10);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "minLength added",
            |c| {
                schema_at(c, "spec.name")["minLength"] = json!(1);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "maxItems lowered",
            |c| {
                schema_at(c, "spec.tags")["maxItems"] = json!(4);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "maxItems removed",
            |c| {
                schema_at(c, "spec.tags")
                    .as_object_mut()
                    .unwrap()
                    .remove("maxItems");
            },
            vec![("validation-loosened", false)],
        ),
        (
            "item bound in a map value",
            |c| {
                schema_at(c, "spec.labels.{*}")["maxLength"] = json!(5);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "pattern changed",
            |c| {
                schema_at(c, "spec.name")["pattern"] = json!("^[a-z0-9]+$");
            },
            vec![("pattern-changed", true)],
        ),
        (
            "pattern added",
            |c| {
                schema_at(c, "spec.color")["pattern"] = json!("^r");
            },
            vec![("pattern-changed", true)],
        ),
        (
            "pattern removed",
            |c| {
                schema_at(c, "spec.name")
                    .as_object_mut()
                    .unwrap()
                    .remove("pattern");
            },
            vec![("validation-loosened", false)],
        ),
        (
            "list type changed",
            |c| {
                schema_at(c, "spec.tags")["x-kubernetes-list-type"] = json!("atomic");
            },
            vec![("list-type-changed", true)],
        ),
        (
            "list map keys changed",
            |c| {
                schema_at(c, "spec.ports")["x-kubernetes-list-map-keys"] = json!(["port"]);
            },
            vec![("list-type-changed", true)],
        ),
        (
            "preserve unknown removed",
            |c| {
                schema_at(c, "spec.extra")
                    .as_object_mut()
                    .unwrap()
                    .remove("x-kubernetes-preserve-unknown-fields");
            },
            vec![("preserve-unknown-removed", true)],
        ),
        (
            "nullable removed",
            |c| {
                schema_at(c, "spec.note")
                    .as_object_mut()
                    .unwrap()
                    .remove("nullable");
            },
            vec![("nullable-removed", true)],
        ),
        (
            "rule added",
            |c| {
                schema_at(c, "spec.name")["x-kubernetes-validations"] =
                    json!([{"rule": "self != 'x'"}]);
            },
            vec![("cel-rule-added", true)],
        ),
        (
            "rule changed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] =
                    json!([{"rule": "self.size <= 5", "message": "too big"}]);
            },
            vec![("cel-rule-changed", true)],
        ),
        (
            "rule removed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] = json!([]);
            },
            vec![("validation-loosened", false)],
        ),
        (
            "rule message changed",
            |c| {
                schema_at(c, "spec")["x-kubernetes-validations"] =
                    json!([{"rule": "self.size <= 10", "message": "at most 10"}]);
            },
            vec![("cel-rule-message-changed", false)],
        ),
        (
            "default changed",
            |c| {
                schema_at(c, "spec.color")["default"] = json!("blue");
            },
            vec![("default-changed", true)],
        ),
        (
            "default removed",
            |c| {
                schema_at(c, "spec.color")
                    .as_object_mut()
                    .unwrap()
                    .remove("default");
            },
            vec![("default-changed", true)],
        ),
        (
            "default added",
            |c| {
                schema_at(c, "spec.name")["default"] = json!("a");
            },
            vec![("default-added", false)],
        ),
        (
            "optional field added",
            |c| {
                schema_at(c, "spec")["properties"]["owner"] = json!({"type": "string"});
            },
            vec![("field-added", false)],
        ),
        (
            "required field added",
            |c| {
                let s = schema_at(c, "spec");
                s["properties"]["owner"] = json!({"type": "string"});
                s["required"] = json!(["size", "owner"]);
            },
            vec![("field-required", true)],
        ),
        (
            "description changed",
            |c| {
                schema_at(c, "spec.size")["description"] = json!("How many widgets.");
            },
            vec![("description-changed", false)],
        ),
        (
            "scope changed",
            |c| {
                c["spec"]["scope"] = json!("Cluster");
            },
            vec![("scope-changed", true)],
        ),
        (
            "kind changed",
            |c| {
                c["spec"]["names"]["kind"] = json!("Gadget");
            },
            vec![("kind-changed", true)],
        ),
        (
            "plural changed",
            |c| {
                c["spec"]["names"]["plural"] = json!("widgetz");
                c["metadata"]["name"] = json!("widgetz.example.com");
            },
            vec![("plural-changed", true)],
        ),
        (
            "group changed",
            |c| {
                c["spec"]["group"] = json!("example.org");
                c["metadata"]["name"] = json!("widgets.example.org");
            },
            vec![("group-changed", true)],
        ),
        (
            "short name added",
            |c| {
                c["spec"]["names"]["shortNames"] = json!(["wd", "wdg"]);
            },
            vec![("names-changed", false)],
        ),
        (
            "version unserved",
            |c| {
                c["spec"]["versions"][0]["served"] = json!(false);
            },
            vec![("version-unserved", true)],
        ),
        (
            "status subresource removed",
            |c| {
                c["spec"]["versions"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("subresources");
            },
            vec![("subresource-removed", true)],
        ),
        (
            "version added",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
            },
            vec![("version-added", false)],
        ),
        (
            "storage moved without conversion",
            |c| {
                let mut v2 = c["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["maximum"] =
                    json!(20);
                c["spec"]["versions"][0]["storage"] = json!(false);
                c["spec"]["versions"].as_array_mut().unwrap().push(v2);
            },
            vec![
                ("version-added", false),
                ("storage-changed-without-conversion", true),
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
            vec![("version-added", false), ("storage-version-changed", false)],
        ),
        (
            "multipleOf added",
            |c| {
                schema_at(c, "spec.size")["multipleOf"] = json!(2);
            },
            vec![("bound-tightened", true)],
        ),
        (
            "multipleOf loosened",
            |c| {
                schema_at(c, "spec.ports.[*].port")["multipleOf"] = json!(2);
            },
            vec![("validation-loosened", false)],
        ),
        (
            "multipleOf changed",
            |c| {
                schema_at(c, "spec.ports.[*].port")["multipleOf"] = json!(6);
            },
            vec![("bound-tightened", true)],
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
            vec![("type-changed", true)],
        ),
        (
            "oneOf added",
            |c| {
                schema_at(c, "spec")["oneOf"] =
                    json!([{"required": ["name"]}, {"required": ["tags"]}]);
            },
            vec![("validation-changed", true)],
        ),
        (
            "maxProperties added",
            |c| {
                schema_at(c, "spec.labels")["maxProperties"] = json!(4);
            },
            vec![("bound-tightened", true)],
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
            vec![("printer-columns-changed", false)],
        ),
        (
            "selectable field removed",
            |c| {
                c["spec"]["versions"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("selectableFields");
            },
            vec![("selectable-field-removed", true)],
        ),
        (
            "version deprecated",
            |c| {
                c["spec"]["versions"][0]["deprecated"] = json!(true);
            },
            vec![("version-deprecated", false)],
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
        let mut got: Vec<(&str, bool)> = compare(&[baseline], &[current])
            .iter()
            .map(|f| (f.change, f.breaking))
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
    assert!(findings[0].breaking);
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
            .contains("ratcheting keeps stored objects writable"),
        "{}",
        findings[0].message
    );
}
