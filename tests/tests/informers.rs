//! Informers, listers and the factory on the fake API server, through the real client.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::{FakeApiServer, Matcher};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::Selector;
use kube::runtime::controller::{Action, Controller};
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{Handlers, SharedInformerFactory};
use serde_json::json;
use support::wait_for;

fn configmap(ns: &str, name: &str, app: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = Some(ns.into());
    cm.metadata.labels = Some(BTreeMap::from([("app".into(), app.into())]));
    cm
}

fn setup() -> (FakeApiServer, Client) {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "default");
    (fake, client)
}

type Log = Arc<Mutex<Vec<String>>>;

fn recording() -> (Log, Handlers<ConfigMap>) {
    let log: Log = Arc::default();
    let (a, u, d) = (log.clone(), log.clone(), log.clone());
    let handlers = Handlers::new()
        .on_add(move |o: &Arc<ConfigMap>| a.lock().unwrap().push(format!("add {}", o.name_any())))
        .on_update(move |old: &Arc<ConfigMap>, new: &Arc<ConfigMap>| {
            let v = |c: &ConfigMap| {
                c.data
                    .as_ref()
                    .and_then(|d| d.get("v").cloned())
                    .unwrap_or_default()
            };
            u.lock()
                .unwrap()
                .push(format!("update {} {}->{}", new.name_any(), v(old), v(new)));
        })
        .on_delete(move |o: &Arc<ConfigMap>| {
            d.lock().unwrap().push(format!("delete {}", o.name_any()))
        });
    (log, handlers)
}

#[tokio::test]
async fn handlers_see_add_update_delete_in_order() {
    let (_fake, client) = setup();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    let (log, handlers) = recording();
    informer.add_event_handler(handlers);
    factory.start();
    assert!(
        factory
            .wait_for_cache_sync(Duration::from_secs(5))
            .await
            .values()
            .all(|s| *s)
    );

    let api: Api<ConfigMap> = Api::namespaced(client, "a");
    api.create(&PostParams::default(), &configmap("a", "x", "web"))
        .await
        .unwrap();
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await
    .unwrap();
    api.delete("x", &DeleteParams::default()).await.unwrap();
    wait_for("three events", || log.lock().unwrap().len() == 3).await;
    assert_eq!(*log.lock().unwrap(), ["add x", "update x ->2", "delete x"]);
    factory.shutdown().await;
}

#[tokio::test]
async fn consumers_share_one_watch_and_the_same_informer() {
    let (fake, client) = setup();
    let factory = SharedInformerFactory::new(client);
    let first = factory.informer::<ConfigMap>();
    let second = factory.informer::<ConfigMap>();
    let (log1, h1) = recording();
    let (log2, h2) = recording();
    first.add_event_handler(h1);
    second.add_event_handler(h2);
    let mut stream = second.subscribe().boxed();
    factory.start();
    factory.start(); // idempotent
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    fake.seed(configmap("a", "x", "web")).unwrap();
    wait_for("both handlers", || {
        log1.lock().unwrap().len() == 1 && log2.lock().unwrap().len() == 1
    })
    .await;
    assert_eq!(stream.next().await.unwrap().name_any(), "x");
    let watches = fake
        .actions()
        .iter()
        .filter(|a| a.verb == "watch" && a.resource == "configmaps")
        .count();
    let lists = fake
        .actions()
        .iter()
        .filter(|a| a.verb == "list" && a.resource == "configmaps")
        .count();
    assert_eq!(
        (lists, watches),
        (1, 1),
        "one list and one watch for every consumer"
    );
    factory.shutdown().await;
}

#[tokio::test]
async fn cache_sync_waits_for_the_initial_list() {
    let (fake, client) = setup();
    for i in 0..3 {
        fake.seed(configmap("a", &format!("cm{i}"), "web")).unwrap();
    }
    fake.delay(
        Matcher::new("list", "configmaps"),
        Duration::from_millis(300),
        Some(1),
    );
    let factory = SharedInformerFactory::new(client);
    let lister = factory.informer::<ConfigMap>().lister();
    factory.start();
    assert!(
        lister.list(&Selector::default()).is_empty(),
        "nothing is cached before the list returns"
    );
    let synced = factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    assert_eq!(
        synced.into_iter().collect::<Vec<_>>(),
        [("configmaps.v1".to_owned(), true)]
    );
    assert_eq!(lister.list(&Selector::default()).len(), 3);
    factory.shutdown().await;
}

