//! `bench-scale`: the Rust side of `hack/bench-scale.sh`. `informer-memory` syncs one informer
//! of a namespace's Pods through the shared informer factory (full objects, with the default
//! `managedFields` drop, or metadata only) and prints its resident memory before and after, as
//! one JSON line; `create-pods` fills a namespace with realistic Pods for it to cache.
//!
//! Memory is read three ways: raw RSS; settled RSS, after `malloc_trim` hands free pages
//! back (as the Go side reads its own after `runtime.GC` and `debug.FreeOSMemory`); and the
//! live heap, counted by this binary's global allocator (bytes asked for, and the malloc
//! chunks holding them), so that live data is told apart from allocator overhead.

mod alloc;
mod breakdown;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ListParams, PostParams};
use kube::core::{PartialObjectMeta, Selector};
use kube_codegen_runtime::{Encoded, SharedInformerFactory};
use serde_json::json;

#[global_allocator]
static COUNTING: alloc::Counting = alloc::Counting;

/// Benchmarks of the informer factory on a real API server.
#[derive(Debug, Parser)]
struct Args {
    /// Path to a kubeconfig (default: KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The tokio runtime: `multi` (a worker per core, as controllers run) or `current`
    /// (one thread, hence one malloc arena).
    #[arg(long, value_enum, default_value_t = Flavor::Multi)]
    runtime: Flavor,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sync one informer of the Pods of a namespace and print RSS before and after.
    InformerMemory {
        /// The namespace whose Pods are cached.
        #[arg(long)]
        namespace: String,
        /// What is cached.
        #[arg(long, value_enum)]
        mode: Mode,
        /// Wait after the sync before measuring, in milliseconds.
        #[arg(long, default_value_t = 2000)]
        settle_ms: u64,
        /// Also print where the cached objects' heap bytes go, by part.
        #[arg(long)]
        breakdown: bool,
    },
    /// Create `count` Pods (2-3 KB each as stored) in a namespace, `concurrency` at a time.
    CreatePods {
        /// The namespace (it must exist, with its default service account).
        #[arg(long)]
        namespace: String,
        /// How many.
        #[arg(long)]
        count: usize,
        /// Creates in flight at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 900)]
        timeout_s: u64,
    },
    /// Print the in-memory sizes of the types a cached Pod is made of (before any heap data).
    Sizes,
}

/// What an informer caches.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// Full Pods with their managedFields (as client-go's informer caches them).
    Full,
    /// Full Pods without managedFields (the factory's default).
    Transformed,
    /// Pods' metadata only, with managedFields (as client-go's metadata informer caches it).
    Metadata,
    /// Pods' metadata only, without managedFields (the factory's default).
    MetadataTransformed,
    /// Pods as the encoded informer keeps them: metadata decoded without managedFields, the
    /// rest as JSON.
    Encoded,
}

/// Which tokio runtime runs the informer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Flavor {
    /// The multi-threaded runtime.
    Multi,
    /// The current-thread runtime.
    Current,
}

/// This process's resident set size in bytes (`VmRSS`).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn main() -> Result<(), String> {
    let args = Args::parse();
    if matches!(args.command, Command::Sizes) {
        print_sizes();
        return Ok(());
    }
    let runtime = match args.runtime {
        Flavor::Multi => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        Flavor::Current => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
    .map_err(|e| e.to_string())?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> Result<(), String> {
    let flavor = args.runtime;
    let config = kube_codegen_runtime::client::config::load(args.kubeconfig.as_deref())
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no kubeconfig")?;
    let client = Client::try_from(config).map_err(|e| e.to_string())?;
    match args.command {
        Command::InformerMemory {
            namespace,
            mode,
            settle_ms,
            breakdown,
        } => {
            let run = Run {
                mode,
                flavor,
                settle: Duration::from_millis(settle_ms),
                breakdown,
            };
            informer_memory(client, &namespace, run).await
        }
        Command::CreatePods {
            namespace,
            count,
            concurrency,
            timeout_s,
        } => {
            let create = create_pods(client, &namespace, count, concurrency);
            tokio::time::timeout(Duration::from_secs(timeout_s), create)
                .await
                .map_err(|_| format!("not all {count} Pods created in {timeout_s}s"))?
        }
        Command::Sizes => Ok(()),
    }
}

/// `size_of` the structs of a Pod: k8s-openapi holds optional structs inline, so a Pod's
/// size does not depend on which fields are set.
fn print_sizes() {
    use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec, PodStatus, Volume};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
    println!(
        "size_of: Pod {}, PodSpec {}, PodStatus {}, Container {}, Volume {}, EnvVar {}, ObjectMeta {}, ManagedFieldsEntry {}, PartialObjectMeta<Pod> {}, store key ObjectRef<Pod> {}, serde_json::Value {}",
        size_of::<Pod>(),
        size_of::<PodSpec>(),
        size_of::<PodStatus>(),
        size_of::<Container>(),
        size_of::<Volume>(),
        size_of::<EnvVar>(),
        size_of::<ObjectMeta>(),
        size_of::<ManagedFieldsEntry>(),
        size_of::<PartialObjectMeta<Pod>>(),
        size_of::<kube::runtime::reflector::ObjectRef<Pod>>(),
        size_of::<serde_json::Value>(),
    );
}

