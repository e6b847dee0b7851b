//! HTTP load on the `fake-apiserver` binary, on loopback: CLIENTS clients each create, get,
//! update and delete their own ConfigMaps while WATCHERS watches follow the namespace, for
//! RUNS runs of SECONDS seconds (at most 200 000 requests a run). Prints per run the
//! throughput, p50/p99 latency and the server's resident memory before and after, then
//! whether memory stayed flat (within 10 % from the first run to the last) with nothing
//! left stored. Run with `cargo bench -p fake-apiserver --bench http_load`; `LOAD_CLIENTS`,
//! `LOAD_WATCHERS`, `LOAD_RUNS` and `LOAD_SECONDS` change the shape (defaults 20, 4, 3, 10);
//! `LOAD_SERVER_ARGS` passes flags to the server (`--action-log 10000000` shows what an
//! unbounded action log costs).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchParams};

const MAX_REQUESTS_PER_RUN: isize = 200_000;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The resident memory of process `pid`, in bytes (Linux).
fn rss(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// The server process, killed when dropped (also when the benchmark panics).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary on a free loopback port; returns it and its URL.
fn start() -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-apiserver"))
        .args(["--host", "127.0.0.1", "--port", "0"])
        .args(
            std::env::var("LOAD_SERVER_ARGS")
                .unwrap_or_default()
                .split_whitespace(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the fake-apiserver binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the binary prints its address");
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .expect("`listening on URL`")
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "loopback only, got {url}"
    );
    (Server(child), url)
}

fn configmap(name: &str, value: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm.metadata.labels = Some(BTreeMap::from([("bench".into(), "http-load".into())]));
    cm.data = Some(BTreeMap::from([("key".into(), value.to_owned())]));
    cm
}

struct RunResult {
    requests: usize,
    took: Duration,
    p50: Duration,
    p99: Duration,
    events: usize,
    rss_before: u64,
    rss_after: u64,
}

async fn run(
    api: &Api<ConfigMap>,
    pid: u32,
    clients: usize,
    watchers: usize,
    secs: u64,
) -> RunResult {
    let rss_before = rss(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let budget = Arc::new(AtomicIsize::new(MAX_REQUESTS_PER_RUN));
    let events = Arc::new(AtomicUsize::new(0));
    let mut watches = Vec::new();
    for _ in 0..watchers {
        let (api, stop, events) = (api.clone(), stop.clone(), events.clone());
        watches.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(stream) = api.watch(&WatchParams::default().timeout(5), "0").await else {
                    break;
                };
                let mut stream = stream.boxed();
                while let Some(Ok(_)) = stream.next().await {
                    events.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
            }
        }));
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let mut workers = Vec::new();
    for c in 0..clients {
        let (api, budget) = (api.clone(), budget.clone());
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = 0u64;
            let timed = |latencies: &mut Vec<Duration>, at: Instant| latencies.push(at.elapsed());
            while Instant::now() < deadline && budget.fetch_sub(4, Ordering::Relaxed) >= 4 {
                let name = format!("load-{c}-{i}");
                i += 1;
                let at = Instant::now();
                let created = api
                    .create(&PostParams::default(), &configmap(&name, "a"))
                    .await
                    .unwrap();
                timed(&mut latencies, at);
                let at = Instant::now();
                api.get(&name).await.unwrap();
                timed(&mut latencies, at);
                let mut changed = configmap(&name, "b");
                changed.metadata.resource_version = created.metadata.resource_version;
                let at = Instant::now();
                api.replace(&name, &PostParams::default(), &changed)
                    .await
                    .unwrap();
                timed(&mut latencies, at);
                let at = Instant::now();
                api.delete(&name, &DeleteParams::default()).await.unwrap();
                timed(&mut latencies, at);
            }
            latencies
        }));
    }
    let mut latencies: Vec<Duration> = Vec::new();
    for w in workers {
        latencies.extend(w.await.unwrap());
    }
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    for w in watches {
        let _ = tokio::time::timeout(Duration::from_secs(10), w).await;
    }
    latencies.sort_unstable();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    // Let the server settle (closed connections, ended watches) before reading its memory.
    tokio::time::sleep(Duration::from_millis(500)).await;
    RunResult {
        requests: latencies.len(),
        took,
        p50: at(0.50),
        p99: at(0.99),
        events: events.load(Ordering::Relaxed),
        rss_before,
        rss_after: rss(pid),
    }
}

#[tokio::main]
async fn main() {
    let clients = env("LOAD_CLIENTS", 20) as usize;
    let watchers = env("LOAD_WATCHERS", 4) as usize;
    let runs = env("LOAD_RUNS", 3).max(1) as usize;
    let secs = env("LOAD_SECONDS", 10).clamp(1, 120);
    let (server, url) = start();
    let pid = server.0.id();
    let config = kube::Config::new(url.parse().expect("a URL"));
    let client = kube::Client::try_from(config).expect("a client for the server");
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    println!(
        "fake-apiserver binary at {url}: {clients} clients (create, get, update, delete), {watchers} watches, {runs} runs of {secs} s"
    );
    let mut results = Vec::new();
    for r in 1..=runs {
        let res = run(&api, pid, clients, watchers, secs).await;
        println!(
            "run {r}: {:>7} requests in {:>5.1} s  {:>8.0} req/s  p50 {:>6.2} ms  p99 {:>6.2} ms  {:>7} watch events  RSS {:.1} -> {:.1} MiB",
            res.requests,
            res.took.as_secs_f64(),
            res.requests as f64 / res.took.as_secs_f64(),
            res.p50.as_secs_f64() * 1000.0,
            res.p99.as_secs_f64() * 1000.0,
            res.events,
            res.rss_before as f64 / 1048576.0,
            res.rss_after as f64 / 1048576.0,
        );
        results.push(res);
    }
    let left = api
        .list(&ListParams::default().labels("bench=http-load"))
        .await
        .map_or(usize::MAX, |l| l.items.len());
    drop(server);
    let first = results.first().map_or(0, |r| r.rss_after) as f64;
    let last = results.last().map_or(0, |r| r.rss_after) as f64;
    let growth = (last - first) / first.max(1.0);
    let flat = growth <= 0.10 && left == 0;
    println!(
        "target RSS flat across runs (within 10% from run 1 to run {runs}), nothing left stored: {} ({:+.1}%, {left} objects left)",
        if flat { "met" } else { "MISSED" },
        growth * 100.0
    );
}