#[tokio::test]
async fn wait_for_cache_sync_reports_an_informer_that_cannot_sync() {
    let (fake, client) = setup();
    fake.fail(
        Matcher::new("list", "configmaps"),
        fake_apiserver::ApiError::internal("down"),
        None,
    );
    let factory = SharedInformerFactory::new(client);
    factory.informer::<ConfigMap>();
    factory.start();
    let synced = factory
        .wait_for_cache_sync(Duration::from_millis(300))
        .await;
    assert_eq!(synced.get("configmaps.v1"), Some(&false));
    factory.shutdown().await;
}

#[tokio::test]
async fn listers_filter_by_namespace_label_and_index() {
    let (fake, client) = setup();
    for (ns, name, app) in [("a", "x", "web"), ("a", "y", "db"), ("b", "x", "web")] {
        fake.seed(configmap(ns, name, app)).unwrap();
    }
    let factory = SharedInformerFactory::new(client);
    let informer = factory.informer::<ConfigMap>();
    informer.add_indexer("by-app", |cm: &ConfigMap| {
        cm.labels().get("app").cloned().into_iter().collect()
    });
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let lister = informer.lister();
    let names = |v: Vec<Arc<ConfigMap>>| {
        v.iter()
            .map(|o| format!("{}/{}", o.namespace().unwrap(), o.name_any()))
            .collect::<Vec<_>>()
    };
    let web: Selector = [("app", "web")].into_iter().collect();
    assert_eq!(names(lister.list(&web)), ["a/x", "b/x"]);
    assert_eq!(
        names(lister.namespace("a").list(&Selector::default())),
        ["a/x", "a/y"]
    );
    assert_eq!(names(lister.namespace("a").list(&web)), ["a/x"]);
    assert_eq!(lister.namespace("b").get("x").unwrap().name_any(), "x");
    let missing = lister.namespace("b").get("y").unwrap_err();
    assert_eq!(
        missing.to_string(),
        "configmaps \"y\" not found in namespace \"b\" (in the informer cache)"
    );
    assert_eq!(names(lister.by_index("by-app", "db")), ["a/y"]);
    factory.shutdown().await;
}

#[tokio::test]
async fn indices_follow_later_changes_and_re_lists() {
    let (fake, client) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    informer.add_indexer("by-app", |cm: &ConfigMap| {
        cm.labels().get("app").cloned().into_iter().collect()
    });
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let lister = informer.lister();
    let in_a = || {
        let mut v: Vec<String> = lister
            .namespace("a")
            .list(&Selector::default())
            .iter()
            .map(|o| o.name_any())
            .collect();
        v.sort();
        v
    };
    let web = || lister.by_index("by-app", "web").len();
    // First queries build the indices from the cache.
    assert_eq!((in_a(), web()), (vec!["x".to_owned()], 1));
    // Built indices follow adds, label changes and deletes.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "a");
    cms.create(&PostParams::default(), &configmap("a", "y", "web"))
        .await
        .unwrap();
    wait_for("y indexed", || in_a().len() == 2 && web() == 2).await;
    cms.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
    )
    .await
    .unwrap();
    wait_for("x re-indexed", || web() == 1).await;
    cms.delete("y", &DeleteParams::default()).await.unwrap();
    wait_for("y gone", || in_a() == ["x"] && web() == 0).await;
    // A re-list (410) starts the indices over; their next query sees the new cache.
    fake.expire_watches();
    cms.create(&PostParams::default(), &configmap("a", "z", "web"))
        .await
        .unwrap();
    wait_for("z after the re-list", || in_a() == ["x", "z"] && web() == 1).await;
    factory.shutdown().await;
}

#[tokio::test]
async fn resync_delivers_updates_for_every_cached_object() {
    let (fake, client) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::builder(client)
        .default_resync(Duration::from_millis(100))
        .build();
    let informer = factory.informer::<ConfigMap>();
    let (log, handlers) = recording();
    informer.add_event_handler(handlers);
    factory.start();
    wait_for("two resyncs", || {
        log.lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("update x"))
            .count()
            >= 2
    })
    .await;
    assert_eq!(log.lock().unwrap()[0], "add x");
    factory.shutdown().await;
}

