//! Garbage collection through `ownerReferences`: background, orphan and foreground
//! propagation. On a cluster kube-controller-manager collects asynchronously, so the cases
//! wait for the outcome; the fake collects at once.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::env::{case, configmap, eventually};

fn owned_by(name: &str, owner: &ConfigMap) -> ConfigMap {
    let mut cm = configmap(name, &[]);
    cm.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.name_any(),
        uid: owner.uid().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    cm
}

async fn gone(cms: &Api<ConfigMap>, name: &str) -> Option<()> {
    cms.get_opt(name).await.unwrap().is_none().then_some(())
}

#[tokio::test]
async fn garbage_collection_follows_owner_references() {
    case("gc", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let owner = cms
            .create(&PostParams::default(), &configmap("owner", &[]))
            .await
            .unwrap();
        cms.create(&PostParams::default(), &owned_by("child", &owner))
            .await
            .unwrap();
        cms.delete("owner", &DeleteParams::background())
            .await
            .unwrap();
        eventually("background: dependents go too", || gone(&cms, "child")).await;

        let owner = cms
            .create(&PostParams::default(), &configmap("owner2", &[]))
            .await
            .unwrap();
        cms.create(&PostParams::default(), &owned_by("kept", &owner))
            .await
            .unwrap();
        cms.delete("owner2", &DeleteParams::orphan()).await.unwrap();
        eventually("orphan: the owner goes", || gone(&cms, "owner2")).await;
        let kept = cms.get("kept").await.unwrap();
        assert!(
            kept.metadata.owner_references.is_none(),
            "orphan: dependents lose the reference and stay"
        );

        let owner = cms
            .create(&PostParams::default(), &configmap("owner3", &[]))
            .await
            .unwrap();
        let mut held = owned_by("held-child", &owner);
        held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        cms.create(&PostParams::default(), &held).await.unwrap();
        cms.delete("owner3", &DeleteParams::foreground())
            .await
            .unwrap();
        let waiting = cms.get("owner3").await.unwrap();
        assert!(
            waiting
                .finalizers()
                .iter()
                .any(|f| f == "foregroundDeletion"),
            "foreground: the owner waits"
        );
        eventually("foreground: the dependent is being deleted", || async {
            let child = cms.get("held-child").await.ok()?;
            child.metadata.deletion_timestamp.map(|_| ())
        })
        .await;
        cms.patch(
            "held-child",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
        eventually("and goes once its dependents are gone", || {
            gone(&cms, "owner3")
        })
        .await;
    })
    .await;
}
