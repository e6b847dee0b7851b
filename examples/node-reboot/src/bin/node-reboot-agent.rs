//! `node-reboot-agent`: runs on every node (DaemonSet) and reboots it when asked.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use futures::FutureExt;
use node_reboot::AgentOptions;

/// Reboot this node when its Node carries `reboot.example.com/reboot-now`.
#[derive(Debug, Parser)]
#[command(name = "node-reboot-agent", version, about)]
struct Args {
    /// Path to a kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// This node's name (the DaemonSet passes it through the downward API).
    #[arg(long, env = "NODE_NAME")]
    node: String,
    /// The reboot command, e.g. `--reboot-command systemctl --reboot-command reboot`.
    /// Without it the agent only logs (a dry run), so nothing reboots by accident.
    #[arg(long)]
    reboot_command: Vec<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    // The runtime's logs (a failed patch and its retry, a watch error) on stderr.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let config = match kube_codegen_runtime::client::config::load(args.kubeconfig.as_deref()).await
    {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(client) = config.and_then(|c| kube::Client::try_from(c).ok()) else {
        eprintln!(
            "error: no cluster configuration (--kubeconfig, KUBECONFIG, ~/.kube/config or in-cluster)"
        );
        return ExitCode::FAILURE;
    };
    let options = AgentOptions {
        node: args.node,
        command: (!args.reboot_command.is_empty()).then_some(args.reboot_command),
        dry_run_back_after: Duration::from_secs(5),
    };
    let shutdown = kube_codegen_runtime::manager::signals().boxed();
    match node_reboot::run_agent(client, options, shutdown, |n| {
        eprintln!("rebooting node {n}")
    })
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
