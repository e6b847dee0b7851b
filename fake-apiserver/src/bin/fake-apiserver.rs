//! `fake-apiserver`: the in-memory Kubernetes API server over HTTP on loopback, for kubectl.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use fake_apiserver::FakeApiServer;

/// An in-memory Kubernetes API server on loopback, for kubectl and demos.
///
/// It serves the built-in kinds and the resources of any CRD created in it. Use
/// `kubectl --kubeconfig FILE ...` with the file written by --kubeconfig-out; `kubectl apply`
/// validates on the server and `kubectl explain` reads the served OpenAPI v3 documents.
#[derive(Debug, Parser)]
#[command(name = "fake-apiserver", version, about, long_about)]
struct Args {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Loopback address to listen on (127.0.0.1 or ::1).
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
    /// Write a kubeconfig pointing at the server to this file.
    #[arg(long, value_name = "FILE")]
    kubeconfig_out: Option<PathBuf>,
    /// YAML files of objects to create at start (CRDs first, then their objects).
    #[arg(long, value_name = "FILE")]
    seed: Vec<PathBuf>,
    /// How many requests to keep in the action log (tests read it in process; over HTTP it
    /// only costs memory, so the binary keeps few).
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    action_log: usize,
    /// How many events to keep for watches that resume from a resourceVersion.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    history: usize,
    /// How many connections are open at once (each watch holds one); one more is closed
    /// when accepted. The process's open-file limit (`ulimit -n`) must allow as many.
    #[arg(long, value_name = "N", default_value_t = fake_apiserver::HttpLimits::default().max_connections)]
    max_connections: usize,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let server = FakeApiServer::with_config(fake_apiserver::Config {
        action_log: args.action_log,
        history: args.history.max(1),
        http: fake_apiserver::HttpLimits {
            max_connections: args.max_connections.max(1),
            ..fake_apiserver::HttpLimits::default()
        },
        ..fake_apiserver::Config::default()
    });
    for file in &args.seed {
        let seeded = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| server.seed_yaml(&text).map_err(|e| e.message));
        if let Err(e) = seeded {
            eprintln!("error: cannot seed {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    }
    let served = match server.serve(SocketAddr::new(args.host, args.port)).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot listen on {}:{}: {e}", args.host, args.port);
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = &args.kubeconfig_out
        && let Err(e) = std::fs::write(path, served.kubeconfig())
    {
        eprintln!("error: cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("fake-apiserver listening on {}", served.url());
    if let Some(path) = &args.kubeconfig_out {
        println!(
            "kubeconfig written to {}; try: kubectl --kubeconfig {} get namespaces",
            path.display(),
            path.display()
        );
    }
    stopping().await;
    // In-flight requests get the shutdown grace; slow and idle clients are closed at once.
    served.stop().await;
    ExitCode::SUCCESS
}

/// Waits for Ctrl-C, or SIGTERM where there are signals.
async fn stopping() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
