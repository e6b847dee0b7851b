//! The controller process: one informer factory, both controllers on its shared caches,
//! under the runtime's manager (leader election with warm standby, probes and metrics,
//! graceful shutdown).

// Leader election holds a coordination.k8s.io Lease (`kube_codegen_runtime::leader`).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt, Shared};
use kube::Client;
use kube_codegen_runtime::controller::{Controller, ControllerOptions};
use kube_codegen_runtime::events::{Recorder, Reporter};
use kube_codegen_runtime::leader::LeaderElection;
use kube_codegen_runtime::manager::{Manager, ManagerOptions};
use kube_codegen_runtime::metrics::Metrics;
use kube_codegen_runtime::{FieldManager, Handlers, ManagedFieldsAside, SharedInformerFactory};

use crate::controller::{self, Context};
use crate::generated::{Clientset, InformerFactoryExt};

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only watch and reconcile this namespace.
    pub namespace: Option<String>,
    /// Reconciles running at once, per controller (Go's threadiness).
    pub concurrency: u16,
    /// How long one reconcile may run before it is cancelled and retried (`None`: no limit).
    pub reconcile_timeout: Option<Duration>,
    /// Informer resync period.
    pub resync: Option<Duration>,
    /// Where to serve `/healthz`, `/readyz` and `/metrics`.
    pub health_addr: Option<SocketAddr>,
    /// Where to serve `/metrics` (and the probes) as well.
    pub metrics_addr: Option<SocketAddr>,
    /// Leader election on a Lease, for replicas > 1.
    pub leader_election: Option<LeaderElection>,
    /// With leader election, whether standbys keep their caches warm (see
    /// `ManagerOptions::warm_standby`).
    pub warm_standby: bool,
    /// How long in-flight reconciles may take to finish after shutdown starts.
    pub shutdown_deadline: Duration,
    /// Serve Foo's admission webhooks.
    pub webhooks: Option<WebhookOptions>,
    /// Where everything reports (the client's requests included when its layer is used).
    pub metrics: Metrics,
}

/// Where and how Foo's admission webhooks are served.
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    /// The HTTPS address.
    pub addr: SocketAddr,
    /// The directory of `tls.crt` and `tls.key` (a mounted cert-manager Secret). `None`:
    /// the operator manages its own certificate (a CA and certificate in the Secret
    /// [`WEBHOOK_CERT_SECRET`], the CA injected into the webhook configurations and Foo's
    /// conversion, rotated before expiry; see `kube_codegen_runtime::webhook::certs`).
    pub cert_dir: Option<std::path::PathBuf>,
    /// Development mode: a certificate for `addr` (made in `cert_dir`, or self-managed) and
    /// the webhook configurations installed on the cluster pointing at `addr` (removed
    /// again at shutdown).
    pub install: bool,
}

/// The Secret holding the self-managed webhook certificate, in [`WEBHOOK_NAMESPACE`].
pub const WEBHOOK_CERT_SECRET: &str = "sample-controller-webhook-cert";
/// The webhook Service and its namespace, as the `+kubebuilder:webhook` markers name them.
pub const WEBHOOK_SERVICE: &str = "sample-controller-webhook";
/// See [`WEBHOOK_SERVICE`].
pub const WEBHOOK_NAMESPACE: &str = "default";

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: None,
            concurrency: 2,
            reconcile_timeout: None,
            resync: Some(Duration::from_secs(30)),
            health_addr: None,
            metrics_addr: None,
            leader_election: None,
            warm_standby: true,
            shutdown_deadline: Duration::from_secs(20),
            webhooks: None,
            metrics: Metrics::new(),
        }
    }
}

/// The field manager of every write the controllers make.
pub const FIELD_MANAGER: &str = "sample-controller";

/// A clonable "shutdown has started" signal.
pub type ShutdownSignal = Shared<BoxFuture<'static, ()>>;

