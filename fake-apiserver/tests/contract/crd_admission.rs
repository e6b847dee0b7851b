//! CustomResourceDefinitions kube-apiserver refuses: protected groups without approval,
//! list-map keys that are not item properties, defaults that break their own schema,
//! schemas that are not structural, inconsistent names and versions, printer columns,
//! selectable fields and scale paths it cannot use. Each case uses a group of its own run.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::ApiResource;
use serde_json::{Value, json};

use crate::env::{Env, Raw, case, run_id};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A CRD of kind `Thing` in `group`, with `spec` as the spec's schema.
fn crd(group: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
    })
}

fn group(env: &Env, name: &str) -> String {
    let _ = env;
    format!("{name}-{}.contract.example.com", run_id())
}

async fn post(env: &Env, crd: &Value) -> Raw {
    let r = env
        .raw("POST", CRDS, "application/json", &crd.to_string())
        .await;
    if r.code == 201 {
        let name = crd["metadata"]["name"].as_str().unwrap();
        env.delete_later(ApiResource::erase::<CustomResourceDefinition>(&()), name);
    }
    r
}

const P: &str = "spec.validation.openAPIV3Schema.properties[spec].properties";

fn assert_invalid(r: &Raw, field: &str, message: &str) {
    assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
    assert!(
        r.causes().iter().any(|(_, f)| f == field),
        "no cause for {field}: {}",
        r.body
    );
    assert!(r.message().contains(message), "{}", r.message());
}

#[tokio::test]
async fn protected_groups_need_the_approval_annotation() {
    case("crd-approval", |env| async move {
        let g = format!("approval-{}.contract.k8s.io", run_id());
        let mut c = crd(&g, json!({"type": "object"}));
        let r = post(&env, &c).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            format!("CustomResourceDefinition.apiextensions.k8s.io \"things.{g}\" is invalid: metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111")
        );
        assert_eq!(
            r.causes(),
            [("FieldValueRequired".to_owned(), "metadata.annotations[api-approved.kubernetes.io]".to_owned())]
        );
        c["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "yes"});
        let r = post(&env, &c).await;
        assert_eq!(
            r.causes(),
            [("FieldValueInvalid".to_owned(), "metadata.annotations[api-approved.kubernetes.io]".to_owned())]
        );
        c["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "unapproved, contract suite"});
        let r = post(&env, &c).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn list_map_keys_must_be_required_item_properties() {
    case("crd-list-map", |env| async move {
        let items = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let spec = json!({"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nme"], "items": items},
        }});
        let r = post(&env, &crd(&group(&env, "listmap"), spec)).await;
        assert_invalid(
            &r,
            &format!("{P}[ports].x-kubernetes-list-map-keys"),
            &format!("{P}[ports].x-kubernetes-list-map-keys: Invalid value: [\"nme\"]: entries must all be names of item properties"),
        );
        let spec = json!({"type": "object", "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": items},
        }});
        let r = post(&env, &crd(&group(&env, "listmap2"), spec)).await;
        assert_invalid(
            &r,
            &format!("{P}[ports].items.properties[name].default"),
            "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
        );
    })
    .await;
}

#[tokio::test]
async fn defaults_must_satisfy_their_own_schema() {
    case("crd-defaults", |env| async move {
        let spec = json!({"type": "object", "properties": {
            "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "urgent"},
            "replicas": {"type": "integer", "minimum": 10, "default": 3},
            "config": {"type": "object", "properties": {"name": {"type": "string"}}, "default": {"nmae": "x"}},
        }});
        let r = post(&env, &crd(&group(&env, "defaults"), spec)).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.causes(),
            [
                ("FieldValueInvalid".to_owned(), format!("{P}[config].default")),
                ("FieldValueInvalid".to_owned(), format!("{P}[replicas].default")),
                ("FieldValueNotSupported".to_owned(), format!("{P}[priority].default")),
            ]
        );
        for part in [
            format!("{P}[priority].default: Unsupported value: \"urgent\": supported values: \"low\", \"normal\", \"high\""),
            format!("{P}[replicas].default: Invalid value: 3:  in body should be greater than or equal to 10"),
            format!("{P}[config].default: Invalid value: {{\"nmae\":\"x\"}}: must not have unknown fields"),
        ] {
            assert!(r.message().contains(&part), "{part} not in {}", r.message());
        }
    })
    .await;
}

#[tokio::test]
async fn schemas_must_be_structural() {
    case("crd-structural", |env| async move {
        let spec = json!({"type": "object", "properties": {
            "anything": {},
            "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}},
            "list": {"type": "array"},
        }});
        let r = post(&env, &crd(&group(&env, "structural"), spec)).await;
        assert_eq!(r.status(), (422, "Invalid"));
        let mut expected = vec![
            (
                "FieldValueForbidden".to_owned(),
                format!("{P}[tags].uniqueItems"),
            ),
            (
                "FieldValueRequired".to_owned(),
                format!("{P}[anything].type"),
            ),
            ("FieldValueRequired".to_owned(), format!("{P}[list].items")),
        ];
        expected.sort();
        assert_eq!(r.causes(), expected);
        assert!(r.message().contains(&format!(
            "{P}[anything].type: Required value: must not be empty for specified object fields"
        )));
    })
    .await;
}

