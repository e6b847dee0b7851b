//! The runtime's event recorder on the fake API server through the real client: repeats
//! become a series on the first Event, and the bounded cache forgets the least recently
//! sent.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::Client;
use kube::api::{Api, ListParams};
use kube_codegen_runtime::events::{Event, EventType, Recorder, Reporter};
use serde_json::json;

fn setup() -> (FakeApiServer, Client) {
    let fake = FakeApiServer::new();
    fake.seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
        .unwrap();
    let client = Client::new(fake.clone(), "default");
    (fake, client)
}

fn synced() -> Event {
    Event {
        type_: EventType::Normal,
        reason: "Synced".into(),
        note: Some("synced".into()),
        action: "Reconcile".into(),
        secondary: None,
    }
}

fn object(name: &str, rv: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        namespace: Some("a".into()),
        name: Some(name.into()),
        uid: Some(format!("uid-{name}")),
        resource_version: Some(rv.into()),
        ..ObjectReference::default()
    }
}

fn reporter() -> Reporter {
    Reporter {
        controller: "tester".into(),
        instance: None,
    }
}

/// Publishes a `Synced` event about ConfigMap `name` at `rv` and waits for the server.
async fn send(recorder: &Recorder, name: &str, rv: &str) {
    recorder
        .publish(&synced(), &object(name, rv))
        .await
        .unwrap();
}

/// The Events in `a`, as (regarding name, series count or 1).
async fn events(client: &Client) -> Vec<(String, i32)> {
    let mut out: Vec<(String, i32)> = Api::<K8sEvent>::namespaced(client.clone(), "a")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| {
            (
                e.regarding.and_then(|r| r.name).unwrap_or_default(),
                e.series.map_or(1, |s| s.count),
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn a_repeat_is_a_series_on_the_first_event() {
    let (_fake, client) = setup();
    let recorder = Recorder::new(client.clone(), reporter());
    send(&recorder, "x", "1").await;
    // A later version of the same object: the same series.
    send(&recorder, "x", "2").await;
    send(&recorder, "x", "3").await;
    send(&recorder, "y", "1").await;
    assert_eq!(events(&client).await, [("x".into(), 3), ("y".into(), 1)]);
    let first = Api::<K8sEvent>::namespaced(client.clone(), "a")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|e| e.series.is_some())
        .unwrap();
    assert_eq!(first.reporting_controller.as_deref(), Some("tester"));
    assert_eq!(first.reporting_instance.as_deref(), Some("tester"));
    assert_eq!(first.reason.as_deref(), Some("Synced"));
    assert_eq!(first.type_.as_deref(), Some("Normal"));
    assert_eq!(recorder.remembered(), 2);
}

#[tokio::test]
async fn past_its_capacity_or_window_a_repeat_is_a_new_event() {
    let (_fake, client) = setup();
    let recorder = Recorder::new(client.clone(), reporter()).with_capacity(1);
    send(&recorder, "x", "1").await;
    send(&recorder, "y", "1").await;
    assert_eq!(recorder.remembered(), 1, "bounded");
    // `x` was forgotten: its repeat starts a new Event; `y`'s continues its series.
    send(&recorder, "x", "2").await;
    assert_eq!(
        events(&client).await,
        [("x".into(), 1), ("x".into(), 1), ("y".into(), 1)]
    );

    let short =
        Recorder::new(client.clone(), reporter()).with_series_window(Duration::from_millis(1));
    send(&short, "z", "1").await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    send(&short, "z", "1").await;
    let z: Vec<_> = events(&client)
        .await
        .into_iter()
        .filter(|(n, _)| n == "z")
        .collect();
    assert_eq!(z, [("z".into(), 1), ("z".into(), 1)]);
}

#[tokio::test]
async fn a_deleted_first_event_starts_a_new_series() {
    let (_fake, client) = setup();
    let recorder = Recorder::new(client.clone(), reporter());
    send(&recorder, "x", "1").await;
    let api = Api::<K8sEvent>::namespaced(client.clone(), "a");
    api.delete_collection(&Default::default(), &ListParams::default())
        .await
        .unwrap();
    send(&recorder, "x", "2").await;
    assert_eq!(events(&client).await, [("x".into(), 1)]);
}

#[tokio::test]
async fn published_in_the_background_in_order_and_dropped_past_the_queue() {
    let (_fake, client) = setup();
    let recorder = Recorder::new(client.clone(), reporter());
    for rv in 1..=3 {
        recorder.publish_in_background(synced(), object("x", &rv.to_string()));
    }
    recorder.publish_in_background(synced(), object("y", "1"));
    // All sent once flush returns.
    tokio::time::timeout(Duration::from_secs(10), recorder.flush())
        .await
        .unwrap();
    assert_eq!(events(&client).await, [("x".into(), 3), ("y".into(), 1)]);
    // Nothing queued: it returns at once.
    recorder.flush().await;
    assert_eq!(recorder.dropped(), 0);
}

#[test]
fn outside_a_runtime_a_background_event_is_dropped_not_a_panic() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_fake, client) = runtime.block_on(async { setup() });
    let recorder = runtime.block_on(async { Recorder::new(client, reporter()) });
    recorder.publish_in_background(synced(), object("x", "1"));
    assert_eq!(recorder.dropped(), 1);
    // Inside one later, it publishes.
    runtime.block_on(async {
        recorder.publish_in_background(synced(), object("y", "1"));
        for _ in 0..200 {
            if recorder.remembered() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    assert_eq!(recorder.remembered(), 1);
    assert_eq!(recorder.dropped(), 1);
}
