//! In-process throughput and memory of the fake API server, through the real `kube::Client`:
//! create (with a watch that must see every event), get, list and paginated list of N
//! ConfigMaps (default 10 000; `BENCH_OBJECTS` to change), on a current-thread runtime (what
//! `#[tokio::test]` runs) and on a two-worker runtime. Prints figures, then each target as
//! met or missed. Run with `cargo bench -p fake-apiserver --bench throughput`.

use std::time::{Duration, Instant};

mod common;

use common::{configmap, name, rss};
use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};

fn report(what: &str, n: usize, took: Duration) -> f64 {
    let rate = n as f64 / took.as_secs_f64();
    println!(
        "  {what:<30} {n:>7} in {:>8.1} ms  {rate:>10.0} /s",
        took.as_secs_f64() * 1000.0
    );
    rate
}

/// What one run measured.
struct Run {
    creates: f64,
    events: usize,
    gets: f64,
    /// Per-page time of the first and of the last page of a paginated list.
    first_page: Duration,
    last_page: Duration,
    /// Resident growth per stored object, and the objects' average JSON size.
    per_object: f64,
    json: f64,
}

async fn run(n: usize) -> Run {
    let server = FakeApiServer::with_config(fake_apiserver::Config {
        namespace_defaults: false,
        ..Default::default()
    });
    let client = kube::Client::new(server.clone(), "default");
    let api: Api<ConfigMap> = Api::default_namespaced(client);

    // A watch open during the creates: every event must reach it.
    let watch = api.watch(&WatchParams::default(), "0").await.unwrap();
    let watcher = tokio::spawn(async move {
        let mut seen = 0usize;
        let mut stream = watch.boxed();
        while let Some(Ok(event)) = stream.next().await {
            if matches!(event, WatchEvent::Added(_)) {
                seen += 1;
                if seen == n {
                    break;
                }
            }
        }
        seen
    });

    let before = rss();
    let started = Instant::now();
    for i in 0..n {
        api.create(&PostParams::default(), &configmap(i))
            .await
            .unwrap();
    }
    let events = tokio::time::timeout(Duration::from_secs(60), watcher)
        .await
        .map_or(0, |seen| seen.unwrap_or(0));
    let creates = report("create, every event watched", n, started.elapsed());
    let after = rss();
    println!("  {:<30} {events:>7}", "events received");

    let started = Instant::now();
    for i in 0..n {
        api.get(&name(i)).await.unwrap();
    }
    let gets = report("get", n, started.elapsed());

    let started = Instant::now();
    let all = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), n);
    report("list (one request)", n, started.elapsed());

    let started = Instant::now();
    let pages = common::page_tokens(&api).await;
    report(
        &format!("list (limit 500, {} pages)", pages.len()),
        n,
        started.elapsed(),
    );
    // The first and the last page again, a few times each: a page must cost the same
    // wherever it starts.
    let page_cost = |token: Option<String>| {
        let api = api.clone();
        async move {
            let started = Instant::now();
            for _ in 0..10 {
                api.list(&common::page(token.as_deref())).await.unwrap();
            }
            started.elapsed() / 10
        }
    };
    let first_page = page_cost(None).await;
    let last_page = page_cost(pages.last().cloned().flatten()).await;
    println!(
        "  {:<30} first {:.2} ms, last {:.2} ms",
        "one page of 500",
        first_page.as_secs_f64() * 1000.0,
        last_page.as_secs_f64() * 1000.0
    );

    let started = Instant::now();
    let selected = api
        .list(&ListParams::default().labels("app=app-3"))
        .await
        .unwrap();
    report(
        "list (label selector, matches)",
        selected.items.len(),
        started.elapsed(),
    );

    let stored = server.list("v1", "ConfigMap", Some("default"));
    let json = stored
        .iter()
        .map(|o| serde_json::to_vec(o).map_or(0, |b| b.len()))
        .sum::<usize>() as f64
        / stored.len().max(1) as f64;
    Run {
        creates,
        events,
        gets,
        first_page,
        last_page,
        per_object: after.saturating_sub(before) as f64 / n as f64,
        json,
    }
}

fn target(what: &str, met: bool, figure: String) -> bool {
    println!(
        "target {what:<58} {:<6} ({figure})",
        if met { "met" } else { "MISSED" }
    );
    met
}

fn main() {
    let n: usize = std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    println!("fake-apiserver in process, {n} ConfigMaps through kube::Client");
    println!("current-thread runtime (as #[tokio::test] runs):");
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(n));
    println!(
        "  memory: {:.0} bytes resident per stored object (object, watch history, action log, allocator), JSON {:.0} bytes",
        single.per_object, single.json
    );
    println!("two-worker runtime (client and server tasks hop threads):");
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(n));
    println!();
    let mut all = true;
    all &= target(
        ">= 50 000 gets/s (current-thread)",
        single.gets >= 50_000.0,
        format!("{:.0}/s; two workers {:.0}/s", single.gets, multi.gets),
    );
    all &= target(
        ">= 20 000 creates/s, every event watched (current-thread)",
        single.creates >= 20_000.0 && single.events == n,
        format!(
            "{:.0}/s, {} of {n} events; two workers {:.0}/s",
            single.creates, single.events, multi.creates
        ),
    );
    let ratio = single.last_page.as_secs_f64() / single.first_page.as_secs_f64().max(1e-9);
    all &= target(
        "last page of a list costs <= 1.5x the first",
        ratio <= 1.5,
        format!("{ratio:.2}x"),
    );
    all &= target(
        "resident memory per object <= JSON size + 2 KB",
        single.per_object <= single.json + 2048.0,
        format!(
            "{:.0} bytes, JSON {:.0} bytes: {:+.0}",
            single.per_object,
            single.json,
            single.per_object - single.json
        ),
    );
    println!(
        "{}",
        if all {
            "all targets met"
        } else {
            "some targets missed"
        }
    );
}
