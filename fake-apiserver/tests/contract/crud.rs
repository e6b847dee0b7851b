//! Create, read, update and delete: versions, conflicts, names, finalizers, collections, and
//! a Pod's binding to a node.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::env::{api_error, case, configmap, names};

#[tokio::test]
async fn create_get_update_delete_with_optimistic_concurrency() {
    case("crud", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let created = cms
            .create(&PostParams::default(), &configmap("a", &[]))
            .await
            .unwrap();
        assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
        let rv1 = created.resource_version().unwrap();

        let (code, reason) = api_error(
            cms.create(&PostParams::default(), &configmap("a", &[]))
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));

        let mut changed = created.clone();
        changed.data = Some(BTreeMap::from([("k".into(), "w".into())]));
        let updated = cms
            .replace("a", &PostParams::default(), &changed)
            .await
            .unwrap();
        assert!(
            updated.resource_version().unwrap().parse::<u64>().unwrap()
                > rv1.parse::<u64>().unwrap()
        );

        // The same update again carries the old resourceVersion: a conflict.
        let (code, reason) = api_error(
            cms.replace("a", &PostParams::default(), &changed)
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (409, "Conflict"));

        cms.delete("a", &DeleteParams::default()).await.unwrap();
        let (code, reason) = api_error(cms.get("a").await.unwrap_err());
        assert_eq!((code, reason.as_str()), (404, "NotFound"));
        assert!(cms.get_opt("a").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn a_write_that_changes_nothing_keeps_the_resource_version() {
    case("noop", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let created = cms
            .create(&PostParams::default(), &configmap("a", &[]))
            .await
            .unwrap();
        let again = cms
            .replace("a", &PostParams::default(), &created)
            .await
            .unwrap();
        assert_eq!(again.resource_version(), created.resource_version());
        let patched = cms
            .patch(
                "a",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"k": "v"}})),
            )
            .await
            .unwrap();
        assert_eq!(patched.resource_version(), created.resource_version());
    })
    .await;
}

#[tokio::test]
async fn namespaces_must_exist_and_generate_name_fills_names() {
    case("names", |env| async move {
        let missing: Api<ConfigMap> =
            Api::namespaced(env.client.clone(), &format!("{}-missing", env.ns));
        let (code, reason) = api_error(
            missing
                .create(&PostParams::default(), &configmap("a", &[]))
                .await
                .unwrap_err(),
        );
        assert_eq!((code, reason.as_str()), (404, "NotFound"));

        let cms: Api<ConfigMap> = env.api();
        let mut generated = configmap("", &[]);
        generated.metadata.name = None;
        generated.metadata.generate_name = Some("gen-".into());
        let created = cms
            .create(&PostParams::default(), &generated)
            .await
            .unwrap();
        let name = created.name_any();
        assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    })
    .await;
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    case("finalizers", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let mut cm = configmap("held", &[]);
        cm.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        cms.create(&PostParams::default(), &cm).await.unwrap();

        let wrong_uid = DeleteParams {
            preconditions: Some(kube::api::Preconditions {
                uid: Some("nope".into()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        let (code, reason) = api_error(cms.delete("held", &wrong_uid).await.unwrap_err());
        assert_eq!((code, reason.as_str()), (409, "Conflict"));

        let deleting = cms
            .delete("held", &DeleteParams::default())
            .await
            .unwrap()
            .left()
            .expect("the object, still there");
        assert!(deleting.metadata.deletion_timestamp.is_some());
        assert!(cms.get("held").await.is_ok());
        let (code, _) = api_error(
            cms.patch(
                "held",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"metadata": {"finalizers": ["example.com/hold", "example.com/other"]}}),
                ),
            )
            .await
            .unwrap_err(),
        );
        assert_eq!(code, 422, "no new finalizers on an object being deleted");
        cms.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
        assert!(cms.get_opt("held").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn delete_collection_and_kind_specific_field_selectors() {
    case("collection", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        for (name, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
            cms.create(&PostParams::default(), &configmap(name, &[("app", app)]))
                .await
                .unwrap();
        }
        cms.delete_collection(&DeleteParams::default(), &env.select("app=x"))
            .await
            .unwrap();
        let left = cms.list(&env.ours()).await.unwrap();
        assert_eq!(names(&left), ["c"]);

        let pods: Api<Pod> = env.api();
        for (name, node) in [("p1", "node-a"), ("p2", "node-b")] {
            let pod: Pod = serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
            }))
            .unwrap();
            pods.create(&PostParams::default(), &pod).await.unwrap();
        }
        let on_a = pods
            .list(&kube::api::ListParams::default().fields("spec.nodeName=node-a"))
            .await
            .unwrap();
        assert_eq!(names(&on_a), ["p1"]);
        let pending = pods
            .list(&kube::api::ListParams::default().fields("status.phase=Pending"))
            .await
            .unwrap();
        assert_eq!(pending.items.len(), 2, "a created pod is Pending");
    })
    .await;
}

/// A Pod is put on a node through its `binding` subresource, once: a second binding is a
/// 409 on `pods/binding`, and a Binding naming another Pod or no node is refused.
#[tokio::test]
async fn a_pod_is_bound_to_a_node_once_through_its_binding() {
    case("binding", |env| async move {
        let pods: Api<Pod> = env.api();
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
        let path = format!("/api/v1/namespaces/{}/pods/web/binding", env.ns);
        let bind = |name: &str, node: &str| {
            json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
            .to_string()
        };

        let other = env.raw("POST", &path, "application/json", &bind("db", "node-a")).await;
        assert_eq!(other.code, 400, "{}", other.body);
        assert_eq!(
            other.body["message"],
            "name in URL does not match name in Binding object"
        );
        let nowhere = env.raw("POST", &path, "application/json", &bind("web", "")).await;
        assert_eq!(nowhere.code, 500, "{}", nowhere.body);
        assert_eq!(
            nowhere.body["message"],
            "target.name: Required value"
        );
        let stale = json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "web", "uid": "00000000-0000-0000-0000-000000000000"},
            "target": {"kind": "Node", "name": "node-a"}});
        let stale = env.raw("POST", &path, "application/json", &stale.to_string()).await;
        assert_eq!(stale.code, 409, "{}", stale.body);
        let dry = env
            .raw("POST", &format!("{path}?dryRun=All"), "application/json", &bind("web", "node-z"))
            .await;
        assert_eq!(dry.code, 201, "{}", dry.body);
        assert_eq!(pods.get("web").await.unwrap().spec.unwrap().node_name, None);

        let bound = env.raw("POST", &path, "application/json", &bind("web", "node-a")).await;
        assert_eq!(bound.code, 201, "{}", bound.body);
        assert_eq!(bound.body["status"], "Success");
        let pod = pods.get("web").await.unwrap();
        assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("node-a"));
        let scheduled = pod
            .status
            .unwrap()
            .conditions
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "PodScheduled")
            .expect("a PodScheduled condition");
        assert_eq!(scheduled.status, "True");

        let again = env.raw("POST", &path, "application/json", &bind("web", "node-b")).await;
        assert_eq!(again.code, 409, "{}", again.body);
        assert_eq!(
            again.body["message"],
            "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-a\""
        );
    })
    .await;
}
