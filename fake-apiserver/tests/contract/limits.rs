//! What the server says besides yes and no: the request-body limit, and the `Warning` of
//! every request to a deprecated CRD version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::ApiResource;
use serde_json::json;

use crate::env::{RUN_LABEL, case, eventually, run_id};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

#[tokio::test]
async fn a_body_over_three_mebibytes_is_too_large() {
    case("body-limit", |env| async move {
        let path = env.path("v1", "configmaps");
        let object = |size: usize| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "big", "labels": {RUN_LABEL: run_id()}},
                "data": {"k": "x".repeat(size)}})
            .to_string()
        };
        // 3 MiB and one byte, whatever the object says.
        let mut body = object(3 * 1024 * 1024 - 200);
        body.push_str(&" ".repeat(3 * 1024 * 1024 + 1 - body.len()));
        let r = env.raw("POST", &path, "application/json", &body).await;
        assert_eq!(r.status(), (413, "RequestEntityTooLarge"), "{}", r.body);
        assert_eq!(r.message(), "Request entity too large: limit is 3145728");
        // Exactly 3 MiB is read, and then judged by the ConfigMap's own 1 MiB limit.
        body.pop();
        let r = env.raw("POST", &path, "application/json", &body).await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes"
        );
    })
    .await;
}

#[tokio::test]
async fn deprecated_versions_warn_on_every_request() {
    case("deprecated", |env| async move {
        let group = format!("deprecated-{}.contract.example.com", run_id());
        let version = |name: &str, storage: bool, deprecated: bool| {
            json!({"name": name, "served": true, "storage": storage, "deprecated": deprecated,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}})
        };
        let mut own = version("v1alpha1", false, true);
        own["deprecationWarning"] = json!("v1alpha1 Gadgets go away in 2027");
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("gadgets.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": "gadgets", "kind": "Gadget"},
                "versions": [version("v1beta1", false, true), version("v1", true, false),
                    version("v2", false, true), own]}
        });
        let r = env
            .raw("POST", CRDS, "application/json", &crd.to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        env.delete_later(
            ApiResource::erase::<CustomResourceDefinition>(&()),
            &format!("gadgets.{group}"),
        );
        let list = |v: &str| env.path(&format!("{group}/{v}"), "gadgets");
        let first = eventually("the deprecated version is served", || async {
            let r = env.raw("GET", &list("v1beta1"), "", "").await;
            (r.code == 200).then_some(r)
        })
        .await;
        assert_eq!(
            first.warnings,
            [format!("{group}/v1beta1 Gadget is deprecated; use {group}/v1 Gadget")]
        );
        // Preferred over every other version: nothing to move to.
        let r = env.raw("GET", &list("v2"), "", "").await;
        assert_eq!(r.warnings, [format!("{group}/v2 Gadget is deprecated")]);
        let r = env.raw("GET", &list("v1alpha1"), "", "").await;
        assert_eq!(r.warnings, ["v1alpha1 Gadgets go away in 2027"]);
        // Writes and errors warn too; the served version does not.
        let object = json!({"apiVersion": format!("{group}/v1beta1"), "kind": "Gadget",
            "metadata": {"name": "g", "labels": {RUN_LABEL: run_id()}}, "spec": {"bogus": 1}});
        let r = env
            .raw("POST", &list("v1beta1"), "application/json", &object.to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        assert_eq!(
            r.warnings,
            [format!("{group}/v1beta1 Gadget is deprecated; use {group}/v1 Gadget")]
        );
        let r = env
            .raw("POST", &list("v1beta1"), "application/json", &object.to_string())
            .await;
        assert_eq!(r.status(), (409, "AlreadyExists"));
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        let r = env.raw("GET", &list("v1"), "", "").await;
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    })
    .await;
}
