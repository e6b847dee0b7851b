//! Watches: order, resuming from a version, streaming lists.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use crate::env::{RUN_LABEL, case, configmap, run_id};

#[tokio::test]
async fn watch_sees_changes_in_order_and_resumes_from_a_version() {
    case("watch", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let start = cms
            .list(&env.ours())
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
        let params = WatchParams::default()
            .timeout(5)
            .labels(&format!("{RUN_LABEL}={}", run_id()));
        let stream = cms.watch(&params, &start).await.unwrap();
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
    })
    .await;
}

#[tokio::test]
async fn streaming_lists_send_initial_events_then_a_bookmark() {
    case("streaming", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        for name in ["a", "b"] {
            cms.create(&PostParams::default(), &configmap(name, &[]))
                .await
                .unwrap();
        }
        let (reader, writer) = kube::runtime::reflector::store();
        let config = watcher::Config::default()
            .streaming_lists()
            .labels(&format!("{RUN_LABEL}={}", run_id()));
        let stream = watcher(cms.clone(), config)
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
    })
    .await;
}