#[tokio::test]
async fn names_versions_columns_selectable_fields_and_scale_are_checked() {
    case("crd-names", |env| async move {
        let g = group(&env, "names");
        let mut c = crd(&g, json!({"type": "object", "properties": {"ratio": {"type": "number"}}}));
        c["metadata"]["name"] = json!(format!("widgets.{g}"));
        c["spec"]["names"]["listKind"] = json!("Thing");
        c["spec"]["names"]["shortNames"] = json!(["TH"]);
        let v = &mut c["spec"]["versions"][0];
        v["additionalPrinterColumns"] = json!([{"name": "Ratio", "type": "float", "jsonPath": "spec.ratio"}]);
        v["selectableFields"] = json!([{"jsonPath": ".spec.ratio"}]);
        v["subresources"] = json!({"status": {}, "scale": {"specReplicasPath": ".replicas", "statusReplicasPath": ".status.replicas"}});
        let r = post(&env, &c).await;
        assert_eq!(r.status(), (422, "Invalid"));
        let mut expected: Vec<(String, String)> = [
            ("FieldValueInvalid", "metadata.name"),
            ("FieldValueInvalid", "spec.names.listKind"),
            ("FieldValueInvalid", "spec.names.shortNames[0]"),
            ("FieldValueInvalid", "spec.additionalPrinterColumns[0].type"),
            ("FieldValueInvalid", "spec.additionalPrinterColumns[0].JSONPath"),
            ("FieldValueInvalid", "spec.selectableFields[0].jsonPath"),
            ("FieldValueInvalid", "spec.subresources.scale.specReplicasPath"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
        expected.sort();
        assert_eq!(r.causes(), expected);
        for part in [
            format!("metadata.name: Invalid value: \"widgets.{g}\": must be spec.names.plural+\".\"+spec.group"),
            "spec.names.listKind: Invalid value: \"Thing\": kind and listKind may not be the same".to_owned(),
            "spec.additionalPrinterColumns[0].type: Invalid value: \"float\": must be one of boolean,date,integer,number,string".to_owned(),
            "spec.selectableFields[0].jsonPath: Invalid value: \".spec.ratio\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.".to_owned(),
            "spec.subresources.scale.specReplicasPath: Invalid value: \".replicas\": should be a json path under .spec".to_owned(),
        ] {
            assert!(r.message().contains(&part), "{part} not in {}", r.message());
        }

        let mut two = crd(&group(&env, "versions"), json!({"type": "object"}));
        let second = json!({"name": "V2", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}});
        two["spec"]["versions"].as_array_mut().unwrap().push(second);
        let r = post(&env, &two).await;
        assert_eq!(r.status(), (422, "Invalid"));
        let fields: Vec<String> = r.causes().into_iter().map(|(_, f)| f).collect();
        for f in ["spec.versions[1].name", "spec.versions", "status.storedVersions"] {
            assert!(fields.iter().any(|x| x == f), "{f}: {}", r.body);
        }
    })
    .await;
}

#[tokio::test]
async fn an_accepted_crd_is_established_and_unknown_formats_warn() {
    case("crd-ok", |env| async move {
        let g = group(&env, "ok");
        let c = crd(
            &g,
            json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint32"}}}),
        );
        let r = post(&env, &c).await;
        assert_eq!(r.code, 201, "{}", r.body);
        assert_eq!(r.warnings, ["unrecognized format \"uint32\""]);
        assert_eq!(r.body["spec"]["names"]["singular"], "thing");
        assert_eq!(r.body["spec"]["names"]["listKind"], "ThingList");
        assert_eq!(r.body["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(r.body["status"]["storedVersions"], json!(["v1"]));
    })
    .await;
}

#[tokio::test]
async fn custom_resources_are_validated_in_the_real_servers_words() {
    case("cr-values", |env| async move {
        let g = group(&env, "values");
        let spec = json!({"type": "object", "properties": {
            "s": {"type": "string", "maxLength": 3, "minLength": 2},
            "l": {"type": "array", "maxItems": 2, "minItems": 1, "items": {"type": "string"}},
            "m": {"type": "object", "maxProperties": 1, "minProperties": 1, "additionalProperties": {"type": "string"}},
            "e": {"type": "integer", "enum": [1, 2]},
            "f": {"type": "string", "format": "date-time"},
            "st": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "mp": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}},
        }});
        let r = post(&env, &crd(&g, spec)).await;
        assert_eq!(r.code, 201, "{}", r.body);
        crate::env::eventually("the CRD serves", || async {
            let r = env.raw("GET", &env.path(&format!("{g}/v1"), "things"), "", "").await;
            (r.code == 200).then_some(())
        })
        .await;
        let things = env.path(&format!("{g}/v1"), "things");
        let thing = |spec: Value| {
            json!({"apiVersion": format!("{g}/v1"), "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}).to_string()
        };
        let r = env
            .raw("POST", &things, "application/json", &thing(json!({
                "s": "abcd", "l": ["a", "b", "c"], "m": {"a": "1", "b": "2"}, "e": 3, "f": "nope",
                "st": ["a", "a"], "mp": [{"name": "x"}, {"name": "x", "v": 1}]
            })))
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        for part in [
            "spec.s: Too long: may not be more than 3 bytes",
            "spec.l: Too many: 3: must have at most 2 items",
            "spec.m: Too many: 2: must have at most 1 item",
            "spec.e: Unsupported value: 3: supported values: \"1\", \"2\"",
            "spec.f: Invalid value: \"nope\": spec.f in body must be of type date-time: \"nope\"",
            "spec.st[1]: Duplicate value: \"a\"",
            "spec.mp[1]: Duplicate value: {\"name\":\"x\"}",
        ] {
            assert!(r.message().contains(part), "{part} not in {}", r.message());
        }
        let r = env
            .raw("POST", &things, "application/json", &thing(json!({"s": "a", "l": [], "m": {}})))
            .await;
        for part in [
            "spec.s: Invalid value: \"a\": spec.s in body should be at least 2 chars long",
            "spec.l: Invalid value: 0: spec.l in body should have at least 1 items",
            "spec.m: Invalid value: 0: spec.m in body should have at least 1 properties",
        ] {
            assert!(r.message().contains(part), "{part} not in {}", r.message());
        }
    })
    .await;
}
