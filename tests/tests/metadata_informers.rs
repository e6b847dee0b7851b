//! Metadata-only informers and the factory's default `managedFields` drop, on the fake API
//! server through the real client.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{PartialObjectMeta, Selector};
use kube::{Client, ResourceExt};
use kube_codegen_runtime::applyconfigurations::core::v1::extract_config_map;
use kube_codegen_runtime::{
    Handlers, InformerOptions, ManagedFieldsAside, SharedInformer, SharedInformerFactory,
};
use serde_json::json;
use support::wait_for;

/// The `Accept` header of every list and watch the client sent.
type Accepts = Arc<Mutex<Vec<(String, String)>>>;

/// A fake with namespaces `a` and `b`, and a client that records what each list and watch
/// asked the server for.
fn setup() -> (FakeApiServer, Client, Accepts) {
    let fake = support::fake();
    let accepts: Accepts = Arc::default();
    let seen = accepts.clone();
    let service = tower::ServiceBuilder::new()
        .map_request(move |req: http::Request<kube::client::Body>| {
            let accept = req
                .headers()
                .get(http::header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            seen.lock().unwrap().push((req.uri().to_string(), accept));
            req
        })
        .service(fake.clone());
    (fake, Client::new(service, "default"), accepts)
}

fn configmap(ns: &str, name: &str, app: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "data": {"big": "x".repeat(64)}})
}

async fn synced(factory: &SharedInformerFactory) -> BTreeMap<String, bool> {
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(10)).await
}

