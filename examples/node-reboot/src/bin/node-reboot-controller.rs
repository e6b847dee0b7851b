//! `node-reboot-controller`: rolling reboots of the nodes that need one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use kube::Client;
use kube_codegen_runtime::leader::LeaderElection;
use kube_codegen_runtime::manager::signals;
use node_reboot::{AgentOptions, ControllerOptions, REBOOT_NEEDED};
use serde_json::json;

/// Move nodes from `reboot-needed` to `reboot-now` while fewer than --max-unavailable are down.
#[derive(Debug, Parser)]
#[command(name = "node-reboot-controller", version, about)]
struct Args {
    /// Path to a kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Run 5 nodes and their (dry-run) agents on the embedded in-memory API server, then exit.
    #[arg(long)]
    embedded: bool,
    /// At most this many nodes unavailable (not Ready, or rebooting) at once.
    #[arg(long, default_value_t = 1)]
    max_unavailable: usize,
    /// Only the nodes this label selector picks (`pool=gpu`), with a budget of their own.
    #[arg(long, value_name = "SELECTOR", default_value = "")]
    node_selector: String,
    /// Hold a Lease so one replica acts at a time.
    #[arg(long)]
    leader_elect: bool,
    /// Lease namespace.
    #[arg(long, default_value = "kube-system")]
    lease_namespace: String,
    /// This replica's identity in the lease.
    #[arg(long, env = "POD_NAME", default_value = "node-reboot-controller")]
    identity: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.max_unavailable == 0 {
        eprintln!("error: --max-unavailable must be at least 1, or no node could ever reboot");
        return ExitCode::FAILURE;
    }
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
        Some(client) => cluster(client, &args).await,
        None => embedded(args.max_unavailable.max(2)).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn cluster(client: Client, args: &Args) -> Result<(), String> {
    // Campaigns at once; the cache fills while this replica stands by, and it acts the
    // moment it leads (the runtime logs both).
    let leader_election = args.leader_elect.then(|| {
        LeaderElection::new(
            "node-reboot-controller",
            &args.lease_namespace,
            &args.identity,
        )
    });
    let options = ControllerOptions {
        max_unavailable: args.max_unavailable,
        leader_election,
        node_selector: args.node_selector.clone(),
    };
    node_reboot::run_controller(client, options, signals().boxed()).await
}

/// The runtime's logs (the leader lease, a failed patch and its retry, a watch error) on
/// stderr: warnings and up for the embedded demo, which prints its own report, and
/// information too on a cluster, unless RUST_LOG says otherwise.
fn logs(embedded: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if embedded { "warn" } else { "info" })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

async fn embedded(max_unavailable: usize) -> Result<(), String> {
    println!(
        "embedded: 5 Ready nodes need a reboot; dry-run agents; at most {max_unavailable} unavailable at once\n"
    );
    let fake = FakeApiServer::new();
    let names: Vec<String> = (1..=5).map(|i| format!("node-{i}")).collect();
    for name in &names {
        fake.seed(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {REBOOT_NEEDED: "true"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}))
            .map_err(|e| e.message)?;
    }
    let client = Client::new(fake.clone(), "default");
    let (stop, _) = tokio::sync::broadcast::channel::<()>(1);
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for name in &names {
        let options = AgentOptions {
            node: name.clone(),
            command: None,
            dry_run_back_after: Duration::from_millis(300),
        };
        let mut rx = stop.subscribe();
        let order = order.clone();
        tasks.push(tokio::spawn(node_reboot::run_agent(
            client.clone(),
            options,
            async move {
                let _ = rx.recv().await;
            }
            .boxed(),
            move |n| order.lock().unwrap().push(n.to_owned()),
        )));
    }
    let mut rx = stop.subscribe();
    let options = ControllerOptions {
        max_unavailable,
        leader_election: None,
        node_selector: String::new(),
    };
    tasks.push(tokio::spawn(node_reboot::run_controller(
        client,
        options,
        async move {
            let _ = rx.recv().await;
        }
        .boxed(),
    )));
    for _ in 0..200 {
        let done = fake.list("v1", "Node", None).iter().all(|n| {
            n["metadata"]
                .get("annotations")
                .is_none_or(|a| a.as_object().is_none_or(|m| m.is_empty()))
        });
        if done && order.lock().unwrap().len() == names.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = stop.send(());
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    println!(
        "\nrebooted in this order: {}",
        order.lock().unwrap().join(", ")
    );
    Ok(())
}
