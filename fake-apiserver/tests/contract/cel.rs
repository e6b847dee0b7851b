//! CEL rules (`x-kubernetes-validations`) on custom resources: what they refuse, in which
//! words and at which field, transition rules, rules that schema errors keep from running,
//! and ratcheting. The Gadget CRD (`cel-gadget-crd.json`) has rules at the root, on `spec`
//! (with `messageExpression`, `fieldPath` and `reason`), on a scalar, on map values, on a
//! list, on list-map items, a transition rule and an `optionalOldSelf` rule.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::core::ApiResource;
use serde_json::{Value, json};

use crate::env::{Env, RUN_LABEL, Raw, case, eventually, run_id};

const GROUP_VERSION: &str = "cel.contract.example.com/v1";

/// Installs (or updates) the Gadget CRD, shared by every case and run, and waits until it
/// serves.
async fn install_gadgets(env: &Env) {
    let crd: CustomResourceDefinition =
        serde_json::from_str(include_str!("cel-gadget-crd.json")).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    crds.patch(
        "gadgets.cel.contract.example.com",
        &PatchParams::apply("contract-suite").force(),
        &Patch::Apply(crd),
    )
    .await
    .expect("the Gadget CRD is accepted");
    let path = env.path(GROUP_VERSION, "gadgets");
    eventually("gadgets are served", || async {
        (env.raw("GET", &path, "", "").await.code == 200).then_some(())
    })
    .await;
}

fn gadget(name: &str, spec: Value) -> String {
    json!({"apiVersion": GROUP_VERSION, "kind": "Gadget",
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}}, "spec": spec})
    .to_string()
}

