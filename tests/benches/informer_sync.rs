//! Time to sync N objects (default 10 000; `BENCH_OBJECTS`) and memory per cached object,
//! through the informer factory and through a plain kube reflector, on the same data in the
//! fake API server, both caching them without managedFields (the reflector drops them after
//! decoding, as a kube-rs user would; the factory does not build them). Each mode runs in
//! its own child process so memory figures are clean.
//! `BENCH_RUNS` (default 7) runs of each mode alternate; the figures are the fastest times
//! and the median memory. Run with `cargo bench -p codegen-tests --bench informer_sync`.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client};
use kube_codegen_runtime::SharedInformerFactory;

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

fn seeded(n: usize) -> FakeApiServer {
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        namespace_defaults: false,
        ..Default::default()
    });
    for i in 0..n {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(format!("cm-{i:06}"));
        cm.metadata.namespace = Some("default".into());
        cm.metadata.labels = Some(BTreeMap::from([("app".into(), format!("app-{}", i % 10))]));
        cm.data = Some(BTreeMap::from([("key".into(), "value".repeat(8))]));
        fake.seed(&cm).unwrap();
    }
    fake
}

async fn run(mode: &str, n: usize) {
    let fake = seeded(n);
    let client = Client::new(fake.clone(), "default");
    let before = rss();
    let started = Instant::now();
    // Timed up to the end of the sync; the checks come after the measurements.
    let (keep, elapsed, cached): (Box<dyn std::any::Any>, Duration, usize) = match mode {
        "reflector" => {
            let (reader, writer) = reflector::store::<ConfigMap>();
            let stream = reflector(
                writer,
                // The same cache as the factory's default: without managedFields.
                watcher(Api::<ConfigMap>::all(client), watcher::Config::default())
                    .modify(|cm| cm.metadata.managed_fields = None),
            )
            .applied_objects();
            let task = tokio::spawn(stream.for_each(|_| async {}));
            tokio::time::timeout(Duration::from_secs(120), reader.wait_until_ready())
                .await
                .expect("the reflector syncs within 120 s")
                .unwrap();
            let elapsed = started.elapsed();
            let cached = reader.state().len();
            (Box::new((reader, task)), elapsed, cached)
        }
        _ => {
            let factory = SharedInformerFactory::new(client);
            let informer = factory.informer::<ConfigMap>();
            factory.start();
            let synced = factory
                .wait_for_cache_sync(Duration::from_secs(120))
                .await
                .values()
                .all(|s| *s);
            let elapsed = started.elapsed();
            assert!(synced);
            let cached = informer.lister().list(&Default::default()).len();
            (Box::new((factory, informer)), elapsed, cached)
        }
    };
    let grown = rss().saturating_sub(before);
    assert_eq!(cached, n);
    println!(
        "RESULT {mode} {} {}",
        elapsed.as_secs_f64(),
        grown as f64 / n as f64
    );
    drop(keep);
}

fn main() {
    let n: usize = std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--mode") {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(run(&args[i + 1], n));
        return;
    }
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
        .max(1);
    println!(
        "syncing {n} ConfigMaps from the in-process fake API server, {runs} runs of each mode, alternating, each in a fresh process (medians)"
    );
    let mut samples: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for _ in 0..runs {
        for mode in ["reflector", "factory"] {
            let out = Command::new(&args[0])
                .args(["--mode", mode])
                .output()
                .expect("re-run self");
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text
                .lines()
                .find(|l| l.starts_with("RESULT"))
                .unwrap_or_else(|| {
                    panic!("{mode} failed: {}", String::from_utf8_lossy(&out.stderr))
                });
            let fields: Vec<f64> = line
                .split_whitespace()
                .skip(2)
                .map(|f| f.parse().unwrap())
                .collect();
            samples
                .entry(mode)
                .or_default()
                .push((fields[0], fields[1]));
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut results = BTreeMap::new();
    for (mode, s) in &samples {
        let time = median(s.iter().map(|x| x.0).collect());
        let mem = median(s.iter().map(|x| x.1).collect());
        println!(
            "{mode:<10} sync {:>8.1} ms   {:>7.0} bytes resident per cached object",
            time * 1000.0,
            mem
        );
        results.insert(*mode, (time, mem));
    }
    // Time: the fastest run of each (a shared machine only ever adds time, so the minimum
    // is the cost itself); memory: the medians.
    let fastest = |mode: &str| {
        samples[mode]
            .iter()
            .map(|x| x.0)
            .fold(f64::INFINITY, f64::min)
    };
    let time = fastest("factory") / fastest("reflector");
    let memory = results["factory"].1 / results["reflector"].1;
    println!(
        "fastest sync: reflector {:.1} ms, factory {:.1} ms",
        fastest("reflector") * 1000.0,
        fastest("factory") * 1000.0
    );
    println!(
        "factory / reflector: time {time:.2}x (fastest runs), memory per object {memory:.2}x (medians)"
    );
    let met = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "target factory sync time <= 1.05x the reflector's: {} ({time:.2}x)",
        met(time <= 1.05)
    );
    println!(
        "target factory memory per object <= 1.05x the reflector's: {} ({memory:.2}x)",
        met(memory <= 1.05)
    );
}
