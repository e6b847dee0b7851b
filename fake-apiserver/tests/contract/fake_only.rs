//! The fake's own test controls: faults, recorded actions, seeding, compaction, dropped
//! and lagging watches, the bookmark interval. A real cluster has none of these, so these
//! cases always run against the fake.

use std::time::Duration;

use fake_apiserver::{ApiError, FakeApiServer, Matcher};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResourceExt};

use crate::env::{api_error, configmap};
use crate::{Widget, WidgetSpec, WidgetStatus};

fn default_ns(fake: &FakeApiServer) -> Api<ConfigMap> {
    Api::namespaced(Client::new(fake.clone(), "default"), "default")
}

#[tokio::test]
async fn fake_only_faults_and_recorded_actions() {
    let fake = FakeApiServer::new();
    let cms = default_ns(&fake);
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
async fn fake_only_seeded_objects_keep_their_status() {
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
    let before = fake.list("v1", "ConfigMap", Some("default")).len();
    let docs = fake.seed_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n  namespace: default\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y2\n  namespace: default\n").unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(
        fake.list("v1", "ConfigMap", Some("default")).len(),
        before + 2
    );
}

#[tokio::test]
async fn fake_only_a_compacted_resource_version_is_gone() {
    let fake = FakeApiServer::new();
    let cms = default_ns(&fake);
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
async fn fake_only_the_runtime_watcher_relists_after_gone_and_dropped_watches() {
    let fake = FakeApiServer::new();
    let cms = default_ns(&fake);
    let (reader, writer) = kube::runtime::reflector::store();
    let stream = watcher(
        cms.clone(),
        watcher::Config::default().labels("kube-codegen.dev/contract"),
    )
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

#[tokio::test]
async fn fake_only_watches_end_at_their_timeout_and_deliver_bookmarks() {
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        bookmark_interval: Duration::from_millis(100),
        ..Default::default()
    });
    let cms = default_ns(&fake);
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

/// The next event of a watch, or a failure naming what was awaited (never a hang).
async fn next_event<K: Clone + serde::de::DeserializeOwned + std::fmt::Debug>(
    events: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<K>>> + Unpin),
    what: &str,
) -> WatchEvent<K> {
    match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
        Ok(Some(event)) => event.unwrap(),
        Ok(None) => panic!("the watch ended before {what}"),
        Err(_) => panic!("no event within 20s while waiting for {what}"),
    }
}