/// Turns any future into a [`ShutdownSignal`].
pub fn shutdown_signal(
    f: impl std::future::Future<Output = ()> + Send + 'static,
) -> ShutdownSignal {
    f.boxed().shared()
}

/// Runs both controllers until `shutdown` resolves (or the lease is lost), then stops
/// taking work, lets in-flight reconciles finish within the deadline, and releases the
/// lease. Returns the metrics, for a report.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: ShutdownSignal,
) -> anyhow_free::Result<Metrics> {
    let (factory, deployment_fields) = informer_factory(&client, &options);
    let metrics = options.metrics.clone();
    let mut manager = Manager::new(
        client.clone(),
        factory.clone(),
        ManagerOptions {
            health_addr: options.health_addr,
            metrics_addr: options.metrics_addr,
            leader_election: options.leader_election.clone(),
            warm_standby: options.warm_standby,
            graceful_shutdown_timeout: options.shutdown_deadline,
            metrics: metrics.clone(),
            ..ManagerOptions::default()
        },
        shutdown,
    );
    let foos = factory.samplecontroller().v1alpha1().foos();
    let icecreams = factory.samplecontroller().v1alpha1().icecreams();
    let deployments = factory.apps().v1().deployments();
    let pods = factory.core().v1().pods();
    pods.informer()
        .add_event_handler(Handlers::new().on_update(log_scheduled));

    let identity = options
        .leader_election
        .as_ref()
        .map(|l| l.identity().to_owned());
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: FIELD_MANAGER.into(),
            instance: identity,
        },
    );
    let clients = Clientset::new(client.clone(), FieldManager::new(FIELD_MANAGER).force());
    let ctx = Arc::new(Context::new(
        clients,
        (
            foos.lister(),
            icecreams.lister(),
            deployments.lister(),
            pods.lister(),
        ),
        deployment_fields,
        recorder,
    ));
    let controller_options = ControllerOptions {
        concurrency: usize::from(options.concurrency.max(1)),
        timeout: options.reconcile_timeout,
        ..ControllerOptions::default()
    };
    manager.add(
        Controller::new("foo", foos.informer().clone())
            .owns(deployments.informer().clone())
            .with_options(controller_options.clone()),
        controller::foo::reconcile,
        ctx.clone(),
    );
    manager.add(
        Controller::new("icecream", icecreams.informer().clone())
            .owns(deployments.informer().clone())
            .watches(pods.informer().clone(), controller::icecream::pod_owner)
            .with_options(controller_options),
        controller::icecream::reconcile,
        ctx.clone(),
    );
    if let Some(webhooks) = options.webhooks.clone() {
        // Webhooks answer from the Deployment cache, once it has its first list.
        let synced = deployments.informer().synced();
        let (leading, stop) = (
            options.leader_election.is_some().then(|| manager.leading()),
            manager.stopping(),
        );
        let deployments = deployments.clone();
        let client = client.clone();
        manager.add_runnable("webhooks", async move {
            tokio::select! {
                _ = synced => {}
                () = stop.clone() => return Ok(()),
            }
            let served =
                serve_webhooks(&client, &webhooks, leading, &deployments, stop.clone()).await?;
            // Served until stopping; then what development mode installed is put back.
            stop.await;
            served.stopped().await;
            Ok::<_, anyhow_free::Error>(())
        });
    }
    let result = manager.run().await;
    ctx.flush_events(options.shutdown_deadline).await;
    result?;
    tracing::info!("stopped");
    Ok(metrics)
}

/// The one informer factory of the process, scoped and resynced as `options` say, and where
/// it keeps this controller's `managedFields` entries of Deployments.
fn informer_factory(
    client: &Client,
    options: &Options,
) -> (SharedInformerFactory, ManagedFieldsAside) {
    // `sync_deployment` extracts what this controller owns from the cached Deployment, which
    // needs this controller's `managedFields` entries: kept aside as JSON text (about a tenth
    // of their size as a parsed tree), the other managers' dropped, as is every other
    // kind's managedFields.
    let deployment_fields = ManagedFieldsAside::new([FIELD_MANAGER]);
    let mut builder = SharedInformerFactory::builder(client.clone())
        .managed_fields_aside_for::<k8s_openapi::api::apps::v1::Deployment>(
        deployment_fields.clone(),
    );
    if let Some(ns) = &options.namespace {
        builder = builder.namespace(ns);
    }
    if let Some(period) = options.resync {
        builder = builder.default_resync(period);
    }
    (builder.build(), deployment_fields)
}