#[tokio::test]
async fn a_metadata_informer_lists_and_watches_metadata_only() {
    let (fake, client, accepts) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    fake.seed(configmap("b", "y", "db")).unwrap();
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.metadata_informer::<ConfigMap>();
    assert!(synced(&factory).await.values().all(|ok| *ok));

    let lister = informer.lister();
    let x: Arc<PartialObjectMeta<ConfigMap>> = lister.namespace("a").get("x").unwrap();
    assert_eq!(x.labels()["app"], "web");
    let web = Selector::from_iter([("app", "web")]);
    assert_eq!(lister.list(&web).len(), 1);
    assert_eq!(lister.list(&Selector::default()).len(), 2);

    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let (added, deleted) = (events.clone(), events.clone());
    informer.add_event_handler(
        Handlers::new()
            .on_add(move |o: &Arc<PartialObjectMeta<ConfigMap>>| {
                added.lock().unwrap().push(format!("add {}", o.name_any()));
            })
            .on_delete(move |o: &Arc<PartialObjectMeta<ConfigMap>>| {
                deleted
                    .lock()
                    .unwrap()
                    .push(format!("delete {}", o.name_any()));
            }),
    );
    fake.seed(configmap("a", "z", "web")).unwrap();
    Api::<ConfigMap>::namespaced(client, "b")
        .delete("y", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("z added and y deleted", || {
        events.lock().unwrap().len() == 4
    })
    .await;
    let mut events = events.lock().unwrap().clone();
    // A handler added after the sync gets the cache first, in no set order.
    events[..2].sort();
    assert_eq!(events, ["add x", "add y", "add z", "delete y"]);
    assert_eq!(lister.list(&web).len(), 2);

    let asked: Vec<_> = accepts
        .lock()
        .unwrap()
        .iter()
        .filter(|(uri, _)| uri.starts_with("/api/v1/configmaps"))
        .cloned()
        .collect();
    assert!(asked.len() >= 2, "a list and a watch: {asked:?}");
    for (uri, accept) in &asked {
        assert!(
            accept.contains("as=PartialObjectMetadata"),
            "{uri} asked for {accept:?}"
        );
    }
    factory.shutdown().await;
}

#[tokio::test]
async fn a_kind_may_have_a_full_and_a_metadata_informer_each_with_its_own_watch() {
    let (fake, client, _) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::new(client);
    let full = factory.informer::<ConfigMap>();
    let meta = factory.metadata_informer::<ConfigMap>();
    assert_eq!(
        factory.metadata_informer::<ConfigMap>().name(),
        meta.name(),
        "the same informer on every call"
    );
    let report = synced(&factory).await;
    assert_eq!(
        report.keys().collect::<Vec<_>>(),
        ["configmaps.v1", "configmaps.v1 (metadata)"]
    );
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert!(cached.data.is_some(), "the full informer caches data");
    assert!(meta.lister().namespace("a").get("x").is_ok());
    let watches = fake
        .actions()
        .iter()
        .filter(|a| a.verb == "watch" && a.resource == "configmaps")
        .count();
    assert_eq!(watches, 2);
    factory.shutdown().await;
}

#[tokio::test]
async fn a_resource_known_at_run_time_has_a_metadata_informer_too() {
    let (fake, client, _) = setup();
    fake.seed(configmap("a", "x", "web")).unwrap();
    let factory = SharedInformerFactory::new(client);
    let found = factory
        .metadata_for_resource("", "v1", "configmaps")
        .await
        .unwrap();
    let ar = ApiResource::erase::<ConfigMap>(&());
    let direct = factory.metadata_dynamic(ar, true);
    assert_eq!(found.name(), direct.name(), "one informer per resource");
    assert!(synced(&factory).await.values().all(|ok| *ok));
    let x = found.lister().namespace("a").get("x").unwrap();
    assert_eq!(x.labels()["app"], "web");
    factory.shutdown().await;
}

/// Applies `cm` in namespace `a` as `manager`, so the object has managedFields.
async fn apply(client: &Client, manager: &str, name: &str) {
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .patch(
            name,
            &PatchParams::apply(manager),
            &Patch::Apply(configmap("a", name, "web")),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn the_factory_drops_managed_fields_unless_a_kind_keeps_them() {
    let (_fake, client, _) = setup();
    apply(&client, "owner", "x").await;
    let fresh = Api::<ConfigMap>::namespaced(client.clone(), "a")
        .get("x")
        .await
        .unwrap();
    assert!(!fresh.managed_fields().is_empty(), "the server keeps them");

    let dropping = SharedInformerFactory::new(client.clone());
    let full = dropping.informer::<ConfigMap>();
    let meta = dropping.metadata_informer::<ConfigMap>();
    synced(&dropping).await;
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert!(cached.managed_fields().is_empty());
    assert_eq!(cached.data, fresh.data, "nothing else changes");
    let cached_meta = meta.lister().namespace("a").get("x").unwrap();
    assert!(cached_meta.managed_fields().is_empty());
    // What that means for extraction: nothing is found owned in the cached copy.
    let extracted = extract_config_map(&cached, "owner").unwrap();
    assert!(extracted.data.is_none());
    dropping.shutdown().await;

    let keeping = SharedInformerFactory::builder(client.clone())
        .keep_managed_fields_for::<ConfigMap>()
        .build();
    let full = keeping.informer::<ConfigMap>();
    let meta = keeping.metadata_informer::<ConfigMap>();
    synced(&keeping).await;
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert_eq!(cached.managed_fields(), fresh.managed_fields());
    let extracted = extract_config_map(&cached, "owner").unwrap();
    assert_eq!(extracted.data, fresh.data, "extracted from the cache");
    // Kept per cached type: the metadata-only informer of the same kind still drops them.
    let cached_meta = meta.lister().namespace("a").get("x").unwrap();
    assert!(cached_meta.managed_fields().is_empty());
    keeping.shutdown().await;
}

#[tokio::test]
async fn keeping_them_everywhere_and_a_kinds_own_transform() {
    let (_fake, client, _) = setup();
    apply(&client, "owner", "x").await;
    let factory = SharedInformerFactory::builder(client.clone())
        .keep_managed_fields()
        .transform_for::<PartialObjectMeta<ConfigMap>>(|m| {
            m.metadata.annotations = Some(BTreeMap::from([("seen".into(), "yes".into())]));
        })
        .build();
    let full = factory.informer::<ConfigMap>();
    let meta = factory.metadata_informer::<ConfigMap>();
    synced(&factory).await;
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert!(!cached.managed_fields().is_empty());
    let cached_meta = meta.lister().namespace("a").get("x").unwrap();
    assert!(!cached_meta.managed_fields().is_empty());
    assert_eq!(cached_meta.annotations()["seen"], "yes");
    factory.shutdown().await;
}

#[tokio::test]
async fn keeping_one_managers_entries_is_enough_to_extract_its_fields() {
    let (_fake, client, _) = setup();
    apply(&client, "owner", "x").await;
    // A second manager writes a field of its own.
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .patch(
            "x",
            &PatchParams {
                field_manager: Some("other".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"theirs": "1"}})),
        )
        .await
        .unwrap();
    let fresh = Api::<ConfigMap>::namespaced(client.clone(), "a")
        .get("x")
        .await
        .unwrap();
    let managers = |cm: &ConfigMap| -> Vec<String> {
        cm.managed_fields()
            .iter()
            .filter_map(|e| e.manager.clone())
            .collect()
    };
    assert_eq!(managers(&fresh), ["owner", "other"], "the server has both");

    let factory = SharedInformerFactory::builder(client.clone())
        .keep_managed_fields_of::<ConfigMap>(["owner"])
        .build();
    let full = factory.informer::<ConfigMap>();
    let meta = factory.metadata_informer::<ConfigMap>();
    synced(&factory).await;
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert_eq!(managers(&cached), ["owner"]);
    assert_eq!(cached.data, fresh.data, "nothing else changes");
    assert_eq!(
        extract_config_map(&cached, "owner").unwrap(),
        extract_config_map(&fresh, "owner").unwrap(),
        "extracted from the cache as from the server's copy"
    );
    assert!(
        extract_config_map(&cached, "other").unwrap().data.is_none(),
        "the other manager's fields are not found in the cache"
    );
    // Per cached type: the metadata-only informer of the kind still drops them all.
    let cached_meta = meta.lister().namespace("a").get("x").unwrap();
    assert!(cached_meta.managed_fields().is_empty());
    factory.shutdown().await;
}

#[tokio::test]
async fn entries_kept_aside_restore_for_extraction_and_go_with_the_object() {
    let (_fake, client, _) = setup();
    apply(&client, "owner", "x").await;
    let api = Api::<ConfigMap>::namespaced(client.clone(), "a");
    let fresh = api.get("x").await.unwrap();

    let aside = ManagedFieldsAside::new(["owner"]);
    let factory = SharedInformerFactory::builder(client.clone())
        .managed_fields_aside_for::<ConfigMap>(aside.clone())
        .build();
    let full = factory.informer::<ConfigMap>();
    synced(&factory).await;
    let cached = full.lister().namespace("a").get("x").unwrap();
    assert!(
        cached.managed_fields().is_empty(),
        "not on the cached object"
    );
    assert_eq!(aside.len(), 1);
    let restored = aside.restore(&*cached);
    assert_eq!(restored.managed_fields(), fresh.managed_fields());
    assert_eq!(
        extract_config_map(&restored, "owner").unwrap(),
        extract_config_map(&fresh, "owner").unwrap()
    );

    // A new version replaces them; the old version restores without them.
    apply_data(&client, "owner", "x", "v2").await;
    wait_for("the new version cached", || {
        full.lister().namespace("a").get("x").unwrap().data
            == Some(BTreeMap::from([("big".into(), "v2".into())]))
    })
    .await;
    let newer = full.lister().namespace("a").get("x").unwrap();
    assert_eq!(
        extract_config_map(&aside.restore(&*newer), "owner")
            .unwrap()
            .data,
        newer.data
    );
    assert!(aside.restore(&*cached).managed_fields().is_empty());

    api.delete("x", &DeleteParams::default()).await.unwrap();
    wait_for("forgotten with the object", || aside.is_empty()).await;
    factory.shutdown().await;
}

async fn apply_data(client: &Client, manager: &str, name: &str, value: &str) {
    let mut cm = configmap("a", name, "web");
    cm["data"]["big"] = json!(value);
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .patch(name, &PatchParams::apply(manager), &Patch::Apply(cm))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_informer_told_to_skip_managed_fields_decodes_without_them() {
    let (_fake, client, accepts) = setup();
    apply(&client, "owner", "x").await;
    let ar = ApiResource::erase::<ConfigMap>(&());
    let mut uris = Vec::new();
    for skip in [false, true] {
        // No transform: what is cached is what was decoded.
        let options = InformerOptions {
            skip_managed_fields: skip,
            ..InformerOptions::default()
        };
        let typed = SharedInformer::new(
            Api::<ConfigMap>::namespaced(client.clone(), "a"),
            options.clone(),
        );
        let dynamic = SharedInformer::new_with(
            Api::<PartialObjectMeta<DynamicObject>>::all_with(client.clone(), &ar),
            ar.clone(),
            InformerOptions {
                skip_managed_fields: skip,
                ..InformerOptions::default()
            },
        );
        accepts.lock().unwrap().clear();
        typed.start();
        dynamic.start();
        assert!(typed.wait_for_sync(Duration::from_secs(10)).await);
        assert!(dynamic.wait_for_sync(Duration::from_secs(10)).await);
        let cm = typed.lister().namespace("a").get("x").unwrap();
        assert_eq!(cm.managed_fields().is_empty(), skip, "skip {skip}");
        assert_eq!(cm.data.as_ref().unwrap()["big"], "x".repeat(64));
        let meta = dynamic.lister().namespace("a").get("x").unwrap();
        assert_eq!(meta.managed_fields().is_empty(), skip, "skip {skip}");
        assert_eq!(meta.labels()["app"], "web");
        typed.shutdown().await;
        dynamic.shutdown().await;
        let mut asked: Vec<_> = accepts.lock().unwrap().clone();
        asked.sort();
        uris.push(asked);
    }
    // The same lists and watches, with the same Accept headers, either way.
    let shape = |asked: &Vec<(String, String)>| -> Vec<(String, String)> {
        asked
            .iter()
            .map(|(uri, accept)| (uri.split('?').next().unwrap().to_owned(), accept.clone()))
            .collect()
    };
    assert_eq!(shape(&uris[0]), shape(&uris[1]));
    assert!(
        uris[1]
            .iter()
            .any(|(uri, accept)| uri.starts_with("/api/v1/configmaps")
                && accept.contains("as=PartialObjectMetadata")),
        "{:?}",
        uris[1]
    );
    assert!(
        uris[1]
            .iter()
            .any(|(uri, _)| uri.starts_with("/api/v1/namespaces/a/configmaps")),
        "{:?}",
        uris[1]
    );
}
