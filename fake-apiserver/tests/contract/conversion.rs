//! A CRD served in two versions whose schemas differ, converted by a conversion webhook
//! (`kube-codegen-runtime`'s server, on loopback with a development certificate): reads,
//! lists, writes, patches and watches in the version that is not stored, a conversion that
//! fails, and the webhook down. The group is unique to the run, so runs on a shared cluster
//! never meet.

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, WatchEvent, WatchParams};
use kube::core::GroupVersionKind;
use kube_codegen_runtime::webhook::WebhookServer;
use kube_codegen_runtime::webhook::conversion::Conversion;
use serde_json::{Value, json};

use crate::env::{Env, RUN_LABEL, case, eventually, run_id};
use crate::webhooks::Served;

/// v1alpha1 (the hub) has `spec.deploymentName` and `spec.replicas`; v1beta1 nests them
/// in `spec.deployment`. A name with a slash cannot be converted to v1beta1.
fn conversion(group: &str) -> Conversion {
    let flat_to_nested = |mut o: Value| {
        let spec = o["spec"].take();
        let name = spec["deploymentName"].as_str().unwrap_or("");
        if name.contains('/') {
            return Err(format!("deploymentName {name:?} is not a name"));
        }
        o["spec"] = json!({"deployment": {"name": name, "replicas": spec["replicas"]}});
        Ok(o)
    };
    let nested_to_flat = |mut o: Value| {
        let d = o["spec"]["deployment"].take();
        o["spec"] = json!({"deploymentName": d["name"], "replicas": d["replicas"]});
        Ok(o)
    };
    Conversion::untyped("Gizmo", &format!("{group}/v1alpha1")).version(
        &format!("{group}/v1beta1"),
        nested_to_flat,
        flat_to_nested,
    )
}

fn crd(group: &str, port: u16, ca: &str) -> Value {
    let object =
        |spec: Value| json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}});
    let flat = object(json!({"type": "object", "properties": {
        "deploymentName": {"type": "string"}, "replicas": {"type": "integer"}}}));
    let nested = object(
        json!({"type": "object", "properties": {"deployment": {"type": "object",
        "properties": {"name": {"type": "string"}, "replicas": {"type": "integer"}}}}}),
    );
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gizmos.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{port}/convert"),
                    "caBundle": apiserver_rules::base64::base64_encode(ca.as_bytes()),
                }}},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": true, "schema": flat},
                {"name": "v1beta1", "served": true, "storage": false, "schema": nested},
            ]}
    })
}

fn api(env: &Env, group: &str, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, version, "Gizmo");
    Api::namespaced_with(
        env.client.clone(),
        &env.ns,
        &ApiResource::from_gvk_with_plural(&gvk, "gizmos"),
    )
}

fn gizmo(group: &str, version: &str, name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{group}/{version}"), "kind": "Gizmo",
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}},
        "spec": spec,
    }))
    .unwrap()
}