/// `field: message` of every cause, sorted (the real server walks properties in map order).
fn causes(r: &Raw) -> Vec<String> {
    let mut out: Vec<String> = r
        .body
        .pointer("/details/causes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            format!("{}: {}", s("field"), s("message"))
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn failing_rules_are_refused_in_the_real_servers_words() {
    case("cel-refuse", |env| async move {
        install_gadgets(&env).await;
        let path = env.path(GROUP_VERSION, "gadgets");
        let cases = [
            (
                "minmax",
                json!({"minReplicas": 5, "maxReplicas": 2}),
                "spec: Invalid value: minReplicas must not exceed maxReplicas",
            ),
            (
                "message-expression",
                json!({"mode": "off", "maxReplicas": 2}),
                "spec: Invalid value: mode off needs maxReplicas 0",
            ),
            (
                "field-path",
                json!({"tier": "gold"}),
                "spec.tier: Forbidden: tier must start with t",
            ),
            (
                "no-such-key",
                json!({"extra": {"note": "x"}}),
                "spec: Invalid value: \"object\": no such key: count evaluating rule: !has(self.extra) || self.extra.count > 0",
            ),
            (
                "map-values",
                json!({"labels": {"a": "-x", "b": "ok"}}),
                "spec.labels[a]: Invalid value: \"-x\": label values must not start with a dash",
            ),
            (
                "list",
                json!({"tags": ["ok", "Bad"]}),
                "spec.tags: Invalid value: tags are lower-case letters",
            ),
        ];
        for (name, spec, want) in cases {
            let r = env.raw("POST", &path, "application/json", &gadget(name, spec)).await;
            assert_eq!(r.status(), (422, "Invalid"), "{name}: {}", r.body);
            assert_eq!(
                r.message(),
                format!("Gadget.cel.contract.example.com \"{name}\" is invalid: {want}"),
                "{name}"
            );
        }
        // List items, each at its index; several failures are all reported.
        let spec = json!({"ports": [{"name": "a", "port": 0}, {"name": "b", "port": 99999}],
            "minReplicas": 5, "maxReplicas": 2, "tier": "x"});
        let r = env.raw("POST", &path, "application/json", &gadget("many", spec)).await;
        assert_eq!(
            causes(&r),
            [
                "spec.ports[0]: Invalid value: port out of range",
                "spec.ports[1]: Invalid value: port out of range",
                "spec.tier: Forbidden: tier must start with t",
                "spec: Invalid value: minReplicas must not exceed maxReplicas",
            ]
        );
        // A rule at the root sees metadata.name; its errors have no field.
        let long = format!("g{}", "a".repeat(45));
        let r = env.raw("POST", &path, "application/json", &gadget(&long, json!({}))).await;
        assert_eq!(
            r.message(),
            format!("Gadget.cel.contract.example.com \"{long}\" is invalid: <nil>: Invalid value: name too long")
        );
        let r = env.raw("POST", &path, "application/json", &gadget("fine", json!({"tags": ["ok"]}))).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn schema_errors_that_block_keep_the_rules_from_running() {
    case("cel-blocked", |env| async move {
        install_gadgets(&env).await;
        let path = env.path(GROUP_VERSION, "gadgets");
        // Too long blocks: the failing min/max rule is not run.
        let spec = json!({"tags": ["a".repeat(33)], "minReplicas": 5, "maxReplicas": 2});
        let r = env.raw("POST", &path, "application/json", &gadget("blocked", spec)).await;
        assert_eq!(
            causes(&r),
            [
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                "spec.tags[0]: Too long: may not be more than 20 bytes",
            ]
        );
        // Out of bounds does not block: both are reported.
        let spec = json!({"minReplicas": 5000, "maxReplicas": 2});
        let r = env.raw("POST", &path, "application/json", &gadget("bounds", spec)).await;
        assert_eq!(
            causes(&r),
            [
                "spec.minReplicas: Invalid value: 5000: spec.minReplicas in body should be less than or equal to 1000",
                "spec: Invalid value: minReplicas must not exceed maxReplicas",
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn transition_rules_compare_with_the_correlated_old_value() {
    case("cel-transition", |env| async move {
        install_gadgets(&env).await;
        let path = env.path(GROUP_VERSION, "gadgets");
        let spec = json!({"group": "a", "size": 5, "ports": [{"name": "http", "port": 80}]});
        let r = env.raw("POST", &path, "application/json", &gadget("t", spec)).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let patch = json!({"spec": {"group": "b", "size": 4,
            "ports": [{"name": "web", "port": 81}, {"name": "http", "port": 8080}]}});
        let r = env
            .raw("PATCH", &format!("{path}/t"), "application/merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        // `web` is new (no old item with its key); `http` changed its port.
        assert_eq!(
            causes(&r),
            [
                "spec.group: Invalid value: \"b\": group is immutable",
                "spec.ports[1]: Invalid value: a port's number is immutable",
                "spec.size: Invalid value: 4: size may only grow",
            ]
        );
        let patch = json!({"spec": {"size": 6, "ports": [{"name": "web", "port": 81}, {"name": "http", "port": 80}]}});
        let r = env
            .raw("PATCH", &format!("{path}/t"), "application/merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn unchanged_invalid_values_ratchet_into_warnings() {
    case("cel-ratchet", |env| async move {
        let group = format!("ratchet-{}.contract.example.com", run_id());
        let crd_name = format!("ratchets.{group}");
        let crd = |rules: bool| {
            let mut tags = json!({"type": "array", "maxItems": 5,
                "items": {"type": "string", "maxLength": 10}});
            if rules {
                tags["x-kubernetes-validations"] =
                    json!([{"rule": "self.all(t, t.matches('^[a-z]+$'))", "message": "tags are lower-case letters"}]);
            }
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": crd_name},
                "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "ratchets", "kind": "Ratchet"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {
                                "tags": tags,
                                "note": {"type": "string", "maxLength": if rules { 5 } else { 20 }}}}}}}}]}})
        };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let r = env.raw("POST", crds, "application/json", &crd(false).to_string()).await;
        assert_eq!(r.code, 201, "{}", r.body);
        env.delete_later(ApiResource::erase::<CustomResourceDefinition>(&()), &crd_name);
        let path = env.path(&format!("{group}/v1"), "ratchets");
        let object = |name: &str, tags: Value| {
            json!({"apiVersion": format!("{group}/v1"), "kind": "Ratchet",
                "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}},
                "spec": {"tags": tags, "note": "longer note"}})
            .to_string()
        };
        eventually("ratchets are served", || async {
            let r = env.raw("POST", &path, "application/json", &object("old", json!(["Bad"]))).await;
            (r.code == 201).then_some(())
        })
        .await;
        // The rule, and a shorter maxLength for `note`, arrive after the object.
        let r = env.raw("PUT", &format!("{crds}/{crd_name}"), "application/json", &{
            let current = env.raw("GET", &format!("{crds}/{crd_name}"), "", "").await.body;
            let mut next = crd(true);
            next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            next.to_string()
        }).await;
        assert_eq!(r.code, 200, "{}", r.body);
        eventually("the rule is in force", || async {
            let r = env
                .raw("POST", &format!("{path}?dryRun=All"), "application/json", &object("new", json!(["Bad"])))
                .await;
            (r.code == 422).then_some(())
        })
        .await;
        // Only metadata changes: the unchanged tags warn, the unchanged note passes silently.
        let item = format!("{path}/old");
        let patch = json!({"metadata": {"annotations": {"touched": "yes"}}}).to_string();
        let r = env.raw("PATCH", &item, "application/merge-patch+json", &patch).await;
        assert_eq!(r.code, 200, "{}", r.body);
        assert_eq!(r.warnings, ["spec.tags: Invalid value: tags are lower-case letters"]);
        // Changed tags are checked; the unchanged note still passes.
        let patch = json!({"spec": {"tags": ["Bad", "Worse"]}}).to_string();
        let r = env.raw("PATCH", &item, "application/merge-patch+json", &patch).await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(causes(&r), ["spec.tags: Invalid value: tags are lower-case letters"]);
        // A changed note is checked too, and its error keeps the rules from running.
        let patch = json!({"spec": {"note": "still long"}}).to_string();
        let r = env.raw("PATCH", &item, "application/merge-patch+json", &patch).await;
        assert_eq!(
            causes(&r),
            [
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                "spec.note: Too long: may not be more than 5 bytes",
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn rules_too_expensive_for_their_bounds_are_refused_at_crd_creation() {
    case("cel-cost", |env| async move {
        let group = format!("cost-{}.contract.example.com", run_id());
        let crd = |max_items: Option<u64>| {
            let mut tags = json!({"type": "array", "items": {"type": "string", "maxLength": 20},
                "x-kubernetes-validations": [{"rule": "self.all(t, t.matches('^[a-z]+$'))"}]});
            if let Some(n) = max_items {
                tags["maxItems"] = json!(n);
            }
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("costs.{group}")},
                "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "costs", "kind": "Cost"},
                    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema":
                        {"type": "object", "properties": {"spec": {"type": "object", "properties": {"tags": tags}}}}}}]}})
            .to_string()
        };
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All";
        // An unbounded list: the rule may run a million times.
        let r = env.raw("POST", crds, "application/json", &crd(None)).await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                "CustomResourceDefinition.apiextensions.k8s.io \"costs.{group}\" is invalid: \
                 spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: \
                 Forbidden: estimated rule cost exceeds budget by factor of 2.3x (try simplifying the rule, or adding \
                 maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
            )
        );
        // maxItems bounds it.
        let r = env.raw("POST", crds, "application/json", &crd(Some(100))).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}
