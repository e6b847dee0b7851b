//! `sample-controller`: the Foo and Icecream controllers, against a cluster or embedded.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use clap::builder::BoolishValueParser;
use kube_codegen_runtime::client::rate_limit::{self, RateLimit};
use kube_codegen_runtime::leader::LeaderElection;
use kube_codegen_runtime::metrics::Metrics;
use sample_controller::run::{self, Options};

/// The Foo and Icecream controllers, driven by code generated with kube-codegen.
///
/// With no cluster configuration (no --kubeconfig, no KUBECONFIG or ~/.kube/config, not in a
/// pod), or with --embedded, it runs a demo on an in-memory API server and exits. Each flag
/// may be given by the environment variable shown with it (a switch: 1/0, true/false, yes/no).
#[derive(Debug, Parser)]
#[command(name = "sample-controller", version, about, long_about)]
struct Args {
    /// Path to a kubeconfig. Only required if out-of-cluster.
    #[arg(long, env = "KUBECONFIG", value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The address of the Kubernetes API server; overrides the kubeconfig's.
    #[arg(long, env = "KUBERNETES_MASTER", value_name = "URL")]
    master: Option<String>,
    /// Run the demo on the embedded in-memory API server.
    #[arg(long, env = "EMBEDDED", value_parser = BoolishValueParser::new())]
    embedded: bool,
    /// Only watch and reconcile this namespace (default: all).
    #[arg(long, env = "WATCH_NAMESPACE")]
    namespace: Option<String>,
    /// Reconciles running at once per controller (Go's threadiness).
    #[arg(long, env = "CONCURRENCY", default_value_t = 2)]
    concurrency: u16,
    /// Informer resync period, in seconds (0: none).
    #[arg(long, env = "RESYNC_PERIOD", default_value_t = 30)]
    resync_period: u64,
    /// Serve /healthz, /readyz and /metrics on this address.
    #[arg(long, env = "HEALTH_ADDR", value_name = "ADDR")]
    health_addr: Option<SocketAddr>,
    /// Serve /metrics (and the probes) on this address as well.
    #[arg(long, env = "METRICS_ADDR", value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Hold a coordination.k8s.io Lease while reconciling (for replicas > 1).
    #[arg(long, env = "LEADER_ELECT", value_parser = BoolishValueParser::new())]
    leader_elect: bool,
    /// With --leader-elect: a standby starts its informers only once it leads (less memory
    /// on a standby, a failover that lists everything first). Default: standbys keep warm
    /// caches and take over without listing.
    #[arg(long, env = "COLD_STANDBY", value_parser = BoolishValueParser::new())]
    cold_standby: bool,
    /// Lease name.
    #[arg(long, env = "LEASE_NAME", default_value = "sample-controller")]
    lease_name: String,
    /// Lease namespace (default: the --namespace, else `default`).
    #[arg(long, env = "LEASE_NAMESPACE")]
    lease_namespace: Option<String>,
    /// This replica's identity in the lease (default: the host name).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// Requests a second this client sends the API server at most, on average (client-go's
    /// --kube-api-qps). Default: no limit, as kube-rs; Go's clients default to 5.
    #[arg(long, env = "KUBE_API_QPS", value_name = "QPS")]
    kube_api_qps: Option<f64>,
    /// Requests sent at once above --kube-api-qps before it applies (default 10, client-go's).
    #[arg(
        long,
        env = "KUBE_API_BURST",
        value_name = "N",
        requires = "kube_api_qps"
    )]
    kube_api_burst: Option<u32>,
    /// Give each API group and version its own --kube-api-qps and --kube-api-burst, as
    /// client-go's typed clients have when the QPS is left at its default (a Go controller as
    /// it ships: 5 a second for Deployments, 5 for Events, 5 for Foos).
    #[arg(
        long,
        env = "KUBE_API_LIMIT_PER_GROUP_VERSION",
        value_parser = BoolishValueParser::new(),
        requires = "kube_api_qps"
    )]
    kube_api_limit_per_group_version: bool,
    /// Seconds in-flight reconciles get to finish after SIGTERM/SIGINT.
    #[arg(long, env = "SHUTDOWN_DEADLINE", default_value_t = 20)]
    shutdown_deadline: u64,
    /// Seconds one reconcile may run before it is cancelled and retried with backoff
    /// (default: no limit).
    #[arg(long, env = "RECONCILE_TIMEOUT", value_name = "SECONDS")]
    reconcile_timeout: Option<u64>,
    /// Serve Foo's admission and conversion webhooks over HTTPS on this address.
    #[arg(long, env = "WEBHOOK_ADDR", value_name = "ADDR")]
    webhook_addr: Option<SocketAddr>,
    /// The directory of the webhook server's `tls.crt` and `tls.key` (a mounted cert-manager
    /// Secret); read again whenever they change. Without it the controller manages its own
    /// certificate: a CA and certificate in the Secret sample-controller-webhook-cert, the CA
    /// injected into its webhook configurations and Foo's conversion, rotated before expiry.
    #[arg(
        long,
        env = "WEBHOOK_CERT_DIR",
        value_name = "DIR",
        alias = "webhook-cert-dir"
    )]
    cert_dir: Option<PathBuf>,
    /// Development mode, with --webhook-addr: a certificate for that address (in --cert-dir,
    /// or self-managed), and install the webhook configurations on the cluster, pointing at
    /// --webhook-addr (put back at shutdown; what a run that died left is put back at the next
    /// start, or by
    /// `kube-codegen dev restore`).
    #[arg(long, env = "INSTALL_WEBHOOKS", value_parser = BoolishValueParser::new())]
    install_webhooks: bool,
    /// Print the CRDs of Foo and Icecream this binary was built with, as YAML (for
    /// `kubectl apply -f -`), and exit. The files in `artifacts/crds` are written by
    /// `kube-codegen crds` (`hack/update-codegen.sh`).
    #[arg(long)]
    print_crds: bool,
}

