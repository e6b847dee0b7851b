//! The contract suite: the semantics of a real API server, exercised through `kube::Client`.
//!
//! Runs against the in-process `FakeApiServer`. With `KUBE_CONTRACT_KUBECONFIG=<path>` the
//! same cases run against the cluster of that kubeconfig (each in its own namespace), so a
//! difference from the real server shows up as a failing case. Cases that need the fake's
//! test controls, or a controller-manager (garbage collection), say so and skip there.

use std::collections::BTreeMap;
use std::time::Duration;

use fake_apiserver::{ApiError, FakeApiServer, Matcher};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A CRD with a status subresource and a validated spec.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[kube(
    group = "contract.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
    /// Defaulted by the schema.
    #[serde(default = "default_color")]
    pub color: String,
}

fn default_color() -> String {
    "blue".into()
}

/// Widget status.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct WidgetStatus {
    /// Ready replicas.
    pub ready: i32,
}

/// Where a case runs: the fake (with its controls) or a real cluster.
struct Env {
    client: Client,
    fake: Option<FakeApiServer>,
    ns: String,
}

impl Env {
    async fn new(name: &str) -> Self {
        let (client, fake) = match std::env::var("KUBE_CONTRACT_KUBECONFIG") {
            Ok(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(path)
                    .expect("KUBE_CONTRACT_KUBECONFIG is readable");
                let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                    .await
                    .expect("valid kubeconfig");
                (Client::try_from(config).expect("client"), None)
            }
            Err(_) => {
                let fake = FakeApiServer::new();
                (Client::new(fake.clone(), "default"), Some(fake))
            }
        };
        let ns = format!("contract-{name}");
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let mut object = Namespace::default();
        object.metadata.name = Some(ns.clone());
        let _ = namespaces.create(&PostParams::default(), &object).await;
        Self { client, fake, ns }
    }

    fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// The fake's controls, or `None` (the case skips) against a real cluster.
    fn fake(&self, why: &str) -> Option<&FakeApiServer> {
        if self.fake.is_none() {
            eprintln!("skipped against a real cluster: {why}");
        }
        self.fake.as_ref()
    }

    async fn install_widgets(&self) {
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let _ = crds.create(&PostParams::default(), &Widget::crd()).await;
        for _ in 0..50 {
            if let Ok(crd) = crds.get(Widget::crd_name()).await
                && crd
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the Widget CRD never became established");
    }
}

fn configmap(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
    );
    cm.data = Some(BTreeMap::from([("k".into(), "v".into())]));
    cm
}

