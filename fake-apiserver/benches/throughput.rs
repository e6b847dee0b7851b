//! In-process throughput and memory of the fake API server, through the real `kube::Client`:
//! create, get, list and watch of N ConfigMaps (default 10 000; `BENCH_OBJECTS` to change).
//! Prints figures and rates; run with `cargo bench -p fake-apiserver --bench throughput`.

use std::collections::BTreeMap;
use std::time::Instant;

use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};

/// Resident memory of this process, in bytes (Linux).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

fn configmap(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("cm-{i:06}"));
    cm.metadata.labels = Some(BTreeMap::from([("app".into(), format!("app-{}", i % 10))]));
    cm.data = Some(BTreeMap::from([("key".into(), "value".repeat(8))]));
    cm
}

fn report(what: &str, n: usize, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{what:<28} {n:>7} in {:>8.1} ms  {:>10.0} /s",
        secs * 1000.0,
        n as f64 / secs
    );
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let server = FakeApiServer::new();
    let client = kube::Client::new(server.clone(), "default");
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    println!("fake-apiserver in process, {n} ConfigMaps through kube::Client");

    // A watch open during the creates: how fast events reach a watcher.
    let watch = api.watch(&WatchParams::default(), "0").await.unwrap();
    let watcher = tokio::spawn(async move {
        let mut seen = 0usize;
        let started = Instant::now();
        let mut stream = watch.boxed();
        while let Some(Ok(event)) = stream.next().await {
            if matches!(event, WatchEvent::Added(_)) {
                seen += 1;
                if seen == n {
                    break;
                }
            }
        }
        (seen, started)
    });

    let before = rss();
    let started = Instant::now();
    for i in 0..n {
        api.create(&PostParams::default(), &configmap(i))
            .await
            .unwrap();
    }
    report("create", n, started);
    let after = rss();
    let (seen, watch_started) = watcher.await.unwrap();
    report("watch (events received)", seen, watch_started);

    let started = Instant::now();
    for i in 0..n {
        api.get(&format!("cm-{i:06}")).await.unwrap();
    }
    report("get", n, started);

    let started = Instant::now();
    let all = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), n);
    report("list (one request, items)", n, started);

    let started = Instant::now();
    let mut pages = 0;
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.unwrap();
        pages += 1;
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    report(&format!("list (limit 500, {pages} pages)"), n, started);

    let started = Instant::now();
    let selected = api
        .list(&ListParams::default().labels("app=app-3"))
        .await
        .unwrap();
    report(
        "list (label selector, items)",
        selected.items.len(),
        started,
    );

    let per_object = after.saturating_sub(before) as f64 / n as f64;
    println!(
        "memory: {:.1} MiB resident growth over {n} objects, {per_object:.0} bytes per stored object (with history)",
        (after - before.min(after)) as f64 / 1048576.0
    );
    println!(
        "stored objects: {}, resourceVersion: {}",
        server.object_count(),
        server.resource_version()
    );
}