impl Args {
    /// The client's rate limit: none unless --kube-api-qps is given.
    fn rate_limit(&self) -> Option<RateLimit> {
        let qps = self.kube_api_qps?;
        let burst = self
            .kube_api_burst
            .unwrap_or(RateLimit::client_go_default().burst());
        let limit = RateLimit::new(qps, burst);
        Some(if self.kube_api_limit_per_group_version {
            limit.per_group_version()
        } else {
            limit
        })
    }
}

/// The cluster's configuration, `None` when there is none to find (then the demo runs
/// embedded); a kubeconfig or `--master` that was given but cannot be used is an error.
async fn client_config(args: &Args) -> Result<Option<kube::Config>, String> {
    let Some(mut config) = kube_codegen_runtime::client::config::load(args.kubeconfig.as_deref())
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    if let Some(master) = &args.master {
        config.cluster_url = master
            .parse()
            .map_err(|e| format!("--master {master}: {e}"))?;
    }
    Ok(Some(config))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.install_webhooks && args.webhook_addr.is_none() {
        eprintln!(
            "error: --install-webhooks (INSTALL_WEBHOOKS) needs --webhook-addr (WEBHOOK_ADDR)"
        );
        return ExitCode::from(2);
    }
    if args.print_crds {
        return match print_crds() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }

    // Listening for SIGTERM from the first instant on a cluster: a signal during client
    // setup, cache sync or the wait for the lease stops the process as promptly as later.
    let shutdown = (!args.embedded).then(kube_codegen_runtime::manager::signals);
    let metrics = Metrics::new();
    let options = Options {
        namespace: args.namespace.clone(),
        concurrency: args.concurrency.max(1),
        reconcile_timeout: args.reconcile_timeout.map(Duration::from_secs),
        resync: (args.resync_period > 0).then(|| Duration::from_secs(args.resync_period)),
        health_addr: args.health_addr,
        metrics_addr: args.metrics_addr,
        leader_election: args.leader_elect.then(|| {
            let namespace = args
                .lease_namespace
                .clone()
                .or(args.namespace.clone())
                .unwrap_or_else(|| "default".into());
            let identity = args.identity.clone().unwrap_or_else(hostname);
            LeaderElection::new(&args.lease_name, &namespace, &identity)
        }),
        warm_standby: !args.cold_standby,
        shutdown_deadline: Duration::from_secs(args.shutdown_deadline),
        webhooks: args.webhook_addr.map(|addr| run::WebhookOptions {
            addr,
            cert_dir: args.cert_dir.clone(),
            install: args.install_webhooks,
        }),
        metrics: metrics.clone(),
    };
    let config = if args.embedded {
        None
    } else {
        match client_config(&args).await {
            Ok(config) => config,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    // The embedded demo prints its own report; its logs stay at warnings unless RUST_LOG says
    // otherwise. kube-client logs a whole response body at warn when it cannot decode it (a
    // list of thousands after a kind's schema moved); the informers report that once,
    // bounded, so kube-client's own is left to RUST_LOG.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if config.is_none() {
            "warn,kube_client::client=error"
        } else {
            "info,kube_client::client=error"
        })
    });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let result = match (config, shutdown) {
        (Some(config), Some(shutdown)) => {
            match rate_limit::counted_client(config, args.rate_limit(), &metrics) {
                Ok(client) => run::run(client, options, shutdown).await.map(|_| ()),
                Err(e) => Err(e.into()),
            }
        }
        (_, shutdown) => {
            if let Some(shutdown) = shutdown {
                // The demo ends by itself; a signal ends it early.
                tokio::spawn(async move {
                    shutdown.await;
                    std::process::exit(130);
                });
            }
            if !args.embedded {
                println!(
                    "no cluster configuration found (no --kubeconfig, KUBECONFIG, ~/.kube/config or in-cluster service account): running embedded"
                );
            }
            println!(
                "running the Foo and Icecream controllers on the embedded in-memory API server\n"
            );
            sample_controller::embedded::demo(options).await
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The CRDs as YAML documents on stdout.
fn print_crds() -> Result<(), String> {
    let crds =
        sample_controller::generated::crds().map_err(|e| format!("cannot build the CRDs: {e}"))?;
    for crd in crds {
        let yaml = serde_saphyr::to_string(&crd)
            .map_err(|e| format!("cannot write the CRD as YAML: {e}"))?;
        print!("---\n{yaml}");
    }
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "sample-controller".into())
}