fn api_error(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.reason),
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn create_get_update_delete_with_optimistic_concurrency() {
    let env = Env::new("crud").await;
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
    assert_ne!(updated.resource_version().unwrap(), rv1);
    assert!(
        updated.resource_version().unwrap().parse::<u64>().unwrap() > rv1.parse::<u64>().unwrap()
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
}

#[tokio::test]
async fn a_write_that_changes_nothing_keeps_the_resource_version() {
    let env = Env::new("noop").await;
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
}

#[tokio::test]
async fn namespaces_must_exist_and_generate_name_fills_names() {
    let env = Env::new("names").await;
    let missing: Api<ConfigMap> = Api::namespaced(env.client.clone(), "no-such-namespace");
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
}

#[tokio::test]
async fn label_and_field_selectors_and_pagination() {
    let env = Env::new("select").await;
    let cms: Api<ConfigMap> = env.api();
    for (name, app, tier) in [
        ("a", "web", "front"),
        ("b", "web", "back"),
        ("c", "db", "back"),
        ("d", "cache", ""),
    ] {
        let labels: Vec<(&str, &str)> = [("app", app), ("tier", tier)]
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .collect();
        cms.create(&PostParams::default(), &configmap(name, &labels))
            .await
            .unwrap();
    }
    let names = |list: kube::core::ObjectList<ConfigMap>| {
        list.items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>()
    };
    let select = |s: &str| ListParams::default().labels(s);
    assert_eq!(
        names(cms.list(&select("app=web")).await.unwrap()),
        ["a", "b"]
    );
    assert_eq!(
        names(cms.list(&select("app!=web")).await.unwrap()),
        ["c", "d"]
    );
    assert_eq!(
        names(cms.list(&select("app in (db,cache)")).await.unwrap()),
        ["c", "d"]
    );
    assert_eq!(
        names(cms.list(&select("tier notin (back)")).await.unwrap()),
        ["a", "d"]
    );
    assert_eq!(names(cms.list(&select("!tier")).await.unwrap()), ["d"]);
    assert_eq!(
        names(cms.list(&select("tier,app=web")).await.unwrap()),
        ["a", "b"]
    );
    assert_eq!(
        names(
            cms.list(&ListParams::default().fields("metadata.name=c"))
                .await
                .unwrap()
        ),
        ["c"]
    );
    let (code, _) = api_error(
        cms.list(&ListParams::default().fields("data.k=v"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 400);

    let first = cms.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(names(first.clone()), ["a", "b", "c"]);
    let token = first.metadata.continue_.clone().expect("a continue token");
    let rest = cms
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(rest.clone()), ["d"]);
    assert!(rest.metadata.continue_.as_deref().unwrap_or("").is_empty());
}

#[tokio::test]
async fn watch_sees_changes_in_order_and_resumes_from_a_version() {
    let env = Env::new("watch").await;
    let cms: Api<ConfigMap> = env.api();
    let start = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    cms.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "changed"}})),
    )
    .await
    .unwrap();
    cms.delete("a", &DeleteParams::default()).await.unwrap();
    let stream = cms
        .watch(&WatchParams::default().timeout(5), &start)
        .await
        .unwrap();
    let events: Vec<String> = stream
        .take(3)
        .map(|e| match e.unwrap() {
            WatchEvent::Added(o) => format!("added {}", o.name_any()),
            WatchEvent::Modified(o) => {
                format!("modified {}={}", o.name_any(), o.data.unwrap()["k"])
            }
            WatchEvent::Deleted(o) => format!("deleted {}", o.name_any()),
            other => format!("{other:?}"),
        })
        .collect()
        .await;
    assert_eq!(events, ["added a", "modified a=changed", "deleted a"]);
}

#[tokio::test]
async fn a_too_old_resource_version_is_gone() {
    let env = Env::new("gone").await;
    let Some(fake) = env.fake("compaction is a control of the fake") else {
        return;
    };
    let cms: Api<ConfigMap> = env.api();
    cms.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    fake.compact();
    let mut stream = cms
        .watch(&WatchParams::default(), "1")
        .await
        .unwrap()
        .boxed();
    match stream.next().await.unwrap().unwrap() {
        WatchEvent::Error(e) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected 410, got {other:?}"),
    }
}