/// Logs a Pod's scheduling, seen as an update that gives it a node.
fn log_scheduled(
    old: &Arc<k8s_openapi::api::core::v1::Pod>,
    new: &Arc<k8s_openapi::api::core::v1::Pod>,
) {
    let node =
        |p: &k8s_openapi::api::core::v1::Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    if let (None, Some(node)) = (node(old), node(new)) {
        tracing::info!(pod = %controller::key(&**new), node, "pod scheduled");
    }
}

/// What development mode installed on the cluster: the webhook configurations and Foo's
/// conversion, removed (put back) at shutdown.
struct DevInstalled {
    webhooks: kube_codegen_runtime::webhook::dev::Installed,
    conversion: kube_codegen_runtime::webhook::dev::InstalledConversion,
}

impl DevInstalled {
    async fn uninstall(self) {
        if let Err(err) = self.webhooks.uninstall().await {
            tracing::warn!(%err, "could not remove the development webhook configurations");
        }
        if let Err(err) = self.conversion.uninstall().await {
            tracing::warn!(%err, "could not put back Foo's conversion");
        }
    }
}

/// Where the serving certificate comes from.
enum Tls {
    /// `tls.crt` and `tls.key` in a directory.
    Dir(std::path::PathBuf),
    /// Self-managed, in the Secret [`WEBHOOK_CERT_SECRET`].
    SelfManaged(kube_codegen_runtime::webhook::certs::SelfSignedCerts),
}

impl Tls {
    fn new(
        client: &Client,
        options: &WebhookOptions,
        leading: Option<tokio::sync::watch::Receiver<bool>>,
    ) -> anyhow_free::Result<Self> {
        use kube_codegen_runtime::webhook::certs::{CertConfig, SelfSignedCerts};
        if let Some(dir) = &options.cert_dir {
            return Ok(Self::Dir(dir.clone()));
        }
        let mut config = CertConfig::new(WEBHOOK_CERT_SECRET, WEBHOOK_NAMESPACE, WEBHOOK_SERVICE);
        // The configurations `kube-codegen webhooks` writes from the markers, and Foo's CRD.
        config.webhook_configurations = vec![FIELD_MANAGER.to_owned()];
        config.crds = vec![crate::webhook::FOO_CRD.to_owned()];
        config.field_manager = FIELD_MANAGER.to_owned();
        if options.install {
            config.hosts = vec![dev_host(options.addr)];
        }
        let certs = SelfSignedCerts::new(client.clone(), config)?;
        Ok(Self::SelfManaged(match leading {
            Some(leading) => certs.leader(leading),
            None => certs,
        }))
    }
}

/// What the API server dials in development mode: the address itself, or loopback for an
/// unspecified one.
fn dev_host(addr: SocketAddr) -> String {
    match addr.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
        ip => ip.to_string(),
    }
}

/// The webhook server's task, what development mode installed, and the task keeping a
/// self-managed certificate fresh.
struct Webhooks {
    installed: Option<DevInstalled>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    certs: Option<tokio::task::JoinHandle<()>>,
}

impl Webhooks {
    /// Once `stop` completed: waits for the server and the certificate manager, and puts
    /// back what development mode wrote (after the manager stopped writing).
    async fn stopped(self) {
        if let Some(certs) = self.certs {
            let _ = certs.await;
        }
        if let Some(installed) = self.installed {
            installed.uninstall().await;
        }
        let _ = self.server.await;
    }
}

