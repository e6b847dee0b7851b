//! The Rust side of `hack/bench-queue.sh`: the controller's work queue
//! (`WorkQueue<Arc<ObjectKey>>`, as a `Controller` keys it; no metrics) under the operations the Go side runs on client-go's rate-limiting queue keyed
//! by controller-runtime's `reconcile.Request`. Prints `adds-per-second`, `gets-per-second`
//! and `bytes-per-key` lines (the resident set's growth per queued key, keys made and added
//! one by one as handlers add them).
//!
//! `cargo run --release -p bench-queue` (`BENCH_QUEUE_KEYS`, default 1 000 000).

use std::sync::Arc;
use std::time::Instant;

use kube_codegen_runtime::controller::queue::{NoMetrics, Priority, WorkQueue};
use kube_codegen_runtime::controller::{Backoff, ObjectKey};

fn key(i: usize) -> Arc<ObjectKey> {
    Arc::new(ObjectKey {
        namespace: Some(format!("namespace-{:03}", i % 100)),
        name: format!("object-{i:07}"),
    })
}

fn queue() -> WorkQueue<Arc<ObjectKey>> {
    WorkQueue::new(Backoff::default(), Arc::new(NoMetrics))
}

/// The resident set in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::var("BENCH_QUEUE_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);

    let q = queue();
    let before = rss();
    for i in 0..n {
        q.add(key(i), Priority::Low);
    }
    let after = rss();
    println!(
        "bytes-per-key {:.1}",
        after.saturating_sub(before) as f64 / n as f64
    );
    q.shut_down();
    drop(q);

    let keys: Vec<Arc<ObjectKey>> = (0..n).map(key).collect();
    let q = queue();
    let start = Instant::now();
    for _ in 0..2 {
        for k in &keys {
            q.add(k.clone(), Priority::Low);
        }
    }
    let adds = start.elapsed();
    assert_eq!(q.len(), n, "each key queued once");
    let start = Instant::now();
    for _ in 0..n {
        let Some(k) = q.get().await else { break };
        q.done(&k);
        q.forget(&k);
    }
    let gets = start.elapsed();
    println!("adds-per-second {:.0}", (2 * n) as f64 / adds.as_secs_f64());
    println!("gets-per-second {:.0}", n as f64 / gets.as_secs_f64());
}
