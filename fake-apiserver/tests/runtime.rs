//! kube's runtime, unchanged, on the in-process server: `Controller`, `finalizer` and
//! `events::Recorder`.

use std::sync::Arc;
use std::time::Duration;

use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

async fn wait_for<F: Fn() -> bool>(condition: F) {
    for _ in 0..200 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("condition not met within 10s");
}

#[derive(Debug)]
struct ReconcileError(String);

impl std::fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReconcileError {}

struct Ctx {
    client: Client,
    recorder: Recorder,
}

/// Marks every ConfigMap `seen=true`, with a finalizer that records an event on cleanup.
async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, finalizer_error::Error> {
    let ns = cm.namespace().unwrap_or_default();
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &ns);
    finalizer(&api, "example.com/cleanup", cm, |event| async {
        match event {
            Finalizer::Apply(cm) => {
                if cm.labels().get("seen").map(String::as_str) != Some("true") {
                    let patch = json!({"metadata": {"labels": {"seen": "true"}}});
                    api.patch(
                        &cm.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(patch),
                    )
                    .await
                    .map_err(|e| ReconcileError(e.to_string()))?;
                }
                Ok(Action::await_change())
            }
            Finalizer::Cleanup(cm) => {
                let event = Event {
                    type_: EventType::Normal,
                    reason: "CleanedUp".into(),
                    note: Some(format!("cleaned up {}", cm.name_any())),
                    action: "Cleanup".into(),
                    secondary: None,
                };
                ctx.recorder
                    .publish(&event, &cm.object_ref(&()))
                    .await
                    .map_err(|e| ReconcileError(e.to_string()))?;
                Ok(Action::await_change())
            }
        }
    })
    .await
}

mod finalizer_error {
    pub type Error = kube::runtime::finalizer::Error<super::ReconcileError>;
}

#[tokio::test]
async fn controller_finalizer_and_recorder_run_on_the_fake() {
    let fake = FakeApiServer::new();
    let client = Client::new(fake.clone(), "default");
    let reporter = Reporter {
        controller: "test-controller".into(),
        instance: None,
    };
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        recorder: Recorder::new(client.clone(), reporter),
    });
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let controller = Controller::new(cms.clone(), Default::default())
        .run(
            reconcile,
            |_, _, _| Action::requeue(Duration::from_secs(1)),
            ctx,
        )
        .for_each(|_| async {});
    let task = tokio::spawn(controller);

    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("watched".into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    wait_for(|| {
        fake.get("v1", "ConfigMap", Some("default"), "watched")
            .is_some_and(|o| {
                o["metadata"]["labels"]["seen"] == "true"
                    && o["metadata"]["finalizers"] == json!(["example.com/cleanup"])
            })
    })
    .await;

    cms.delete("watched", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(|| {
        fake.get("v1", "ConfigMap", Some("default"), "watched")
            .is_none()
    })
    .await;
    let events = fake.list("events.k8s.io/v1", "Event", Some("default"));
    assert!(
        events
            .iter()
            .any(|e| e["reason"] == "CleanedUp" && e["regarding"]["name"] == "watched"),
        "{events:#?}"
    );
    task.abort();
}