/// Serves Foo's webhooks (admission and conversion) on `options.addr` until `stop`, with
/// the certificate of `tls`; in development mode, first points the configurations and
/// Foo's CRD here.
async fn serve_webhooks(
    client: &Client,
    options: &WebhookOptions,
    leading: Option<tokio::sync::watch::Receiver<bool>>,
    deployments: &crate::generated::apps::v1::DeploymentInformer,
    stop: ShutdownSignal,
) -> anyhow_free::Result<Webhooks> {
    use kube_codegen_runtime::webhook::dev;
    let tls = Tls::new(client, options, leading)?;
    let deployments = deployments.lister();
    let host = dev_host(options.addr);
    // The CA to install in development mode (a self-managed one is the Secret's).
    let (ca, certs) = match &tls {
        Tls::Dir(dir) if options.install => (
            Some(dev::certificate(dir, std::slice::from_ref(&host))?),
            None,
        ),
        Tls::Dir(_) => (None, None),
        Tls::SelfManaged(certs) => {
            // The first pass before serving: the certificate exists (or this fails clearly).
            certs.sync().await?;
            certs.ready(Duration::from_secs(60)).await?;
            let ca = options
                .install
                .then(|| certs.served().ca_bundle())
                .flatten();
            (ca, Some(certs.clone()))
        }
    };
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let bound = listener.local_addr()?;
    let server = crate::webhook::server(crate::webhook::FooWebhook { deployments })
        .conversions(crate::generated::conversion::conversions());
    tracing::info!(%bound, paths = ?server.paths(), "serving Foo's admission and conversion webhooks");
    let task = match tls {
        Tls::Dir(dir) => tokio::spawn(server.serve_on(listener, dir, stop.clone())),
        Tls::SelfManaged(certs) => {
            tokio::spawn(server.serve_with(listener, certs.served(), stop.clone()))
        }
    };
    let installed = match ca {
        Some(ca) => Some(dev_install(client, &host, bound.port(), &ca).await?),
        None => None,
    };
    // Started once development mode wrote the configurations: it keeps their CA current.
    let certs = certs.map(|certs| tokio::spawn(certs.run(stop)));
    Ok(Webhooks {
        installed,
        server: task,
        certs,
    })
}

/// Development mode: puts back what a run that died left, then points the webhook
/// configurations and Foo's conversion at `https://host:port` with `ca`.
async fn dev_install(
    client: &Client,
    host: &str,
    port: u16,
    ca: &str,
) -> anyhow_free::Result<DevInstalled> {
    use kube_codegen_runtime::webhook::dev;
    // What a development run that died left (its records say so) is put back first.
    let restored = dev::restore(client, Some(FIELD_MANAGER)).await?;
    if !restored.is_empty() {
        tracing::warn!(objects = ?restored, "put back what an earlier development run left");
    }
    let configurations: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(crate::webhook::MANIFESTS)?;
    let base = format!("https://{host}:{port}");
    let webhooks = dev::install(client, &configurations, &base, ca, FIELD_MANAGER).await?;
    let path = kube_codegen_runtime::webhook::conversion::path::<
        crate::apis::samplecontroller::v1alpha1::Foo,
    >();
    let url = format!("{base}{path}");
    let conversion =
        dev::install_conversion(client, crate::webhook::FOO_CRD, &url, ca, FIELD_MANAGER).await;
    let conversion = match conversion {
        Ok(c) => c,
        Err(err) => {
            let _ = webhooks.uninstall().await;
            return Err(err.into());
        }
    };
    tracing::info!(objects = ?webhooks.objects(), url = %base, "installed the webhook configurations and Foo's conversion (development mode)");
    Ok(DevInstalled {
        webhooks,
        conversion,
    })
}

/// A minimal boxed error, to keep the sample free of error-handling crates.
pub mod anyhow_free {
    /// Any error.
    pub type Error = Box<dyn std::error::Error + Send + Sync>;
    /// A result with any error.
    pub type Result<T> = std::result::Result<T, Error>;
}
