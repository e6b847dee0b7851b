//! `secret-sync`: copy labelled Secrets of a source namespace into the other namespaces.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use kube::Client;
use secret_sync::{Options, Report};
use serde_json::json;

/// Copy the Secrets of a source namespace that match a label selector into every other
/// namespace (or those a namespace selector picks); keep them updated; remove orphans.
#[derive(Debug, Parser)]
#[command(name = "secret-sync", version, about)]
struct Args {
    /// Path to a kubeconfig (default: KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Run a scripted demo on the embedded in-memory API server, then exit.
    #[arg(long)]
    embedded: bool,
    /// Namespace of the source Secrets.
    #[arg(long, default_value = "default")]
    source_namespace: String,
    /// Label selector of the Secrets to copy (`key=value,...`).
    #[arg(long, default_value = "secret-sync.example.com/sync=true")]
    selector: String,
    /// Label selector of the namespaces that get copies (`key=value,...`; empty: all).
    #[arg(long, default_value = "")]
    namespace_selector: String,
}

fn print(report: &Report) {
    for (what, list) in [
        ("created", &report.created),
        ("updated", &report.updated),
        ("deleted", &report.deleted),
        ("left alone (not ours)", &report.conflicts),
    ] {
        for key in list {
            println!("{what:<22} {key}");
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    for (flag, value) in [
        ("--selector", &args.selector),
        ("--namespace-selector", &args.namespace_selector),
    ] {
        if !value.is_empty() && value.split(',').any(|p| !p.contains('=')) {
            eprintln!("error: {flag} takes `key=value` pairs separated by commas, got `{value}`");
            return ExitCode::FAILURE;
        }
    }
    if args.selector.is_empty() {
        eprintln!(
            "error: --selector may not be empty: it would copy every Secret of the source namespace"
        );
        return ExitCode::FAILURE;
    }
    let options = Options {
        source_namespace: args.source_namespace.clone(),
        selector: args.selector.clone(),
        namespace_selector: args.namespace_selector.clone(),
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
            secret_sync::run(client, options, shutdown, print).await
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

/// The runtime's logs (a failed sync and its retry, a watch error) on stderr: warnings and
/// up for the embedded demo, which prints its own report, and information too on a
/// cluster, unless RUST_LOG says otherwise.
fn logs(embedded: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if embedded { "warn" } else { "info" })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

async fn embedded(options: Options) -> Result<(), String> {
    println!("running on the embedded in-memory API server\n");
    let fake = FakeApiServer::new();
    let seed = |v: serde_json::Value| fake.seed(v).map(|_| ()).map_err(|e| e.message);
    for ns in ["team-a", "team-b"] {
        seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))?;
    }
    seed(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "registry", "namespace": "default",
        "labels": {"secret-sync.example.com/sync": "true"}}, "data": {"token": "czNjcjN0"}}),
    )?;
    seed(
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "registry", "namespace": "team-b"}, "data": {"token": "b3duZWQ="}}),
    )?;
    println!(
        "source default/registry (labelled); team-b already has an unrelated secret named registry"
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(secret_sync::run(
        Client::new(fake.clone(), "default"),
        options,
        async {
            let _ = stopped.await;
        }
        .boxed(),
        print,
    ));
    let pause = || tokio::time::sleep(Duration::from_millis(400));
    pause().await;
    println!("\n+ namespace team-c");
    seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-c"}}))?;
    pause().await;
    println!("\n~ the source's data changes");
    let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::default_namespaced(Client::new(fake.clone(), "default"));
    secrets
        .patch(
            "registry",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"data": {"token": "bjN3"}})),
        )
        .await
        .map_err(|e| e.to_string())?;
    pause().await;
    println!("\n- the source is deleted");
    secrets
        .delete("registry", &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    pause().await;
    let _ = stop.send(());
    task.await.map_err(|e| e.to_string())?
}