/// Reads ConfigMap events until `name` is added, with each one's arrival (since `since`).
async fn until_added(
    events: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin),
    name: &str,
    since: std::time::Instant,
) -> Vec<(Duration, WatchEvent<ConfigMap>)> {
    let mut seen = Vec::new();
    loop {
        let event = next_event(events, name).await;
        let done =
            matches!(&event, WatchEvent::Added(cm) if cm.metadata.name.as_deref() == Some(name));
        seen.push((since.elapsed(), event));
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn fake_only_lagged_watches_deliver_late_in_order_and_only_for_their_resource() {
    use k8s_openapi::api::core::v1::Secret;
    const LAG: Duration = Duration::from_secs(2);
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        bookmark_interval: Duration::from_millis(50),
        ..Default::default()
    });
    let client = Client::new(fake.clone(), "default");
    let cms = default_ns(&fake);
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let params = WatchParams::default().timeout(60);
    // Both watches open before the lag: it applies to open watches too.
    let mut cm_events = cms.watch(&params, "0").await.unwrap().boxed();
    let mut secret_events = secrets.watch(&params, "0").await.unwrap().boxed();
    // The namespace's own kube-root-ca.crt is the ConfigMap watch's initial event.
    until_added(
        &mut cm_events,
        "kube-root-ca.crt",
        std::time::Instant::now(),
    )
    .await;
    fake.lag_watches("configmaps", LAG);
    let created = std::time::Instant::now();
    for name in ["first", "second"] {
        cms.create(&PostParams::default(), &configmap(name, &[]))
            .await
            .unwrap();
    }
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("unlagged".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    // The Secrets' watch is not lagged: its event comes while the ConfigMaps' are held.
    loop {
        match next_event(&mut secret_events, "the Secret").await {
            WatchEvent::Added(s) => {
                assert_eq!(s.metadata.name.as_deref(), Some("unlagged"));
                break;
            }
            WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        created.elapsed() < LAG,
        "the Secret came {:?} after",
        created.elapsed()
    );
    let events = until_added(&mut cm_events, "second", created).await;
    let rv = |meta: &kube::api::ObjectMeta| -> u64 {
        meta.resource_version.as_deref().unwrap().parse().unwrap()
    };
    let mut names = Vec::new();
    let mut last_rv = 0;
    for (at, event) in &events {
        if let WatchEvent::Added(cm) = event {
            assert!(*at >= LAG, "delivered {at:?} after the create");
            names.push(cm.metadata.name.clone().unwrap());
            last_rv = rv(&cm.metadata);
        }
    }
    assert_eq!(names, ["first", "second"]);
    // No bookmark before the held-back events says the watch is past them.
    for (_, event) in &events {
        match event {
            WatchEvent::Added(_) => break,
            WatchEvent::Bookmark(b) => assert!(
                b.metadata.resource_version.parse::<u64>().unwrap() < last_rv,
                "a bookmark ahead of held-back events: {events:?}"
            ),
            other => panic!("unexpected {other:?}"),
        }
    }
    // Removing the lag sends what is held back at once, even to a watch with nothing else
    // to wake it (no bookmarks, no other event).
    let mut quiet = cms
        .watch(&params.clone().disable_bookmarks(), "0")
        .await
        .unwrap()
        .boxed();
    let created = std::time::Instant::now();
    cms.create(&PostParams::default(), &configmap("third", &[]))
        .await
        .unwrap();
    let waiting = tokio::spawn(async move { until_added(&mut quiet, "third", created).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    fake.lag_watches("configmaps", Duration::ZERO);
    waiting.await.unwrap();
    assert!(
        created.elapsed() < LAG * 3 / 4,
        "held back {:?} after the lag was removed",
        created.elapsed()
    );
}

#[tokio::test]
async fn fake_only_the_action_log_keeps_only_the_newest_requests() {
    use tower::ServiceExt;
    const BOUND: usize = 1_000;
    const REQUESTS: usize = 100_000;
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        action_log: BOUND,
        ..Default::default()
    });
    // 100k requests with no objects behind them: GETs of a name that does not exist, sent
    // straight to the server's `tower::Service` (the path `kube::Client` takes).
    for i in 0..REQUESTS {
        let req = http::Request::get(format!("/api/v1/namespaces/default/configmaps/gone-{i}"))
            .body(String::new())
            .unwrap();
        let resp = fake.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), 404);
    }
    let actions = fake.actions();
    assert_eq!(actions.len(), BOUND);
    assert_eq!(fake.actions_dropped(), (REQUESTS - BOUND) as u64);
    // The newest are kept, in order.
    assert_eq!(
        actions.last().and_then(|a| a.name.as_deref()),
        Some(format!("gone-{}", REQUESTS - 1).as_str())
    );
    assert_eq!(
        actions.first().and_then(|a| a.name.as_deref()),
        Some(format!("gone-{}", REQUESTS - BOUND).as_str())
    );
    fake.clear_actions();
    assert_eq!((fake.actions().len(), fake.actions_dropped()), (0, 0));

    // A log of 0 records nothing and counts what it did not keep.
    let silent = FakeApiServer::with_config(fake_apiserver::Config {
        action_log: 0,
        ..Default::default()
    });
    let _ = default_ns(&silent).get_opt("x").await.unwrap();
    assert_eq!((silent.actions().len(), silent.actions_dropped()), (0, 1));
}