#[tokio::test]
async fn dropped_and_expired_watches_recover_the_final_state_exactly() {
    let (fake, client) = setup();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    let (log, handlers) = recording();
    informer.add_event_handler(handlers);
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "a");
    api.create(&PostParams::default(), &configmap("a", "kept", "web"))
        .await
        .unwrap();
    api.create(&PostParams::default(), &configmap("a", "doomed", "web"))
        .await
        .unwrap();
    wait_for("two adds", || log.lock().unwrap().len() == 2).await;

    fake.drop_watches();
    api.patch(
        "kept",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "1"}})),
    )
    .await
    .unwrap();
    wait_for("update after a dropped watch", || {
        log.lock().unwrap().iter().any(|l| l == "update kept ->1")
    })
    .await;

    // While the watch is expired, one object changes and one is deleted: the re-list must
    // report both, with the deleted object's final state.
    fake.expire_watches();
    api.patch(
        "kept",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await
    .unwrap();
    api.delete("doomed", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("relist", || {
        log.lock().unwrap().iter().any(|l| l == "delete doomed")
    })
    .await;
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log.iter().filter(|l| l.starts_with("add")).count(),
        2,
        "no duplicate adds: {log:?}"
    );
    assert!(log.iter().any(|l| l == "update kept 1->2"), "{log:?}");
    let cached: Vec<String> = informer
        .lister()
        .list(&Selector::default())
        .iter()
        .map(|o| o.name_any())
        .collect();
    assert_eq!(cached, ["kept"]);
    factory.shutdown().await;
}

#[tokio::test]
async fn late_consumers_get_the_cached_objects_first() {
    let (fake, client) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::new(client);
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let (log, handlers) = recording();
    informer.add_event_handler(handlers);
    assert_eq!(*log.lock().unwrap(), ["add x"]);
    let mut stream = informer.subscribe().boxed();
    assert_eq!(stream.next().await.unwrap().name_any(), "x");
    factory.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_every_task_and_watch() {
    let (fake, client) = setup();
    let factory = SharedInformerFactory::new(client);
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    assert!(informer.is_running());
    let mut stream = informer.subscribe().boxed();
    factory.shutdown().await;
    assert!(!informer.is_running());
    assert!(stream.next().await.is_none(), "subscribed streams end");
    fake.seed(configmap("a", "after", "web")).unwrap(); // prunes closed watches
    assert_eq!(fake.open_watches(), 0);
}

#[tokio::test]
async fn a_controller_runs_on_the_factorys_shared_stream() {
    let (fake, client) = setup();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    let reconciled: Log = Arc::default();
    let seen = reconciled.clone();
    let controller = Controller::for_shared_stream(informer.subscribe(), informer.store())
        .run(
            move |cm: Arc<ConfigMap>, _ctx: Arc<()>| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(cm.name_any());
                    Ok::<_, kube::Error>(Action::await_change())
                }
            },
            |_, _, _| Action::await_change(),
            Arc::new(()),
        )
        .for_each(|_| async {});
    factory.start();
    let task = tokio::spawn(controller);
    fake.seed(configmap("a", "x", "web")).unwrap();
    wait_for("reconcile", || {
        reconciled.lock().unwrap().contains(&"x".to_owned())
    })
    .await;
    task.abort();
    factory.shutdown().await;
}

#[tokio::test]
async fn a_resource_known_at_run_time_gets_a_dynamic_informer() {
    let (fake, client) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::new(client);
    let informer = factory.for_resource("", "v1", "configmaps").await.unwrap();
    let again = factory.for_resource("", "v1", "configmaps").await.unwrap();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let names: Vec<String> = informer
        .lister()
        .list(&Selector::default())
        .iter()
        .map(|o| o.name_any())
        .collect();
    assert_eq!(names, ["x"]);
    assert!(again.has_synced(), "the same informer");
    assert!(factory.for_resource("", "v1", "nonsense").await.is_err());
    factory.shutdown().await;
}

#[tokio::test]
async fn an_informer_synced_while_nobody_waits_reports_it() {
    let (_fake, client) = setup();
    let factory = SharedInformerFactory::new(client);
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    wait_for("sync without a waiter", || informer.has_synced()).await;
    let synced = factory.wait_for_cache_sync(Duration::from_millis(10)).await;
    assert_eq!(synced.get("configmaps.v1"), Some(&true));
    factory.shutdown().await;
}

/// Errors other than 410 are waited on with the factory's backoff (here short), each one
/// counted; the informer recovers on its own once the server answers again.
#[tokio::test]
async fn watch_errors_are_counted_and_backed_off_with_the_factorys_backoff() {
    let (fake, client) = setup();
    fake.fail(
        Matcher::new("list", "configmaps"),
        fake_apiserver::ApiError::internal("down"),
        Some(4),
    );
    let factory = SharedInformerFactory::builder(client)
        .watch_backoff(Duration::from_millis(10), Duration::from_millis(40))
        .build();
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    assert!(informer.wait_for_sync(Duration::from_secs(5)).await);
    assert_eq!(informer.watch_errors(), 4);
    assert_eq!(factory.watch_errors(), [("configmaps.v1".to_owned(), 4)]);
    factory.shutdown().await;
}

