//! `pod-watcher`: log every Pod add, update and delete.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use kube::Client;
use pod_watcher::Options;
use serde_json::json;

/// Log every Pod add, update and delete with its namespace, name, phase and node.
#[derive(Debug, Parser)]
#[command(name = "pod-watcher", version, about)]
struct Args {
    /// Path to a kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Run a scripted pod lifecycle on the embedded in-memory API server, then exit.
    #[arg(long)]
    embedded: bool,
    /// Watch one namespace (default: all).
    #[arg(long)]
    namespace: Option<String>,
    /// Resync period in seconds (0: none).
    #[arg(long, default_value_t = 0)]
    resync_period: u64,
    /// Cache Pods' metadata only and log namespace/name and owner (no phase or node).
    #[arg(long)]
    metadata_only: bool,
    /// Cache Pods encoded (metadata decoded, the rest as JSON), decoding each as it is
    /// logged: the same lines at well under half the memory of full Pods.
    #[arg(long, conflicts_with = "metadata_only")]
    encoded: bool,
    /// At most this many lines a second, evenly spaced.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    rate: u32,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let options = Options {
        namespace: args.namespace.clone(),
        resync: (args.resync_period > 0).then(|| Duration::from_secs(args.resync_period)),
        metadata_only: args.metadata_only,
        encoded: args.encoded,
        rate: args.rate,
    };
    let config = if args.embedded {
        None
    } else {
        match kube_codegen_runtime::client::config::load(args.kubeconfig.as_deref()).await {
            Ok(config) => config,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    logs(config.is_none());
    let result = match config.and_then(|c| Client::try_from(c).ok()) {
        Some(client) => {
            let shutdown = kube_codegen_runtime::manager::signals().boxed();
            pod_watcher::run(client, options, shutdown, |line| println!("{line}")).await
        }
        None => embedded(options).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The runtime's logs (a watch error, a cache that does not sync) on stderr, as stdout is
/// the watcher's: warnings and up for the embedded demo, information too on a cluster,
/// unless RUST_LOG says otherwise.
fn logs(embedded: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if embedded { "warn" } else { "info" })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// A pod's life on the embedded API server: created, scheduled, running, deleted.
async fn embedded(options: Options) -> Result<(), String> {
    println!("running on the embedded in-memory API server with a scripted pod lifecycle\n");
    let fake = FakeApiServer::new();
    let client = Client::new(fake.clone(), "default");
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let watcher = tokio::spawn(pod_watcher::run(
        client,
        options,
        async {
            let _ = done_rx.await;
        }
        .boxed(),
        |l| println!("{l}"),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let err = |e: fake_apiserver::ApiError| e.message;
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]}})).map_err(err)?;
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::default_namespaced(Client::new(fake.clone(), "default"));
    let step = |p: serde_json::Value| kube::api::Patch::Merge(p);
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Scheduled as a scheduler does it: the pod's `binding`.
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"}});
    let _: serde_json::Value = pods
        .create_subresource("binding", "web", &Default::default(), &binding)
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    pods.patch_status(
        "web",
        &Default::default(),
        &step(json!({"status": {"phase": "Running"}})),
    )
    .await
    .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    pods.delete("web", &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = done_tx.send(());
    watcher.await.map_err(|e| e.to_string())?
}
