//! `fake_apiserver::TestEnv` itself, on either server: in process by default, against a
//! cluster with `KUBE_TEST_KUBECONFIG=<kubeconfig>`.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;

use fake_apiserver::TestEnv;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

const HOLD: &str = "kube-codegen.example.com/hold";

/// A CRD of a group of its own for this run, so that runs on one cluster do not meet.
fn crd(group: &str, finalizers: &[&str]) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("holds.{group}"), "finalizers": finalizers},
        "spec": {
            "group": group,
            "names": {"plural": "holds", "singular": "hold", "kind": "Hold", "listKind": "HoldList"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    })
}

fn crds(client: kube::Client) -> Api<DynamicObject> {
    Api::all_with(
        client,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        )),
    )
}

/// Lets the CRD `name` go: removes [`HOLD`] from its finalizers (a cluster's own stay).
async fn release(crds: &Api<DynamicObject>, name: &str) -> Result<(), kube::Error> {
    let kept: Vec<String> = crds
        .get(name)
        .await?
        .metadata
        .finalizers
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f != HOLD)
        .collect();
    let patch = json!({"metadata": {"finalizers": kept}});
    crds.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applying_a_crd_that_is_being_deleted_waits_until_it_is_gone() {
    let env = TestEnv::start().await.expect("a test environment");
    let group = format!("{}.testenv.example.com", env.namespace());
    let name = format!("holds.{group}");
    let crds = crds(env.client());
    let case = AssertUnwindSafe(async {
        // An earlier run's CRD, kept terminating by a finalizer nobody has removed yet.
        env.apply(crd(&group, &[HOLD])).await.expect("the CRD");
        crds.delete(&name, &DeleteParams::default()).await.unwrap();
        let held = crds.get(&name).await.unwrap();
        assert!(held.metadata.deletion_timestamp.is_some(), "{held:?}");

        let mut apply = std::pin::pin!(env.apply(crd(&group, &[])));
        tokio::select! {
            applied = &mut apply => panic!("apply returned while the CRD was being deleted: {applied:?}"),
            () = tokio::time::sleep(Duration::from_millis(600)) => {}
        }
        // The finalizer goes: the old CRD is removed, and the apply makes a new one.
        release(&crds, &name).await.unwrap();
        let applied = tokio::time::timeout(Duration::from_secs(90), apply)
            .await
            .expect("apply returned within 90s")
            .expect("the CRD applied again");
        assert_eq!(applied["metadata"]["deletionTimestamp"], Value::Null);

        // Its kind serves creates again.
        let holds: Api<DynamicObject> = Api::namespaced_with(
            env.client(),
            env.namespace(),
            &ApiResource::from_gvk(&GroupVersionKind::gvk(&group, "v1", "Hold")),
        );
        let hold: DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "Hold",
            "metadata": {"name": "one"}, "data": "kept"
        }))
        .unwrap();
        let created = holds.create(&PostParams::default(), &hold).await;
        assert_eq!(created.expect("a create of the kind").data["data"], "kept");
    })
    .catch_unwind()
    .await;
    // Passed or not, nothing stays behind on a cluster.
    let _ = release(&crds, &name).await;
    let _ = crds.delete(&name, &DeleteParams::default()).await;
    env.cleanup().await.unwrap();
    if let Err(panic) = case {
        std::panic::resume_unwind(panic);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applying_a_crd_that_stays_is_kept_and_returned_at_once() {
    let env = TestEnv::start().await.expect("a test environment");
    let group = format!("{}.testenv.example.com", env.namespace());
    let first = env.apply(crd(&group, &[])).await.expect("the CRD");
    let again = env.apply(crd(&group, &[])).await.expect("the CRD again");
    assert_eq!(first["metadata"]["uid"], again["metadata"]["uid"]);
    crds(env.client())
        .delete(&format!("holds.{group}"), &DeleteParams::default())
        .await
        .unwrap();
    env.cleanup().await.unwrap();
}