/// One `informer-memory` run.
struct Run {
    mode: Mode,
    flavor: Flavor,
    settle: Duration,
    breakdown: bool,
}

/// The cache, whichever type it holds.
enum Cached {
    Pods(kube::runtime::reflector::Store<Pod>),
    Metas(kube::runtime::reflector::Store<PartialObjectMeta<Pod>>),
    Encoded(kube::runtime::reflector::Store<Encoded<Pod>>),
}

impl Cached {
    fn len(&self) -> usize {
        match self {
            Self::Pods(s) => s.len(),
            Self::Metas(s) => s.len(),
            Self::Encoded(s) => s.len(),
        }
    }
}

async fn informer_memory(client: Client, namespace: &str, run: Run) -> Result<(), String> {
    // One small request first, so the connection and the client's own state are in the
    // baseline (as the Go side does).
    Api::<Pod>::namespaced(client.clone(), namespace)
        .list_metadata(&ListParams::default().limit(1))
        .await
        .map_err(|e| e.to_string())?;
    let rss_before_raw = rss();
    alloc::trim();
    let before = rss();
    let heap_before = alloc::heap();
    let mut builder = SharedInformerFactory::builder(client).namespace(namespace);
    if matches!(run.mode, Mode::Full | Mode::Metadata) {
        builder = builder.keep_managed_fields();
    }
    let factory = builder.build();
    let cached = match run.mode {
        Mode::Full | Mode::Transformed => Cached::Pods(factory.informer::<Pod>().store()),
        Mode::Metadata | Mode::MetadataTransformed => {
            Cached::Metas(factory.metadata_informer::<Pod>().store())
        }
        Mode::Encoded => Cached::Encoded(factory.encoded_informer::<Pod>().store()),
    };
    let began = Instant::now();
    factory.start();
    let synced = factory.wait_for_cache_sync(Duration::from_secs(600)).await;
    if synced.values().any(|ok| !ok) {
        return Err(format!("caches did not sync: {synced:?}"));
    }
    let sync_seconds = began.elapsed().as_secs_f64();
    tokio::time::sleep(run.settle).await;
    let after = rss();
    let heap_after = alloc::heap();
    alloc::trim();
    let after_trim = rss();
    let mut line = json!({
        "program": "ours",
        "mode": format!("{:?}", run.mode).to_lowercase(),
        "runtime": format!("{:?}", run.flavor).to_lowercase(),
        "arenas": std::env::var("MALLOC_ARENA_MAX").ok(),
        "objects": cached.len(),
        "rss_before_raw": rss_before_raw,
        "rss_before": before,
        "rss_after": after,
        "rss_after_trim": after_trim,
        "heap_before": heap_before.requested,
        "heap_after": heap_after.requested,
        "chunks_before": heap_before.chunks,
        "chunks_after": heap_after.chunks,
        "allocations_before": heap_before.allocations,
        "allocations_after": heap_after.allocations,
        "sync_seconds": sync_seconds,
    });
    // The watch stops first, so that nothing else allocates while the parts are counted.
    factory.shutdown().await;
    if let Cached::Encoded(store) = &cached {
        // What reading costs: every cached Pod decoded once, as a lister's caller would.
        let objects = store.state();
        let began = Instant::now();
        let mut decoded = 0;
        for object in &objects {
            decoded += usize::from(object.decode().is_ok());
        }
        line["decode_seconds"] = json!(began.elapsed().as_secs_f64());
        line["optimized"] = json!(!cfg!(debug_assertions));
        line["decoded"] = json!(decoded);
        line["encoded_bytes"] = json!(objects.iter().map(|o| o.encoded_len()).sum::<usize>());
    }
    if run.breakdown {
        line["breakdown"] = match &cached {
            Cached::Pods(s) => breakdown::pods(&s.state()),
            Cached::Metas(s) => breakdown::metas(&s.state()),
            Cached::Encoded(s) => breakdown::encoded(&s.state()),
        };
        // A namespace lister's first list builds the informer's namespace index.
        let all = Selector::default();
        let before = alloc::heap();
        let listed = match &cached {
            Cached::Pods(_) => factory
                .informer::<Pod>()
                .lister()
                .namespace(namespace)
                .list(&all)
                .len(),
            Cached::Metas(_) => {
                let lister = factory.metadata_informer::<Pod>().lister();
                lister.namespace(namespace).list(&all).len()
            }
            Cached::Encoded(_) => {
                let lister = factory.encoded_informer::<Pod>().lister();
                lister.namespace(namespace).list(&all).len()
            }
        };
        let after = alloc::heap();
        let n = listed.max(1) as i64;
        line["namespace_index"] = json!({
            "requested": (after.requested - before.requested) / n,
            "chunks": (after.chunks - before.chunks) / n,
        });
    }
    println!("{line}");
    Ok(())
}

