//! The order kube-apiserver reads a write in: the options first (an apply needs a field
//! manager), then the body into its Go type (times, quantities, int-or-strings parsed by
//! their own decoders), then the resource version the storage parses, and only then
//! validation; a patch whose result does not decode is refused as the patch's fault.

use serde_json::{Value, json};

use crate::env::{RUN_LABEL, case, run_id};

const TIME_ERROR: &str = "parsing time \"garbage\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"garbage\" as \"2006\"";
const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A valid Deployment of this run named `name`.
fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

fn cannot_handle(why: &str) -> String {
    format!("Deployment in version \"v1\" cannot be handled as a Deployment: {why}")
}

#[tokio::test]
async fn bodies_are_decoded_into_their_type_before_validation() {
    case("decode-order", |env| async move {
        let deployments = env.path("apps/v1", "deployments");
        // Invalid too (no selector), but the time does not decode: that comes first.
        let mut bad = deployment("ts");
        bad["metadata"]["creationTimestamp"] = json!("garbage");
        bad["spec"]["selector"] = Value::Null;
        bad["spec"]["replicas"] = json!("x");
        let r = env.raw("POST", &deployments, "application/json", &bad.to_string()).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(r.message(), cannot_handle(TIME_ERROR));

        let mut bad = deployment("qty");
        bad["spec"]["template"]["spec"]["containers"][0]["resources"] =
            json!({"limits": {"cpu": "banana"}});
        let r = env.raw("POST", &deployments, "application/json", &bad.to_string()).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(r.message(), cannot_handle(QUANTITY_ERROR));

        let mut bad = deployment("surge");
        bad["spec"]["strategy"] = json!({"rollingUpdate": {"maxSurge": 1.5}});
        let r = env.raw("POST", &deployments, "application/json", &bad.to_string()).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            cannot_handle(
                "json: cannot unmarshal number 1.5 into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"
            )
        );

        let mut bad = deployment("day");
        bad["metadata"]["creationTimestamp"] = json!("2020-02-30T00:00:00Z");
        let r = env.raw("POST", &deployments, "application/json", &bad.to_string()).await;
        assert_eq!(
            r.message(),
            cannot_handle("parsing time \"2020-02-30T00:00:00Z\": day out of range")
        );

        // The same for a PUT.
        let r = env
            .raw("POST", &deployments, "application/json", &deployment("put").to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        let one = format!("{deployments}/put");
        let mut bad = r.body.clone();
        bad["metadata"]["creationTimestamp"] = json!("garbage");
        let r = env.raw("PUT", &one, "application/json", &bad.to_string()).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(r.message(), cannot_handle(TIME_ERROR));
        let mut bad = bad.clone();
        bad["metadata"]["creationTimestamp"] = Value::Null;
        bad["spec"]["template"]["spec"]["containers"][0]["resources"] =
            json!({"requests": {"memory": "1Gx"}});
        let r = env.raw("PUT", &one, "application/json", &bad.to_string()).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(r.message(), cannot_handle(QUANTITY_ERROR));
    })
    .await;
}

#[tokio::test]
async fn a_resource_version_that_is_not_a_number_fails_the_update() {
    case("rv-syntax", |env| async move {
        let deployments = env.path("apps/v1", "deployments");
        let r = env
            .raw(
                "POST",
                &deployments,
                "application/json",
                &deployment("rv").to_string(),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        let mut new = r.body.clone();
        new["metadata"]["resourceVersion"] = json!("abc");
        let one = format!("{deployments}/rv");
        let r = env
            .raw("PUT", &one, "application/json", &new.to_string())
            .await;
        assert_eq!(r.status(), (500, ""), "{}", r.body);
        assert_eq!(
            r.message(),
            "strconv.ParseUint: parsing \"abc\": invalid syntax"
        );
        assert_eq!(r.body.get("details"), None);
    })
    .await;
}

#[tokio::test]
async fn an_apply_with_an_empty_field_manager_is_refused_first() {
    case("apply-manager", |env| async move {
        let deployments = env.path("apps/v1", "deployments");
        let r = env
            .raw("POST", &deployments, "application/json", &deployment("am").to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        // The label is not a string: the apply would fail, but the options come first.
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "am", "labels": {"x": 1}}});
        for query in ["?fieldManager=", ""] {
            let path = format!("{deployments}/am{query}");
            let r = env
                .raw("PATCH", &path, "application/apply-patch+yaml", &config.to_string())
                .await;
            assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
            assert_eq!(
                r.message(),
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
            );
            assert_eq!(r.body["details"]["group"], "meta.k8s.io");
            assert_eq!(r.body["details"]["kind"], "PatchOptions");
            assert_eq!(
                r.causes(),
                [("FieldValueRequired".to_owned(), "fieldManager".to_owned())]
            );
        }
    })
    .await;
}

#[tokio::test]
async fn a_patch_whose_result_does_not_decode_is_invalid() {
    case("patch-decode", |env| async move {
        let deployments = env.path("apps/v1", "deployments");
        let r = env
            .raw("POST", &deployments, "application/json", &deployment("pd").to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        let one = format!("{deployments}/pd");
        let patch = json!({"metadata": {"creationTimestamp": "garbage"}}).to_string();
        // Strategic merge: the patch, as Go prints a map.
        let r = env
            .raw("PATCH", &one, "application/strategic-merge-patch+json", &patch)
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                " \"\" is invalid: patch: Invalid value: \"map[metadata:map[creationTimestamp:garbage]]\": {TIME_ERROR}"
            )
        );
        assert_eq!(r.causes(), [("FieldValueInvalid".to_owned(), "patch".to_owned())]);
        let quantity = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "resources": {"limits": {"cpu": "banana"}}}]}}}});
        let r = env
            .raw(
                "PATCH",
                &one,
                "application/strategic-merge-patch+json",
                &quantity.to_string(),
            )
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                " \"\" is invalid: patch: Invalid value: \"map[spec:map[template:map[spec:map[containers:[map[name:c resources:map[limits:map[cpu:banana]]]]]]]]\": {QUANTITY_ERROR}"
            )
        );
        // Merge: the patched object, as JSON.
        let r = env
            .raw("PATCH", &one, "application/merge-patch+json", &patch)
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        let message = r.message();
        assert!(
            message.starts_with(
                " \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":\\\"apps/v1\\\",\\\"kind\\\":\\\"Deployment\\\",\\\"metadata\\\":{"
            ),
            "{message}"
        );
        assert!(message.contains("\\\"creationTimestamp\\\":\\\"garbage\\\""), "{message}");
        assert!(message.ends_with(&format!("}}\": {TIME_ERROR}")), "{message}");
        // Nothing was written.
        let r = env.raw("GET", &one, "", "").await;
        assert_ne!(r.body["metadata"]["creationTimestamp"], "garbage");
    })
    .await;
}
