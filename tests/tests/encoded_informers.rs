//! Encoded informers (metadata decoded, the rest kept as JSON), on the fake API server
//! through the real client.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::core::{PartialObjectMeta, Selector};
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{Encoded, Handlers, SharedInformerFactory};
use serde_json::json;
use support::wait_for;

fn setup() -> (FakeApiServer, Client) {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "default");
    (fake, client)
}

fn configmap(ns: &str, name: &str, app: &str, value: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "data": {"value": value}})
}

/// Applies a ConfigMap in `a` as `manager`, so the stored object has managedFields.
async fn apply(client: &Client, name: &str, value: &str) -> ConfigMap {
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .patch(
            name,
            &PatchParams::apply("owner"),
            &Patch::Apply(configmap("a", name, "web", value)),
        )
        .await
        .unwrap()
}

#[tokio::test]
async fn an_encoded_informer_caches_what_the_full_one_would_and_decodes_it_on_read() {
    let (fake, client) = setup();
    let stored = apply(&client, "x", "one").await;
    assert!(!stored.managed_fields().is_empty(), "the server keeps them");
    fake.seed(configmap("b", "y", "db", "two")).unwrap();
    let factory = SharedInformerFactory::new(client.clone());
    let encoded = factory.encoded_informer::<ConfigMap>();
    let full = factory.informer::<ConfigMap>();
    factory.start();
    let report = factory.wait_for_cache_sync(Duration::from_secs(10)).await;
    assert_eq!(
        report.into_iter().collect::<Vec<_>>(),
        [
            ("configmaps.v1".to_owned(), true),
            ("configmaps.v1 (encoded)".to_owned(), true)
        ]
    );

    let lister = encoded.lister();
    let x: Arc<Encoded<ConfigMap>> = lister.namespace("a").get("x").unwrap();
    assert_eq!(x.labels()["app"], "web");
    assert!(x.managed_fields().is_empty(), "dropped, as by the full one");
    let decoded = x.decode().unwrap();
    let cached_full = full.lister().namespace("a").get("x").unwrap();
    assert_eq!(
        &decoded,
        cached_full.as_ref(),
        "the object the full informer has"
    );
    assert_eq!(decoded.data.as_ref().unwrap()["value"], "one");
    let web = Selector::from_iter([("app", "web")]);
    assert_eq!(lister.list(&web).len(), 1);
    assert_eq!(lister.list(&Selector::default()).len(), 2);
    assert_eq!(lister.namespace("b").list(&Selector::default()).len(), 1);

    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let (updated, deleted) = (events.clone(), events.clone());
    encoded.add_event_handler(
        Handlers::new()
            .on_update(move |_, new: &Arc<Encoded<ConfigMap>>| {
                let value = new.decode().unwrap().data.unwrap()["value"].clone();
                updated
                    .lock()
                    .unwrap()
                    .push(format!("update {} {value}", new.name_any()));
            })
            .on_delete(move |old: &Arc<Encoded<ConfigMap>>| {
                deleted
                    .lock()
                    .unwrap()
                    .push(format!("delete {}", old.name_any()));
            }),
    );
    apply(&client, "x", "three").await;
    Api::<ConfigMap>::namespaced(client, "b")
        .delete("y", &DeleteParams::default())
        .await
        .unwrap();
    wait_for("x updated and y deleted", || {
        events.lock().unwrap().len() == 2
    })
    .await;
    assert_eq!(*events.lock().unwrap(), ["update x three", "delete y"]);
    let x = lister.namespace("a").get("x").unwrap();
    assert_eq!(x.decode().unwrap().data.unwrap()["value"], "three");
    assert!(lister.namespace("b").get("y").is_err());
    factory.shutdown().await;
}

#[tokio::test]
async fn a_kind_may_have_full_metadata_and_encoded_informers_each_with_its_own_watch() {
    let (fake, client) = setup();
    fake.seed(configmap("a", "x", "web", "one")).unwrap();
    let factory = SharedInformerFactory::new(client);
    let encoded = factory.encoded_informer::<ConfigMap>();
    assert_eq!(
        factory.encoded_informer::<ConfigMap>().name(),
        encoded.name(),
        "the same informer on every call"
    );
    let meta = factory.metadata_informer::<ConfigMap>();
    let full = factory.informer::<ConfigMap>();
    // Asked for through the generic accessor, the metadata-only and encoded types are the
    // same informers as their own accessors give, and neither finds nor replaces the full
    // one of the kind (the factory tells them apart by cached type).
    assert_eq!(
        factory.informer::<PartialObjectMeta<ConfigMap>>().name(),
        meta.name()
    );
    assert_eq!(
        factory.informer::<Encoded<ConfigMap>>().name(),
        encoded.name()
    );
    factory.start();
    let report = factory.wait_for_cache_sync(Duration::from_secs(10)).await;
    assert_eq!(
        report.keys().collect::<Vec<_>>(),
        [
            "configmaps.v1",
            "configmaps.v1 (encoded)",
            "configmaps.v1 (metadata)"
        ]
    );
    assert!(report.values().all(|ok| *ok));
    assert!(
        full.lister()
            .namespace("a")
            .get("x")
            .unwrap()
            .data
            .is_some()
    );
    let watches = fake
        .actions()
        .iter()
        .filter(|a| a.verb == "watch" && a.resource == "configmaps")
        .count();
    assert_eq!(watches, 3, "one watch per informer, three informers");
    factory.shutdown().await;
}

#[tokio::test]
async fn keeping_managed_fields_of_the_encoded_type_keeps_them_decoded() {
    let (_fake, client) = setup();
    let stored = apply(&client, "x", "one").await;
    let factory = SharedInformerFactory::builder(client)
        .keep_managed_fields_for::<Encoded<ConfigMap>>()
        .build();
    let encoded = factory.encoded_informer::<ConfigMap>();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(10)).await;
    let x = encoded.lister().namespace("a").get("x").unwrap();
    assert_eq!(x.managed_fields(), stored.managed_fields());
    assert_eq!(
        x.decode().unwrap().managed_fields(),
        stored.managed_fields()
    );
    factory.shutdown().await;
}
