//! Whether the fake API server stays flat as it fills: memory per stored object and the
//! latency of a get, of one list page and of a watch event, at 10 000 and at 100 000
//! ConfigMaps (`BENCH_SCALE_SIZES`, comma-separated, to change), each size in a fresh process
//! so freed memory of one size cannot hide the next one's growth. Through the real
//! `kube::Client` on a current-thread runtime, as `#[tokio::test]` runs it. Prints each size's
//! figures, then one line per figure comparing the largest size with the smallest,
//! `fake-<figure>: <small> <value>, <large> <value>, ratio <large/small>`, and each target
//! as met or missed. Run with `cargo bench -p fake-apiserver --bench scale`.

use std::time::{Duration, Instant};

mod common;

use common::{configmap, name, rss};
use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};

/// The environment variable a child process reads its size from.
const CHILD: &str = "KCG_SCALE_CHILD";
/// How many gets, page reads and watched creates each latency is the mean of.
const SAMPLES: usize = 2_000;
const PAGES: usize = 20;
const WATCHED: usize = 500;

/// What one size measured: bytes per object and mean latencies in microseconds.
struct Figures {
    bytes_per_object: f64,
    get_us: f64,
    first_page_us: f64,
    last_page_us: f64,
    watch_event_us: f64,
}

impl Figures {
    fn line(&self) -> String {
        format!(
            "{:.0} {:.1} {:.1} {:.1} {:.1}",
            self.bytes_per_object,
            self.get_us,
            self.first_page_us,
            self.last_page_us,
            self.watch_event_us
        )
    }

    fn parse(line: &str) -> Option<Figures> {
        let v: Vec<f64> = line
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let [
            bytes_per_object,
            get_us,
            first_page_us,
            last_page_us,
            watch_event_us,
        ] = v[..]
        else {
            return None;
        };
        Some(Figures {
            bytes_per_object,
            get_us,
            first_page_us,
            last_page_us,
            watch_event_us,
        })
    }
}

fn mean_us(took: Duration, n: usize) -> f64 {
    took.as_secs_f64() * 1e6 / n as f64
}

/// The mean time of one list page of 500 asked with `token`.
async fn page_us(api: &Api<ConfigMap>, token: Option<&str>) -> f64 {
    let started = Instant::now();
    for _ in 0..PAGES {
        let page = api.list(&common::page(token)).await.unwrap();
        assert!(!page.items.is_empty());
    }
    mean_us(started.elapsed(), PAGES)
}

/// The continue token the last page of 500 is asked with.
async fn last_token(api: &Api<ConfigMap>) -> String {
    common::page_tokens(api)
        .await
        .pop()
        .flatten()
        .expect("more than one page")
}

/// Fill a server with `n` ConfigMaps, then measure at that size.
async fn measure(n: usize) -> Figures {
    let server = FakeApiServer::with_config(fake_apiserver::Config {
        namespace_defaults: false,
        ..Default::default()
    });
    let client = kube::Client::new(server, "default");
    let api: Api<ConfigMap> = Api::default_namespaced(client);
    let before = rss();
    for i in 0..n {
        api.create(&PostParams::default(), &configmap(i))
            .await
            .unwrap();
    }
    let bytes_per_object = rss().saturating_sub(before) as f64 / n as f64;

    let started = Instant::now();
    for k in 0..SAMPLES {
        // Spread over the whole store, not one hot corner of it.
        api.get(&name(k * (n / SAMPLES))).await.unwrap();
    }
    let get_us = mean_us(started.elapsed(), SAMPLES);
    let first_page_us = page_us(&api, None).await;
    let token = last_token(&api).await;
    let last_page_us = page_us(&api, Some(&token)).await;

    // A watch from now: each further create's event, from the create's start to its arrival.
    let rv = api.list(&ListParams::default().limit(1)).await.unwrap();
    let rv = rv.metadata.resource_version.unwrap_or_default();
    let mut stream = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let mut total = Duration::ZERO;
    for i in n..n + WATCHED {
        let started = Instant::now();
        api.create(&PostParams::default(), &configmap(i))
            .await
            .unwrap();
        loop {
            match stream.next().await {
                Some(Ok(WatchEvent::Added(_))) => break,
                Some(Ok(_)) => continue,
                other => panic!("watch ended: {:?}", other.map(|r| r.err())),
            }
        }
        total += started.elapsed();
    }
    Figures {
        bytes_per_object,
        get_us,
        first_page_us,
        last_page_us,
        watch_event_us: mean_us(total, WATCHED),
    }
}

/// Run one size in a child process and read its figures.
fn child(n: usize) -> Figures {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD, n.to_string())
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run the benchmark's child process");
    assert!(out.status.success(), "the child for {n} objects failed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| Figures::parse(l.strip_prefix("figures ")?))
        .unwrap_or_else(|| panic!("no figures from the child for {n} objects: {text}"))
}

fn main() {
    if let Some(n) = std::env::var(CHILD).ok().and_then(|v| v.parse().ok()) {
        let figures = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(measure(n));
        println!("figures {}", figures.line());
        return;
    }
    let mut sizes: Vec<usize> = std::env::var("BENCH_SCALE_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    sizes.retain(|&n| n >= 1_000);
    sizes.sort_unstable();
    assert!(
        sizes.len() >= 2,
        "BENCH_SCALE_SIZES needs two sizes of at least 1000"
    );
    println!(
        "fake-apiserver in process as it fills (ConfigMaps through kube::Client, current-thread runtime)"
    );
    println!(
        "{:>9}  {:>13}  {:>9}  {:>15}  {:>14}  {:>13}",
        "objects", "bytes/object", "get", "first page/500", "last page/500", "watch event"
    );
    let all: Vec<(usize, Figures)> = sizes.iter().map(|&n| (n, child(n))).collect();
    for (n, f) in &all {
        println!(
            "{n:>9}  {:>13.0}  {:>7.1}us  {:>13.1}us  {:>12.1}us  {:>11.1}us",
            f.bytes_per_object, f.get_us, f.first_page_us, f.last_page_us, f.watch_event_us
        );
    }
    let (small, s) = &all[0];
    let (large, l) = &all[all.len() - 1];
    println!();
    let mut met = true;
    for (name, a, b, limit) in [
        (
            "bytes-per-object",
            s.bytes_per_object,
            l.bytes_per_object,
            1.25,
        ),
        ("get-us", s.get_us, l.get_us, 1.5),
        ("first-page-us", s.first_page_us, l.first_page_us, 1.5),
        ("last-page-us", s.last_page_us, l.last_page_us, 1.5),
        ("watch-event-us", s.watch_event_us, l.watch_event_us, 1.5),
    ] {
        let ratio = b / a.max(1e-9);
        println!("fake-{name}: {small} {a:.1}, {large} {b:.1}, ratio {ratio:.2}");
        met &= ratio <= limit;
        println!(
            "target {name} at {large} <= {limit}x at {small}: {}",
            if ratio <= limit { "met" } else { "MISSED" }
        );
    }
    println!(
        "{}",
        if met {
            "flat: all targets met"
        } else {
            "not flat: some targets missed"
        }
    );
}
