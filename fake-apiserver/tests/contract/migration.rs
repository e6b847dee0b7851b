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

/// Lists `api` until the server stops answering 429 (kube-apiserver rebuilds a kind's
/// storage after its CRD changes).
async fn list_when_ready(
    api: &Api<DynamicObject>,
    params: &ListParams,
) -> Result<kube::core::ObjectList<DynamicObject>, kube::Error> {
    for _ in 0..30 {
        match api.list(params).await {
            Err(kube::Error::Api(status)) if status.code == 429 => {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            other => return other,
        }
    }
    api.list(params).await
}

/// The storage version moves back to the old version and forward again while a migration
/// runs, and objects are written in the old one meanwhile, at keys the migration has already
/// passed. The migration sees that the CRD changed (its generation moved) and rewrites every
/// object once more before it trims `status.storedVersions`; after that the old version can
/// go and every object still reads. With the storage version left on the old one, it trims
/// nothing and fails.
#[tokio::test]
async fn a_storage_version_that_moves_during_a_migration_is_not_trimmed_away() {
    case("migration-flip", |env| async move {
        let group = format!("r{}.flip.example.com", run_id());
        let name = format!("gizmos.{group}");
        let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
        env.delete_later(ApiResource::erase::<CustomResourceDefinition>(&()), &name);
        let resource = |version: &str| ApiResource {
            group: group.clone(),
            version: version.to_owned(),
            api_version: format!("{group}/{version}"),
            kind: "Gizmo".into(),
            plural: "gizmos".into(),
        };
        apply_crd(&crds, &gizmos(&group, "v1alpha1", &["v1alpha1", "v1"]))
            .await
            .unwrap();
        served(&env.client, &resource("v1alpha1"), &env.ns).await;
        served(&env.client, &resource("v1"), &env.ns).await;
        let old: Api<DynamicObject> =
            Api::namespaced_with(env.client.clone(), &env.ns, &resource("v1alpha1"));
        let api_version = format!("{group}/v1alpha1");
        let gizmo = move |name: String, size: i64| -> DynamicObject {
            serde_json::from_value(json!({
                "apiVersion": api_version, "kind": "Gizmo",
                "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}},
                "spec": {"size": size},
            }))
            .unwrap()
        };
        for i in 0..40 {
            old.create(&PostParams::default(), &gizmo(format!("m{i:02}"), i))
                .await
                .unwrap();
        }
        apply_crd(&crds, &gizmos(&group, "v1", &["v1alpha1", "v1"]))
            .await
            .unwrap();
        served(&env.client, &resource("v1"), &env.ns).await;

        // After the first page: storage back to v1alpha1, three objects written there at
        // keys before every other (the pass is past them), storage forward to v1 again.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let flip = {
            let (crds, old, group) = (crds.clone(), old.clone(), group.clone());
            let gizmo = gizmo.clone();
            tokio::spawn(async move {
                rx.recv().await;
                apply_crd(&crds, &gizmos(&group, "v1alpha1", &["v1alpha1", "v1"]))
                    .await
                    .unwrap();
                for i in 0..3 {
                    let body = gizmo(format!("a{i}"), 100 + i);
                    let mut tries = 0;
                    while let Err(e) = old.create(&PostParams::default(), &body).await {
                        tries += 1;
                        assert!(tries < 30, "creating a{i}: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    }
                }
                apply_crd(&crds, &gizmos(&group, "v1", &["v1alpha1", "v1"]))
                    .await
                    .unwrap();
            })
        };
        let options = MigrateOptions {
            page_size: 5,
            writes_per_second: 10.0,
            stop_after: None,
        };
        let done = migrate_storage(&env.client, &name, &options, |_| {
            let _ = tx.send(());
        })
        .await
        .expect("the migration completes");
        flip.await.unwrap();
        assert!(done.complete, "{done:?}");
        assert!(
            done.passes >= 2,
            "a second pass after the CRD changed: {done:?}"
        );
        assert!(done.rewritten >= 40 + 43, "{done:?}");
        assert_eq!(stored_versions(&crds, &name).await, ["v1"]);

        // v1alpha1 may go now, and every object, the three written during the run too, reads
        // through v1: none is left stored in the version that is gone.
        apply_crd(&crds, &gizmos(&group, "v1", &["v1"]))
            .await
            .unwrap();
        let new: Api<DynamicObject> =
            Api::namespaced_with(env.client.clone(), &env.ns, &resource("v1"));
        let list = list_when_ready(&new, &env.ours())
            .await
            .expect("every object reads as v1");
        assert_eq!(list.items.len(), 43);

        // Storage left on v1alpha1 (served again) during a run: nothing is trimmed.
        apply_crd(&crds, &gizmos(&group, "v1", &["v1alpha1", "v1"]))
            .await
            .unwrap();
        served(&env.client, &resource("v1alpha1"), &env.ns).await;
        old.create(&PostParams::default(), &gizmo("z0".into(), 1))
            .await
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let flip = {
            let (crds, group) = (crds.clone(), group.clone());
            tokio::spawn(async move {
                rx.recv().await;
                apply_crd(&crds, &gizmos(&group, "v1alpha1", &["v1alpha1", "v1"]))
                    .await
                    .unwrap();
            })
        };
        let err = migrate_storage(&env.client, &name, &options, |_| {
            let _ = tx.send(());
        })
        .await
        .expect_err("the storage version moved away");
        flip.await.unwrap();
        assert!(
            err.to_string()
                .contains("its storage version is now v1alpha1, not v1"),
            "{err}"
        );
        // The server listed v1alpha1 again when it became the storage version; the
        // migration left it there.
        assert_eq!(stored_versions(&crds, &name).await, ["v1", "v1alpha1"]);
    })
    .await;
}
