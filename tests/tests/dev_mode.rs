//! Development mode (`kube_codegen_runtime::webhook::dev`) never harms a cluster: what it
//! changes is recorded on each object in the same write, a run that died (`kill -9`: its
//! `Installed` dropped without `uninstall`) is put back by the next start or by `restore`,
//! and the operator's manifests apply afterwards without a conflict.

use kube::api::{Api, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube_codegen_runtime::webhook::dev;
use serde_json::{Value, json};

const CRD: &str = "gizmos.dev.example.com";
const MANAGER: &str = "gizmo-operator";

/// The CRD as `config/crd` holds it: no conversion (so `None`, and no Service named).
fn crd() -> Value {
    let version = |name: &str, storage: bool| {
        json!({
            "name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {
            "group": "dev.example.com",
            "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
            "scope": "Namespaced",
            "versions": [version("v1", true), version("v2", false)],
        },
    })
}

/// A webhook configuration as `kube-codegen webhooks` writes it.
fn configuration(kind: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "gizmo-operator",
            "annotations": {"cert-manager.io/inject-ca-from": "gizmo-system/gizmo-serving"}},
        "webhooks": [{
            "name": "gizmo.dev.example.com",
            "clientConfig": {"service": {"namespace": "gizmo-system", "name": "gizmo-webhook",
                "path": "/validate-dev-example-com-v1-gizmo"}},
            "rules": [{"apiGroups": ["dev.example.com"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["gizmos"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
        }],
    })
}

fn api(client: &kube::Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, "v1", kind);
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

fn crds(client: &kube::Client) -> Api<DynamicObject> {
    api(
        client,
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    )
}

fn validating(client: &kube::Client) -> Api<DynamicObject> {
    api(
        client,
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
    )
}

fn mutating(client: &kube::Client) -> Api<DynamicObject> {
    api(
        client,
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    )
}

/// `kubectl apply --server-side` (no `--force-conflicts`) of `object`.
async fn kubectl_apply(api: &Api<DynamicObject>, object: &Value) -> Result<(), kube::Error> {
    let name = object["metadata"]["name"].as_str().unwrap();
    api.patch(name, &PatchParams::apply("kubectl"), &Patch::Apply(object))
        .await
        .map(drop)
}

/// What development mode may touch, as the cluster holds it now.
async fn state(client: &kube::Client) -> Value {
    let crd = serde_json::to_value(crds(client).get(CRD).await.unwrap()).unwrap();
    let validating =
        serde_json::to_value(validating(client).get("gizmo-operator").await.unwrap()).unwrap();
    let mutating = mutating(client).get_opt("gizmo-operator").await.unwrap();
    let mut crd_annotations = crd["metadata"]["annotations"].clone();
    // Written while development mode ran (see below): not development mode's to put back.
    if let Some(map) = crd_annotations.as_object_mut() {
        map.remove("note");
        if map.is_empty() {
            crd_annotations = Value::Null;
        }
    }
    json!({
        "conversion": crd["spec"]["conversion"],
        "crd annotations": crd_annotations,
        "webhooks": validating["webhooks"],
        "webhook annotations": validating["metadata"]["annotations"],
        "mutating exists": mutating.is_some(),
    })
}

/// Development mode as a generated operator starts it: put back what a dead run left, then
/// point the configurations and the CRD's conversion at the local server.
async fn start(client: &kube::Client) -> (dev::Installed, dev::InstalledConversion) {
    dev::restore(client, Some(MANAGER)).await.unwrap();
    let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    let base = "https://127.0.0.1:9443";
    let configurations = [
        configuration("MutatingWebhookConfiguration"),
        configuration("ValidatingWebhookConfiguration"),
    ];
    let webhooks = dev::install(client, &configurations, base, ca, MANAGER)
        .await
        .unwrap();
    let url = format!("{base}/convert-dev-example-com-gizmo");
    let conversion = dev::install_conversion(client, CRD, &url, ca, MANAGER)
        .await
        .unwrap();
    (webhooks, conversion)
}

#[tokio::test]
async fn a_dead_development_run_is_put_back_by_the_next_start_and_the_manifests_apply() {
    let fake = fake_apiserver::FakeApiServer::new();
    let client = kube::Client::new(fake, "default");
    // The cluster before: config/crd applied, and the operator's validating configuration
    // deployed (with cert-manager's injection); no mutating one.
    kubectl_apply(&crds(&client), &crd()).await.unwrap();
    kubectl_apply(
        &validating(&client),
        &configuration("ValidatingWebhookConfiguration"),
    )
    .await
    .unwrap();
    let before = state(&client).await;
    assert_eq!(before["conversion"]["strategy"], "None", "{before}");

    // A development run, then `kill -9`: nothing uninstalled.
    let (webhooks, conversion) = start(&client).await;
    let during = state(&client).await;
    assert_eq!(during["conversion"]["strategy"], "Webhook", "{during}");
    assert_eq!(
        during["conversion"]["webhook"]["clientConfig"]["url"],
        "https://127.0.0.1:9443/convert-dev-example-com-gizmo"
    );
    assert_eq!(during["mutating exists"], true);
    assert_eq!(
        during["webhooks"][0]["clientConfig"]["url"],
        "https://127.0.0.1:9443/validate-dev-example-com-v1-gizmo"
    );
    assert!(
        during["webhook annotations"]
            .get("cert-manager.io/inject-ca-from")
            .is_none(),
        "cert-manager must not overwrite the development CA: {during}"
    );
    let record: Value =
        serde_json::from_str(during["crd annotations"][dev::ANNOTATION].as_str().unwrap()).unwrap();
    assert_eq!(record["owner"], MANAGER);
    assert_eq!(record["before"]["value"]["strategy"], "None");
    drop((webhooks, conversion));
    // config/crd applied again after the crash, with an annotation of its own: it applies
    // (the files name no conversion), and putting back later keeps the annotation.
    let mut noted = crd();
    noted["metadata"]["annotations"] = json!({"note": "applied after the crash"});
    kubectl_apply(&crds(&client), &noted).await.unwrap();

    // A second run that dies too, started without putting back first: the records keep
    // what was there before development mode, not what the dead run left.
    let ca = "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n";
    let again = dev::install_conversion(&client, CRD, "https://127.0.0.1:9555/c", ca, MANAGER)
        .await
        .unwrap();
    drop(again);

    // The next start puts everything back before installing; its clean stop puts back again.
    let (webhooks, conversion) = start(&client).await;
    conversion.uninstall().await.unwrap();
    webhooks.uninstall().await.unwrap();
    assert_eq!(state(&client).await, before);

    // A crash, then the explicit restore (`kube-codegen dev restore`).
    let (webhooks, conversion) = start(&client).await;
    drop((webhooks, conversion));
    let restored = dev::restore(&client, None).await.unwrap();
    assert_eq!(restored.len(), 3, "{restored:?}");
    assert_eq!(state(&client).await, before);

    let live = crds(&client).get(CRD).await.unwrap();
    assert_eq!(
        live.metadata
            .annotations
            .unwrap_or_default()
            .get("note")
            .map(String::as_str),
        Some("applied after the crash")
    );

    // Nothing development mode wrote is in the way: config/crd applies, and so does
    // config/default's CRD with the conversion through the Service, without a conflict.
    kubectl_apply(&crds(&client), &crd()).await.unwrap();
    let mut deployed = crd();
    deployed["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "gizmo-system", "name": "gizmo-webhook",
            "path": "/convert-dev-example-com-gizmo"}}}});
    kubectl_apply(&crds(&client), &deployed).await.unwrap();
    let live = crds(&client).get(CRD).await.unwrap();
    let managers: Vec<_> = live
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| e.manager)
        .collect();
    assert!(!managers.iter().any(|m| m == MANAGER), "{managers:?}");
}
