//! Storage version migration, as kube-apiserver keeps `status.storedVersions`: objects
//! written while a version was the storage version keep it listed, removing a listed version
//! from the CRD is refused, and the runtime's `migrate_storage` rewrites every object (with
//! an interruption and a resumed run) so that the old version can go.

use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube_codegen_runtime::migrate::{CHECKPOINT_ANNOTATION, MigrateOptions, migrate_storage};
use serde_json::{Value, json};

use crate::env::{RUN_LABEL, case, run_id, status};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// A CRD of this run's own group (CRDs are cluster-scoped and this one is deleted at the
/// end), served in `versions` with `storage` as the storage version; the schemas are equal,
/// so conversion `None` converts between them.
fn gizmos(group: &str, storage: &str, versions: &[&str]) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gizmos.{group}"), "labels": {RUN_LABEL: run_id()}},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
            "versions": versions.iter().map(|v| json!({
                "name": v, "served": true, "storage": *v == storage, "schema": schema,
            })).collect::<Vec<_>>(),
        }
    })
}

async fn apply_crd(crds: &Api<CustomResourceDefinition>, crd: &Value) -> Result<(), kube::Error> {
    let name = crd["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    crds.patch(
        &name,
        &PatchParams::apply("contract-suite").force(),
        &Patch::Apply(crd),
    )
    .await
    .map(|_| ())
}

async fn stored_versions(crds: &Api<CustomResourceDefinition>, name: &str) -> Vec<String> {
    crds.get(name)
        .await
        .unwrap()
        .status
        .and_then(|s| s.stored_versions)
        .unwrap_or_default()
}

/// Waits until the version is served (kube-apiserver establishes a CRD asynchronously).
async fn served(client: &kube::Client, resource: &ApiResource, ns: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, resource);
    crate::env::eventually("the version is served", || {
        let api = api.clone();
        async move { api.list(&ListParams::default().limit(1)).await.ok() }
    })
    .await;
}

#[tokio::test]
async fn stored_versions_are_kept_and_migration_trims_them() {
    case("migration", |env| async move {
        let group = format!("r{}.migrate.example.com", run_id());
        let name = format!("gizmos.{group}");
        let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
        env.delete_later(ApiResource::erase::<CustomResourceDefinition>(&()), &name);
        apply_crd(&crds, &gizmos(&group, "v1alpha1", &["v1alpha1"])).await.unwrap();
        let resource = |version: &str| ApiResource {
            group: group.clone(),
            version: version.to_owned(),
            api_version: format!("{group}/{version}"),
            kind: "Gizmo".into(),
            plural: "gizmos".into(),
        };
        served(&env.client, &resource("v1alpha1"), &env.ns).await;
        let old: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource("v1alpha1"));
        for i in 1..=7 {
            let obj: DynamicObject = serde_json::from_value(json!({
                "apiVersion": format!("{group}/v1alpha1"), "kind": "Gizmo",
                "metadata": {"name": format!("g{i}"), "labels": {RUN_LABEL: run_id()}},
                "spec": {"size": i},
            }))
            .unwrap();
            old.create(&PostParams::default(), &obj).await.unwrap();
        }

        apply_crd(&crds, &gizmos(&group, "v1beta1", &["v1alpha1", "v1beta1"])).await.unwrap();
        served(&env.client, &resource("v1beta1"), &env.ns).await;
        assert_eq!(stored_versions(&crds, &name).await, ["v1alpha1", "v1beta1"]);

        // A listed version may not leave the CRD.
        let err = apply_crd(&crds, &gizmos(&group, "v1beta1", &["v1beta1"])).await.unwrap_err();
        let s = status(err);
        assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"), "{}", s.message);
        assert!(
            s.message.ends_with("status.storedVersions[0]: Invalid value: \"v1alpha1\": missing from spec.versions; v1alpha1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions"),
            "{}",
            s.message
        );

        // Interrupted after four rewrites: a checkpoint stays on the CRD.
        let options = MigrateOptions {
            page_size: 3,
            writes_per_second: 1000.0,
            stop_after: Some(4),
        };
        let mut pages = 0;
        let first = migrate_storage(&env.client, &name, &options, |_| pages += 1).await.unwrap();
        assert_eq!((first.rewritten, first.complete, first.resumed), (4, false, false));
        assert!(pages >= 1);
        let annotations = crds.get(&name).await.unwrap().metadata.annotations.unwrap_or_default();
        assert!(annotations[CHECKPOINT_ANNOTATION].contains("\"to\":\"v1beta1\""), "{annotations:?}");
        assert_eq!(stored_versions(&crds, &name).await, ["v1alpha1", "v1beta1"]);

        // Resumed: the other three, then storedVersions is the storage version alone.
        let options = MigrateOptions { stop_after: None, ..options };
        let second = migrate_storage(&env.client, &name, &options, |_| {}).await.unwrap();
        assert_eq!((second.rewritten, second.complete, second.resumed), (3, true, true));
        assert_eq!(second.stored_before, ["v1alpha1", "v1beta1"]);
        assert_eq!(stored_versions(&crds, &name).await, ["v1beta1"]);
        let annotations = crds.get(&name).await.unwrap().metadata.annotations.unwrap_or_default();
        assert!(!annotations.contains_key(CHECKPOINT_ANNOTATION), "{annotations:?}");

        // Now v1alpha1 may go, and every object reads as v1beta1.
        apply_crd(&crds, &gizmos(&group, "v1beta1", &["v1beta1"])).await.unwrap();
        let new: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource("v1beta1"));
        // kube-apiserver rebuilds the kind's storage after the CRD changes and answers 429
        // "storage is (re)initializing" (retry after 1 s) meanwhile; a client retries.
        let mut tries = 0;
        let list = loop {
            match new.list(&env.ours()).await {
                Err(kube::Error::Api(status)) if status.code == 429 && tries < 30 => {
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                other => break other.unwrap(),
            }
        };
        let mut sizes: Vec<i64> = list.items.iter().map(|o| o.data["spec"]["size"].as_i64().unwrap()).collect();
        sizes.sort();
        assert_eq!(sizes, [1, 2, 3, 4, 5, 6, 7]);
    })
    .await;
}