/// A Pod as a Deployment's template would make it: two containers with ports, env,
/// resources, probes and mounts; labels and annotations as tools set them.
fn pod(namespace: &str, i: usize) -> serde_json::Value {
    let app = format!("svc-{:03}", i % 200);
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("{app}-{i:06}"),
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": app,
                "app.kubernetes.io/instance": format!("{app}-prod"),
                "app.kubernetes.io/version": "1.24.3",
                "app.kubernetes.io/component": "backend",
                "pod-template-hash": format!("{:010x}", i * 7919 % 1_000_003),
            },
            "annotations": {
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
                "checksum/config": format!("{:064x}", (i as u128) * 0x9e37_79b9_7f4a_7c15),
            },
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": format!("registry.example.com/team/{app}:1.24.3"),
                    "args": ["--config=/etc/app/config.yaml", "--log-level=info"],
                    "ports": [
                        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                    ],
                    "env": [
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                        {"name": "LOG_FORMAT", "value": "json"},
                        {"name": "DATABASE_URL", "value": format!("postgres://{app}.db.svc:5432/app")},
                    ],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                        "limits": {"cpu": "500m", "memory": "512Mi"},
                    },
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 10, "periodSeconds": 10},
                    "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5},
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/app", "readOnly": true},
                        {"name": "tmp", "mountPath": "/tmp"},
                    ],
                    "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true},
                },
                {
                    "name": "proxy",
                    "image": "registry.example.com/mesh/proxy:2.3.1",
                    "ports": [{"name": "proxy", "containerPort": 15001, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}},
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": format!("{app}-config")}},
                {"name": "tmp", "emptyDir": {}},
            ],
            "terminationGracePeriodSeconds": 30,
        },
    })
}

async fn create_pods(
    client: Client,
    namespace: &str,
    count: usize,
    concurrency: usize,
) -> Result<(), String> {
    let api: Api<Pod> = Api::namespaced(client, namespace);
    let params = PostParams {
        field_manager: Some("bench-scale".into()),
        ..PostParams::default()
    };
    let began = Instant::now();
    let results = futures::stream::iter(0..count)
        .map(|i| {
            let (api, params) = (&api, &params);
            async move {
                let pod: Pod =
                    serde_json::from_value(pod(namespace, i)).map_err(|e| e.to_string())?;
                // A few retries: the server may briefly refuse under load (429, timeouts).
                let mut last = String::new();
                for attempt in 0..5u64 {
                    match api.create(params, &pod).await {
                        Ok(_) => return Ok(()),
                        Err(kube::Error::Api(e)) if e.code == 409 => return Ok(()),
                        Err(e) => last = e.to_string(),
                    }
                    tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await;
                }
                Err(last)
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<Result<(), String>>>()
        .await;
    let failed: Vec<_> = results.into_iter().filter_map(Result::err).collect();
    eprintln!(
        "created {} Pods in {:.1}s",
        count - failed.len(),
        began.elapsed().as_secs_f64()
    );
    match failed.first() {
        None => Ok(()),
        Some(e) => Err(format!("{} creates failed, first: {e}", failed.len())),
    }
}