#[tokio::test]
async fn the_runtime_watcher_relists_after_gone_and_dropped_watches() {
    let env = Env::new("watcher").await;
    let Some(fake) = env
        .fake("dropping watches is a control of the fake")
        .cloned()
    else {
        return;
    };
    let cms: Api<ConfigMap> = env.api();
    let (reader, writer) = kube::runtime::reflector::store();
    let stream = watcher(cms.clone(), watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects();
    // Keep polling through errors, as a Controller does: the 410 surfaces as one `Err`.
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    cms.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    wait_for(|| reader.state().len() == 1).await;
    fake.drop_watches();
    cms.create(&PostParams::default(), &configmap("b", &[]))
        .await
        .unwrap();
    wait_for(|| reader.state().len() == 2).await;
    fake.expire_watches();
    cms.create(&PostParams::default(), &configmap("c", &[]))
        .await
        .unwrap();
    wait_for(|| reader.state().len() == 3).await;
    task.abort();
}

/// Polls `condition` for up to 20 s: kube's default watcher backoff waits seconds after an error.
async fn wait_for(mut condition: impl FnMut() -> bool) {
    for _ in 0..400 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("condition not met within 20s");
}

#[tokio::test]
async fn crds_serve_validate_default_and_prune() {
    let env = Env::new("crd").await;
    env.install_widgets().await;
    let widgets: Api<Widget> = env.api();
    let mut raw = serde_json::to_value(Widget::new(
        "w",
        WidgetSpec {
            replicas: 2,
            color: "red".into(),
        },
    ))
    .unwrap();
    raw["spec"]["unknown"] = json!("dropped");
    raw["spec"].as_object_mut().unwrap().remove("color");
    let dynamic: Api<kube::core::DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        &env.ns,
        &kube::core::ApiResource::erase::<Widget>(&()),
    );
    let created = dynamic
        .create(
            &PostParams::default(),
            &serde_json::from_value(raw).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"replicas": 2, "color": "blue"}),
        "defaulted and pruned"
    );

    let err = widgets
        .create(
            &PostParams::default(),
            &Widget::new(
                "bad",
                WidgetSpec {
                    replicas: 11,
                    color: "red".into(),
                },
            ),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
            assert!(
                status.message.contains("spec.replicas"),
                "{}",
                status.message
            );
            assert!(
                status.message.contains("less than or equal to 10"),
                "{}",
                status.message
            );
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn the_status_subresource_splits_spec_and_status() {
    let env = Env::new("status").await;
    env.install_widgets().await;
    let widgets: Api<Widget> = env.api();
    let mut w = Widget::new(
        "w",
        WidgetSpec {
            replicas: 1,
            color: "red".into(),
        },
    );
    w.status = Some(WidgetStatus { ready: 5 });
    let created = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(created.status, None, "create drops the status");
    assert_eq!(created.metadata.generation, Some(1));

    let status = widgets
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": 1}, "spec": {"replicas": 9}})),
        )
        .await
        .unwrap();
    assert_eq!(status.status, Some(WidgetStatus { ready: 1 }));
    assert_eq!(status.spec.replicas, 1, "/status ignores the spec");
    assert_eq!(
        status.metadata.generation,
        Some(1),
        "a status write keeps the generation"
    );

    let spec = widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": 7}, "spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(spec.spec.replicas, 3);
    assert_eq!(
        spec.status,
        Some(WidgetStatus { ready: 1 }),
        "the main endpoint ignores the status"
    );
    assert_eq!(
        spec.metadata.generation,
        Some(2),
        "a spec change bumps the generation"
    );
}

#[tokio::test]
async fn json_and_strategic_merge_patches() {
    let env = Env::new("patches").await;
    let deployments: Api<Deployment> = env.api();
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
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
            serde_json::to_vec(&json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]))
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
    assert_eq!(deployments.get("web").await.unwrap().spec.replicas, Some(6));
}

#[tokio::test]
async fn server_side_apply_owns_fields_and_conflicts() {
    let env = Env::new("apply").await;
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
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let env = Env::new("finalizers").await;
    let cms: Api<ConfigMap> = env.api();
    let mut cm = configmap("held", &[]);
    cm.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();

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
    let mut refs = vec!["example.com/other".to_owned()];
    let (code, _) = api_error(
        cms.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"finalizers": ["example.com/hold", refs.pop().unwrap()]}}),
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
    let _ = created;
}

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

