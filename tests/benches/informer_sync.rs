//! Time to sync N objects (default 10 000; `BENCH_OBJECTS`) and memory per cached object,
//! through the informer factory and through a plain kube reflector, on the same data in the
//! fake API server. Each mode runs in its own child process so memory figures are clean.
//! Run with `cargo bench -p codegen-tests --bench informer_sync`.

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
    let fake = FakeApiServer::new();
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
    let keep: Box<dyn std::any::Any> = match mode {
        "reflector" => {
            let (reader, writer) = reflector::store::<ConfigMap>();
            let stream = reflector(
                writer,
                watcher(Api::<ConfigMap>::all(client), watcher::Config::default()),
            )
            .applied_objects();
            let task = tokio::spawn(stream.for_each(|_| async {}));
            reader.wait_until_ready().await.unwrap();
            assert_eq!(reader.state().len(), n);
            Box::new((reader, task))
        }
        _ => {
            let factory = SharedInformerFactory::new(client);
            let informer = factory.informer::<ConfigMap>();
            factory.start();
            assert!(
                factory
                    .wait_for_cache_sync(Duration::from_secs(120))
                    .await
                    .values()
                    .all(|s| *s)
            );
            assert_eq!(informer.lister().list(&Default::default()).len(), n);
            Box::new((factory, informer))
        }
    };
    let elapsed = started.elapsed();
    let grown = rss().saturating_sub(before);
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
    println!(
        "syncing {n} ConfigMaps from the in-process fake API server (each mode in a fresh process)"
    );
    let mut results = BTreeMap::new();
    for mode in ["reflector", "factory"] {
        let out = Command::new(&args[0])
            .args(["--mode", mode])
            .output()
            .expect("re-run self");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("RESULT"))
            .unwrap_or_else(|| panic!("{mode} failed: {}", String::from_utf8_lossy(&out.stderr)));
        let fields: Vec<f64> = line
            .split_whitespace()
            .skip(2)
            .map(|f| f.parse().unwrap())
            .collect();
        println!(
            "{mode:<10} sync {:>8.1} ms   {:>7.0} bytes resident per cached object",
            fields[0] * 1000.0,
            fields[1]
        );
        results.insert(mode, (fields[0], fields[1]));
    }
    let (r, f) = (results["reflector"], results["factory"]);
    println!(
        "factory / reflector: time {:.2}x, memory per object {:.2}x",
        f.0 / r.0,
        f.1 / r.1
    );
}