/// A projection of ConfigMap: its metadata and the keys of its data, nothing else (serde
/// skips the rest), cached under ConfigMap's identity to save memory.
#[derive(Clone, Debug, serde::Deserialize)]
struct ConfigMapKeys {
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    #[serde(default)]
    data: BTreeMap<String, serde::de::IgnoredAny>,
}

impl kube::Resource for ConfigMapKeys {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;
    fn kind(dt: &()) -> std::borrow::Cow<'_, str> {
        <ConfigMap as kube::Resource>::kind(dt)
    }
    fn group(dt: &()) -> std::borrow::Cow<'_, str> {
        <ConfigMap as kube::Resource>::group(dt)
    }
    fn version(dt: &()) -> std::borrow::Cow<'_, str> {
        <ConfigMap as kube::Resource>::version(dt)
    }
    fn plural(dt: &()) -> std::borrow::Cow<'_, str> {
        <ConfigMap as kube::Resource>::plural(dt)
    }
    fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
        &mut self.metadata
    }
}

#[tokio::test]
async fn a_projection_of_a_kind_is_cached_and_listed_like_the_kind() {
    let (fake, client) = setup();
    let mut cm = configmap("a", "x", "web");
    cm.data = Some(BTreeMap::from([("k".into(), "a long value".into())]));
    fake.seed(cm).unwrap();
    fake.seed(configmap("b", "y", "db")).unwrap();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMapKeys>();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    let lister = informer.lister();
    let x = lister.namespace("a").get("x").unwrap();
    assert_eq!(x.data.keys().collect::<Vec<_>>(), ["k"]);
    assert!(
        x.metadata.managed_fields.is_none(),
        "the default transform runs too"
    );
    let web: Selector = [("app", "web")].into_iter().collect();
    assert_eq!(lister.list(&web).len(), 1);
    assert_eq!(lister.namespace("b").list(&Selector::default()).len(), 1);
    // Changes arrive as for the kind itself.
    let api: Api<ConfigMap> = Api::namespaced(client, "b");
    api.create(&PostParams::default(), &configmap("b", "z", "db"))
        .await
        .unwrap();
    wait_for("z cached", || lister.namespace("b").get("z").is_ok()).await;
    factory.shutdown().await;
}

/// What an informer of an older version of a kind expects: `spec.pvcName`, which objects
/// stored since the kind moved on do not have.
mod snapshots {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "decode.example.com",
        version = "v1",
        kind = "Snap",
        namespaced
    )]
    #[serde(rename_all = "camelCase")]
    pub struct SnapSpec {
        pub pvc_name: String,
    }
}

#[tokio::test]
async fn objects_that_do_not_decode_are_counted_and_the_cache_waits_for_them() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::CustomResourceExt;
    use kube::api::{ApiResource, DynamicObject};
    use snapshots::Snap;

    let (_fake, client) = setup();
    // The CRD keeps what the type does not require (a later schema of the kind, say).
    let mut crd = serde_json::to_value(Snap::crd()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    let resource = ApiResource::erase::<Snap>(&());
    let raw: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    for (name, spec) in [
        ("old", json!({"pvcName": "data"})),
        ("moved", json!({"source": "data"})),
    ] {
        let obj = json!({"apiVersion": "decode.example.com/v1", "kind": "Snap",
            "metadata": {"name": name}, "spec": spec});
        raw.create(
            &PostParams::default(),
            &serde_json::from_value(obj).unwrap(),
        )
        .await
        .unwrap();
    }
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<Snap>();
    factory.start();
    let synced = factory
        .wait_for_cache_sync(Duration::from_millis(1500))
        .await;
    assert_eq!(
        synced.get("snaps.decode.example.com/v1"),
        Some(&false),
        "{synced:?}"
    );
    // Retried (200 ms, doubling), each failure counted as a decode error too.
    assert!(
        informer.decode_errors() >= 2,
        "{}",
        informer.decode_errors()
    );
    assert_eq!(informer.decode_errors(), informer.watch_errors());
    // Once the object fits again, the informer syncs and caches both.
    raw.patch(
        "moved",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"pvcName": "data"}})),
    )
    .await
    .unwrap();
    let synced = factory.wait_for_cache_sync(Duration::from_secs(10)).await;
    assert_eq!(
        synced.get("snaps.decode.example.com/v1"),
        Some(&true),
        "{synced:?}"
    );
    assert_eq!(informer.store().state().len(), 2);
    factory.shutdown().await;
}