#[tokio::test]
async fn garbage_collection_follows_owner_references() {
    let env = Env::new("gc").await;
    if env
        .fake("garbage collection needs a controller-manager, not a bare API server")
        .is_none()
    {
        return;
    }
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
    assert!(
        cms.get_opt("child").await.unwrap().is_none(),
        "background: dependents go too"
    );

    let owner = cms
        .create(&PostParams::default(), &configmap("owner2", &[]))
        .await
        .unwrap();
    cms.create(&PostParams::default(), &owned_by("kept", &owner))
        .await
        .unwrap();
    cms.delete("owner2", &DeleteParams::orphan()).await.unwrap();
    let kept = cms.get("kept").await.unwrap();
    assert!(
        kept.metadata.owner_references.is_none(),
        "orphan: dependents lose the reference and stay"
    );
    assert!(cms.get_opt("owner2").await.unwrap().is_none());

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
    cms.patch(
        "held-child",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(
        cms.get_opt("owner3").await.unwrap().is_none(),
        "and goes once its dependents are gone"
    );
}

#[tokio::test]
async fn faults_and_recorded_actions() {
    let env = Env::new("faults").await;
    let Some(fake) = env.fake("faults are a control of the fake") else {
        return;
    };
    let cms: Api<ConfigMap> = env.api();
    fake.clear_actions();
    fake.fail(
        Matcher::new("create", "configmaps"),
        ApiError::internal("injected"),
        Some(1),
    );
    let (code, reason) = api_error(
        cms.create(&PostParams::default(), &configmap("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (500, "InternalError"));
    cms.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    cms.get("a").await.unwrap();
    let writes: Vec<(String, Option<String>)> = fake
        .writes()
        .into_iter()
        .map(|a| (a.verb, a.name))
        .collect();
    assert_eq!(writes, [("create".into(), None), ("create".into(), None)]);
    assert_eq!(fake.actions().len(), 3);
    fake.delay(
        Matcher::new("get", "*"),
        Duration::from_millis(200),
        Some(1),
    );
    let started = std::time::Instant::now();
    cms.get("a").await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn seeded_objects_keep_their_status() {
    let fake = FakeApiServer::new();
    fake.seed(Widget::crd()).unwrap();
    let mut w = Widget::new(
        "seeded",
        WidgetSpec {
            replicas: 1,
            color: "red".into(),
        },
    );
    w.metadata.namespace = Some("default".into());
    w.status = Some(WidgetStatus { ready: 3 });
    fake.seed(&w).unwrap();
    let read: Widget = fake
        .object(
            "contract.example.com/v1",
            "Widget",
            Some("default"),
            "seeded",
        )
        .unwrap();
    assert_eq!(read.status, Some(WidgetStatus { ready: 3 }));
    let docs = fake.seed_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n  namespace: default\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y2\n  namespace: default\n").unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(fake.list("v1", "ConfigMap", Some("default")).len(), 2);
}

#[tokio::test]
async fn streaming_lists_send_initial_events_then_a_bookmark() {
    let env = Env::new("streaming").await;
    let cms: Api<ConfigMap> = env.api();
    for name in ["a", "b"] {
        cms.create(&PostParams::default(), &configmap(name, &[]))
            .await
            .unwrap();
    }
    let (reader, writer) = kube::runtime::reflector::store();
    let stream = watcher(cms.clone(), watcher::Config::default().streaming_lists())
        .default_backoff()
        .reflect(writer);
    let task = tokio::spawn(stream.for_each(|_| async {}));
    tokio::time::timeout(Duration::from_secs(10), reader.wait_until_ready())
        .await
        .expect("ready")
        .unwrap();
    let mut names: Vec<String> = reader.state().iter().map(|c| c.name_any()).collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    task.abort();
}

#[tokio::test]
async fn watches_end_at_their_timeout_and_deliver_bookmarks() {
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        bookmark_interval: Duration::from_millis(100),
        ..Default::default()
    });
    let cms: Api<ConfigMap> = Api::namespaced(Client::new(fake.clone(), "default"), "default");
    let started = std::time::Instant::now();
    let events: Vec<_> = cms
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        started.elapsed() >= Duration::from_millis(900)
            && started.elapsed() < Duration::from_secs(5)
    );
    let bookmarks = events
        .iter()
        .filter(|e| matches!(e, Ok(WatchEvent::Bookmark(_))))
        .count();
    assert!(
        bookmarks >= 5,
        "{bookmarks} bookmarks in a 1s watch with a 100ms interval"
    );
}

#[tokio::test]
async fn delete_collection_and_kind_specific_field_selectors() {
    let env = Env::new("collection").await;
    let cms: Api<ConfigMap> = env.api();
    for (name, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
        cms.create(&PostParams::default(), &configmap(name, &[("app", app)]))
            .await
            .unwrap();
    }
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=x"),
    )
    .await
    .unwrap();
    let left: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(left, ["c"]);

    let pods: Api<k8s_openapi::api::core::v1::Pod> = env.api();
    for (name, node) in [("p1", "node-a"), ("p2", "node-b")] {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    let on_a = pods
        .list(&ListParams::default().fields("spec.nodeName=node-a"))
        .await
        .unwrap();
    assert_eq!(
        on_a.items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["p1"]
    );
    let pending = pods
        .list(&ListParams::default().fields("status.phase=Pending"))
        .await
        .unwrap();
    assert_eq!(pending.items.len(), 2, "a created pod is Pending");
}
