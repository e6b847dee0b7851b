//! Patches: JSON, merge, strategic merge, the scale subresource and server-side apply.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::env::{RUN_LABEL, api_error, case, run_id};

#[tokio::test]
async fn json_and_strategic_merge_patches() {
    case("patches", |env| async move {
        let deployments: Api<Deployment> = env.api();
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "web", "labels": {RUN_LABEL: run_id()}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                    {"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "sidecar:1"}
                ]}}
            }
        }))
        .unwrap();
        deployments
            .create(&PostParams::default(), &d)
            .await
            .unwrap();
        let strategic = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}});
        let patched = deployments
            .patch("web", &PatchParams::default(), &Patch::Strategic(strategic))
            .await
            .unwrap();
        let images: Vec<String> = patched
            .spec
            .template
            .spec
            .unwrap()
            .containers
            .into_iter()
            .map(|c| c.image.unwrap())
            .collect();
        assert_eq!(images, ["app:2", "sidecar:1"], "containers merge by name");

        // A JSON patch, sent raw (kube's typed JSON patch needs a crate feature).
        let url = format!("{}/web", deployments.resource_url());
        let req = http::Request::patch(url)
            .header("content-type", "application/json-patch+json")
            .body(
                serde_json::to_vec(
                    &json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]),
                )
                .unwrap(),
            )
            .unwrap();
        let patched: Deployment = env.client.request(req).await.unwrap();
        assert_eq!(patched.spec.replicas, Some(4));

        let scale = deployments.get_scale("web").await.unwrap();
        assert_eq!(scale.spec.unwrap().replicas, Some(4));
        let rescaled = deployments
            .patch_scale(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": 6}})),
            )
            .await
            .unwrap();
        assert_eq!(rescaled.spec.unwrap().replicas, Some(6));
        assert_eq!(
            deployments.get("web").await.unwrap().spec.replicas,
            Some(6)
        );
    })
    .await;
}

#[tokio::test]
async fn server_side_apply_owns_fields_and_conflicts() {
    case("apply", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1", "b": "1"}});
        let created = cms
            .patch(
                "applied",
                &PatchParams::apply("alice"),
                &Patch::Apply(&config),
            )
            .await
            .unwrap();
        let managers: Vec<String> = created
            .metadata
            .managed_fields
            .unwrap()
            .into_iter()
            .map(|m| m.manager.unwrap())
            .collect();
        assert_eq!(
            managers,
            ["alice"],
            "apply creates a missing object and records its manager"
        );

        let bob = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "2"}});
        let (code, reason) = api_error(
            cms.patch("applied", &PatchParams::apply("bob"), &Patch::Apply(&bob))
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (409, "Conflict"));
        let forced = cms
            .patch(
                "applied",
                &PatchParams::apply("bob").force(),
                &Patch::Apply(&bob),
            )
            .await
            .unwrap();
        assert_eq!(
            forced.data.unwrap(),
            BTreeMap::from([("a".into(), "2".into()), ("b".into(), "1".into())])
        );

        // alice stops applying `b`: it goes away.
        let alice = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {}});
        let after = cms
            .patch(
                "applied",
                &PatchParams::apply("alice"),
                &Patch::Apply(&alice),
            )
            .await
            .unwrap();
        assert_eq!(
            after.data.unwrap_or_default(),
            BTreeMap::from([("a".into(), "2".into())])
        );
    })
    .await;
}

#[tokio::test]
async fn strategic_merge_follows_each_fields_patch_strategy() {
    case("strategic", |env| async move {
        let services = env.path("v1", "services");
        let svc = json!({"metadata": {"name": "s", "labels": {RUN_LABEL: run_id()}},
            "spec": {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}});
        assert_eq!(env.raw("POST", &services, "application/json", &svc.to_string()).await.code, 201);
        // Service ports merge by `port` (not containerPort, as container ports do).
        let patch = json!({"spec": {"ports": [{"port": 443, "name": "tls"}]}});
        let r = env
            .raw("PATCH", &format!("{services}/s"), "application/strategic-merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
        let names: Vec<&str> = r.body["spec"]["ports"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["http", "tls"]);

        let cms = env.path("v1", "configmaps");
        let cm = json!({"metadata": {"name": "f", "labels": {RUN_LABEL: run_id()}, "finalizers": ["example.com/a"]}});
        assert_eq!(env.raw("POST", &cms, "application/json", &cm.to_string()).await.code, 201);
        // Finalizers merge as a set of scalars, the patch's first; a directive removes them.
        let patch = json!({"metadata": {"finalizers": ["example.com/b"]}});
        let r = env
            .raw("PATCH", &format!("{cms}/f"), "application/strategic-merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.body["metadata"]["finalizers"], json!(["example.com/b", "example.com/a"]));
        let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/b"]}});
        let r = env
            .raw("PATCH", &format!("{cms}/f"), "application/strategic-merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
        assert_eq!(r.body["metadata"]["name"], "f");
        assert!(r.body["metadata"].get("finalizers").is_none(), "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn patches_whose_result_cannot_be_stored_are_refused() {
    case("patch-results", |env| async move {
        let path = env.path("v1", "configmaps");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "target", "labels": {RUN_LABEL: run_id()}}, "data": {"k": "v"}});
        let r = env.raw("POST", &path, "application/json", &cm.to_string()).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let item = format!("{path}/target");
        // A value of the wrong type: the patched object does not decode (422, no kind).
        let r = env
            .raw("PATCH", &item, "application/merge-patch+json", r#"{"data":{"k":1}}"#)
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert!(r.message().starts_with(" \"\" is invalid: patch: Invalid value: \"{"), "{}", r.message());
        assert!(
            r.message().ends_with("json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
            "{}",
            r.message()
        );
        assert_eq!(r.causes(), [("FieldValueInvalid".to_owned(), "patch".to_owned())]);
        // Strategic merge names the patch, as Go prints a map, and the converter's words.
        let r = env
            .raw("PATCH", &item, "application/strategic-merge-patch+json", r#"{"data":{"k":1}}"#)
            .await;
        assert_eq!(
            r.message(),
            " \"\" is invalid: patch: Invalid value: \"map[data:map[k:1]]\": cannot convert int64 to string"
        );
        // A JSON patch that takes the name away.
        let remove_name = r#"[{"op":"remove","path":"/metadata/name"}]"#;
        let r = env.raw("PATCH", &item, "application/json-patch+json", remove_name).await;
        assert_eq!(r.status(), (400, "BadRequest"));
        assert_eq!(
            r.message(),
            "the name of the object (target based on URL) was undeterminable: name must be provided"
        );
        // An operation that cannot be applied: the real server keeps its reason to itself.
        let missing = r#"[{"op":"remove","path":"/nothing"}]"#;
        let r = env.raw("PATCH", &item, "application/json-patch+json", missing).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.message(), "the server rejected our request due to an error in our request");
    })
    .await;
}