#[tokio::test]
async fn conversion_webhook_serves_every_version_and_fails_as_the_real_server() {
    case("conversion", |env| async move {
        let group = format!("conv-{}.contract.example.com", run_id());
        let served = Served::start(
            &format!("contract-conversion-{}", env.ns),
            "127.0.0.1",
            WebhookServer::new().conversion("/convert", conversion(&group)),
        )
        .await;
        let port = served.addr.port();
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let r = env
            .raw("POST", crds, "application/json", &crd(&group, port, &served.ca).to_string())
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
        let crd_gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        env.delete_later(
            ApiResource::from_gvk_with_plural(&crd_gvk, "customresourcedefinitions"),
            &format!("gizmos.{group}"),
        );
        let (alpha, beta) = (api(&env, &group, "v1alpha1"), api(&env, &group, "v1beta1"));
        let pp = kube::api::PostParams::default();

        // Written as the hub, read as v1beta1.
        let a = gizmo(&group, "v1alpha1", "a", json!({"deploymentName": "a", "replicas": 2}));
        eventually("the CRD is served", || {
            let (alpha, a) = (alpha.clone(), a.clone());
            async move { alpha.create(&kube::api::PostParams::default(), &a).await.ok() }
        })
        .await;
        let read = beta.get("a").await.unwrap();
        assert_eq!(read.types.as_ref().unwrap().api_version, format!("{group}/v1beta1"));
        assert_eq!(read.data["spec"], json!({"deployment": {"name": "a", "replicas": 2}}));
        assert_eq!(read.metadata.labels.as_ref().unwrap()[RUN_LABEL], run_id());

        // Written as v1beta1: answered in v1beta1, stored as the hub.
        let b = gizmo(&group, "v1beta1", "b", json!({"deployment": {"name": "b", "replicas": 3}}));
        let created = beta.create(&pp, &b).await.unwrap();
        assert_eq!(created.data["spec"], json!({"deployment": {"name": "b", "replicas": 3}}));
        let stored = alpha.get("b").await.unwrap();
        assert_eq!(stored.data["spec"], json!({"deploymentName": "b", "replicas": 3}));

        // A list in v1beta1 has both, converted.
        let listed = beta.list(&env.ours()).await.unwrap();
        let mut specs: Vec<Value> = listed.items.iter().map(|o| o.data["spec"].clone()).collect();
        specs.sort_by_key(|s| s["deployment"]["name"].as_str().unwrap_or("").to_owned());
        assert_eq!(
            specs,
            vec![
                json!({"deployment": {"name": "a", "replicas": 2}}),
                json!({"deployment": {"name": "b", "replicas": 3}}),
            ]
        );

        // A watch in v1beta1 sees a merge patch sent in v1beta1, converted.
        let rv = listed.metadata.resource_version.clone().unwrap();
        let wp = WatchParams::default().labels(&format!("{RUN_LABEL}={}", run_id())).timeout(20);
        let mut events = beta.watch(&wp, &rv).await.unwrap().boxed();
        let patch = json!({"spec": {"deployment": {"replicas": 5}}});
        let patched = beta
            .patch("a", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch))
            .await
            .unwrap();
        assert_eq!(patched.data["spec"], json!({"deployment": {"name": "a", "replicas": 5}}));
        assert_eq!(alpha.get("a").await.unwrap().data["spec"]["replicas"], 5);
        let seen = tokio::time::timeout(std::time::Duration::from_secs(20), async {
            while let Some(event) = events.next().await {
                if let Ok(WatchEvent::Modified(o)) = event
                    && o.metadata.name.as_deref() == Some("a")
                {
                    return Some(o);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .expect("a MODIFIED event for a");
        assert_eq!(seen.data["spec"], json!({"deployment": {"name": "a", "replicas": 5}}));

        // A conversion the webhook refuses: 500, in the real server's words.
        let c = gizmo(&group, "v1alpha1", "c", json!({"deploymentName": "no/such", "replicas": 1}));
        alpha.create(&pp, &c).await.unwrap();
        let path = format!("/apis/{group}/v1beta1/namespaces/{}/gizmos/c", env.ns);
        let r = env.raw("GET", &path, "", "").await;
        assert_eq!(r.code, 500, "{}", r.body);
        assert_eq!(r.body.get("reason"), None, "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                "conversion webhook for {group}/v1alpha1, Kind=Gizmo failed: converting Gizmo \"c\" to {group}/v1beta1: deploymentName \"no/such\" is not a name"
            )
        );
        // With an admission webhook configured for other resources only (ConfigMaps of this
        // namespace, never called here): it changes nothing for Gizmos. A v1beta1 delete of
        // the object the webhook cannot convert fails with the conversion's error and deletes
        // nothing; one in the hub's version works.
        crate::webhooks::register(
            &env,
            &crate::webhooks::configuration(&env, false, port, &served.ca),
        )
        .await;
        let r = env.raw("DELETE", &path, "", "").await;
        assert_eq!(r.code, 500, "{}", r.body);
        assert!(
            r.message().starts_with(&format!(
                "conversion webhook for {group}/v1alpha1, Kind=Gizmo failed: converting Gizmo \"c\" to {group}/v1beta1"
            )),
            "{}",
            r.body
        );
        assert!(alpha.get_opt("c").await.unwrap().is_some(), "c is kept");
        alpha.delete("c", &Default::default()).await.unwrap();

        // The webhook down: reads and writes in v1beta1 fail, the hub's still work.
        served.stop().await;
        let r = env
            .raw("GET", &format!("/apis/{group}/v1beta1/namespaces/{}/gizmos/a", env.ns), "", "")
            .await;
        assert_eq!(r.code, 500, "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                "conversion webhook for {group}/v1alpha1, Kind=Gizmo failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            )
        );
        let d = gizmo(&group, "v1beta1", "d", json!({"deployment": {"name": "d"}}));
        let err = beta.create(&pp, &d).await.unwrap_err();
        let kube::Error::Api(status) = err else { panic!("{err}") };
        assert_eq!(status.code, 500);
        assert_eq!(
            status.message,
            format!(
                "conversion webhook for {group}/v1beta1, Kind=Gizmo failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            )
        );
        let hub = alpha.list(&ListParams::default()).await.unwrap();
        assert_eq!(hub.items.len(), 2);
    })
    .await;
}
