//! What is stored when a CRD's versions differ and its conversion is `None`: an object
//! written through a version other than the storage version is converted (its `apiVersion`
//! rewritten), then pruned by the storage version's schema and defaulted by it; read through
//! any version it is pruned by that version's schema. A field only the old version knows is
//! therefore lost on the way in, on kube-apiserver as on the fake: the create's own answer,
//! a read through either version, and a dry run all lack it, while `managedFields` still
//! name it. An update through the old version that only sets it again is still a write (its
//! generation moves), as the real server's no-op check compares stored bytes.

use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::env::{RUN_LABEL, case, run_id};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// `volumebackups.<group>`: v1alpha1 has `spec.pvcName` and `spec.retain` (no default),
/// v1 (the storage version) has `spec.source` and `spec.retain` with a default, and only
/// v1alpha1 defaults `spec.mode`; conversion `None`.
fn volume_backups(group: &str) -> Value {
    let old = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "pvcName": {"type": "string"},
            "retain": {"type": "integer"},
            "mode": {"type": "string", "default": "fast"}}}}}});
    let new = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "source": {"type": "string"},
            "retain": {"type": "integer", "default": 3}}}}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("volumebackups.{group}"), "labels": {RUN_LABEL: run_id()}},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "VolumeBackup", "plural": "volumebackups", "singular": "volumebackup",
                "listKind": "VolumeBackupList"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "schema": old},
                {"name": "v1", "served": true, "storage": true, "schema": new},
            ],
        }
    })
}

#[tokio::test]
async fn a_field_the_storage_version_does_not_know_is_not_stored() {
    case("versions", |env| async move {
        let group = format!("r{}.versions.example.com", run_id());
        let name = format!("volumebackups.{group}");
        let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
        env.delete_later(ApiResource::erase::<CustomResourceDefinition>(&()), &name);
        crds.patch(
            &name,
            &PatchParams::apply("contract-suite").force(),
            &Patch::Apply(volume_backups(&group)),
        )
        .await
        .expect("the CRD is accepted");
        let resource = |version: &str| ApiResource {
            group: group.clone(),
            version: version.to_owned(),
            api_version: format!("{group}/{version}"),
            kind: "VolumeBackup".into(),
            plural: "volumebackups".into(),
        };
        let api = |version: &str| -> Api<DynamicObject> {
            Api::namespaced_with(env.client.clone(), &env.ns, &resource(version))
        };
        let (old, new) = (api("v1alpha1"), api("v1"));
        for version in [&old, &new] {
            let version = version.clone();
            crate::env::eventually("the version is served", || {
                let version = version.clone();
                async move { version.list(&ListParams::default().limit(1)).await.ok() }
            })
            .await;
        }
        let body: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1alpha1"), "kind": "VolumeBackup",
            "metadata": {"name": "daily", "labels": {RUN_LABEL: run_id()}},
            "spec": {"pvcName": "data", "retain": 7},
        }))
        .unwrap();

        // A dry run answers what would be stored, read back.
        let dry = old
            .create(
                &PostParams {
                    dry_run: true,
                    ..Default::default()
                },
                &body,
            )
            .await
            .expect("the dry run is accepted");
        assert_eq!(
            dry.data["spec"],
            json!({"retain": 7}),
            "dry run: {:?}",
            dry.data
        );

        // The create's own answer: pvcName pruned by v1, v1alpha1's default for mode not
        // stored either (v1 has no such field), v1's default kept only where v1alpha1
        // knows the field (retain was given, so it stays 7).
        let created = old
            .create(&PostParams::default(), &body)
            .await
            .expect("created");
        assert_eq!(
            created.data["spec"],
            json!({"retain": 7}),
            "create: {:?}",
            created.data
        );
        let managed = serde_json::to_value(&created.metadata.managed_fields).unwrap();
        assert!(
            managed.to_string().contains("f:pvcName"),
            "managedFields still name the field the writer set: {managed}"
        );

        // Read through either version: the same.
        let as_new = new.get("daily").await.unwrap();
        assert_eq!(
            as_new.data["spec"],
            json!({"retain": 7}),
            "v1: {:?}",
            as_new.data
        );
        let as_old = old.get("daily").await.unwrap();
        assert_eq!(
            as_old.data["spec"],
            json!({"retain": 7}),
            "v1alpha1: {:?}",
            as_old.data
        );
        let listed = old.list(&env.ours()).await.unwrap();
        assert_eq!(listed.items.len(), 1);
        assert_eq!(listed.items[0].data["spec"], json!({"retain": 7}));

        // Written through v1 without retain: v1's default is stored, and read through v1alpha1.
        let bare: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "VolumeBackup",
            "metadata": {"name": "weekly", "labels": {RUN_LABEL: run_id()}},
            "spec": {"source": "data"},
        }))
        .unwrap();
        new.create(&PostParams::default(), &bare)
            .await
            .expect("created");
        let weekly = old.get("weekly").await.unwrap();
        assert_eq!(
            weekly.data["spec"],
            json!({"retain": 3}),
            "v1alpha1: {:?}",
            weekly.data
        );

        // Setting pvcName again through v1alpha1 changes nothing stored but is a write: the
        // generation and resourceVersion move.
        let mut again = as_old.clone();
        again.data["spec"]["pvcName"] = json!("data");
        let replaced = old
            .replace("daily", &PostParams::default(), &again)
            .await
            .unwrap();
        assert_eq!(replaced.data["spec"], json!({"retain": 7}));
        assert_eq!(
            replaced.metadata.generation,
            Some(2),
            "{:?}",
            replaced.metadata
        );
        assert_ne!(
            replaced.metadata.resource_version,
            as_old.metadata.resource_version
        );
    })
    .await;
}
