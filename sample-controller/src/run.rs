//! The controller process: one informer factory, both controllers on its shared streams,
//! leader election, health and metrics, graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use futures::future::{BoxFuture, FutureExt, Shared};
use kube::Client;
use kube::runtime::controller::{Config, Controller};
use kube_codegen_runtime::events::{Recorder, Reporter};
use kube_codegen_runtime::{FieldManager, Handlers, ManagedFieldsAside, SharedInformerFactory};

use crate::controller::{self, Context};
use crate::generated::{Clientset, InformerFactoryExt};
use crate::health::Health;
use crate::metrics::Metrics;

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only watch and reconcile this namespace.
    pub namespace: Option<String>,
    /// Reconciles running at once, per controller (Go's threadiness).
    pub concurrency: u16,
    /// Informer resync period.
    pub resync: Option<Duration>,
    /// Where to serve `/healthz`, `/readyz` and `/metrics`.
    pub health_addr: Option<SocketAddr>,
    /// Where to serve `/metrics` (and the probes) as well.
    pub metrics_addr: Option<SocketAddr>,
    /// Leader election on a Lease, for replicas > 1.
    pub leader_election: Option<LeaseOptions>,
    /// How long in-flight reconciles may take to finish after shutdown starts.
    pub shutdown_deadline: Duration,
    /// Serve Foo's admission webhooks.
    pub webhooks: Option<WebhookOptions>,
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
            resync: Some(Duration::from_secs(30)),
            health_addr: None,
            metrics_addr: None,
            leader_election: None,
            shutdown_deadline: Duration::from_secs(20),
            webhooks: None,
        }
    }
}

/// The Lease to hold while reconciling.
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// Lease name.
    pub name: String,
    /// Lease namespace.
    pub namespace: String,
    /// This replica's identity (pod name).
    pub identity: String,
    /// Lease duration in seconds.
    pub duration: u64,
}

/// The field manager of every write the controllers make.
pub const FIELD_MANAGER: &str = "sample-controller";

/// A clonable "shutdown has started" signal.
pub type ShutdownSignal = Shared<BoxFuture<'static, ()>>;

/// Turns any future into a [`ShutdownSignal`].
pub fn shutdown_signal(f: impl Future<Output = ()> + Send + 'static) -> ShutdownSignal {
    f.boxed().shared()
}

/// Runs both controllers until `shutdown` resolves (or the lease is lost), then stops
/// taking work, lets in-flight reconciles finish within the deadline, and releases the lease.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: ShutdownSignal,
) -> anyhow_free::Result<Arc<Health>> {
    let metrics = Arc::new(Metrics::default());
    let health = Arc::new(Health {
        metrics: metrics.clone(),
        ..Health::default()
    });
    for addr in options.health_addr.iter().chain(&options.metrics_addr) {
        let (bound, _task) = crate::health::serve(*addr, health.clone()).await?;
        tracing::info!(%bound, "serving /healthz, /readyz and /metrics");
    }
    let Election {
        lost: lease_lost,
        task: lease_task,
        leading,
        stop,
    } = elect(&client, &options, &shutdown, &health).await?;

    let (factory, deployment_fields) = informer_factory(&client, &options);
    let _ = metrics.informers.set(factory.clone());
    let foos = factory.samplecontroller().v1alpha1().foos();
    let icecreams = factory.samplecontroller().v1alpha1().icecreams();
    let deployments = factory.apps().v1().deployments();
    let pods = factory.core().v1().pods();
    pods.informer()
        .add_event_handler(Handlers::new().on_update(log_scheduled));

    let identity = options.leader_election.as_ref().map(|l| l.identity.clone());
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
        metrics,
    ));
    let config = Config::default().concurrency(options.concurrency);
    let foo_controller =
        Controller::for_shared_stream(foos.informer().subscribe(), foos.informer().store())
            .watches_shared_stream(
                deployments.informer().subscribe(),
                controller::foo::owner_of(foos.lister()),
            )
            .with_config(config.clone())
            .graceful_shutdown_on(stop.clone())
            .run(
                controller::foo::reconcile,
                |foo, err, ctx| controller::backoff(&*foo, err, &ctx),
                ctx.clone(),
            )
            .for_each(|_| async {});
    let icecream_controller = Controller::for_shared_stream(
        icecreams.informer().subscribe(),
        icecreams.informer().store(),
    )
    .watches_shared_stream(
        deployments.informer().subscribe(),
        controller::icecream::owner_of(icecreams.lister()),
    )
    .watches_shared_stream(pods.informer().subscribe(), controller::icecream::pod_owner)
    .with_config(config)
    .graceful_shutdown_on(stop.clone())
    .run(
        controller::icecream::reconcile,
        |i, err, ctx| controller::backoff(&*i, err, &ctx),
        ctx.clone(),
    )
    .for_each(|_| async {});

    factory.start();
    sync_caches(&factory, options.concurrency).await?;
    // Webhooks answer from the same caches, once they are synced.
    let webhooks = match &options.webhooks {
        Some(w) => Some(serve_webhooks(&client, w, leading, &deployments, stop.clone()).await?),
        None => {
            // Every holder of the leadership signal must be gone for the lease to be released.
            drop(leading);
            None
        }
    };
    health.ready.store(true, Ordering::Relaxed);

    let controllers = futures::future::join(foo_controller, icecream_controller);
    tokio::select! {
        _ = controllers => {}
        // After shutdown starts, in-flight reconciles get the deadline to finish.
        _ = async { stop.clone().await; tokio::time::sleep(options.shutdown_deadline).await } => {
            tracing::warn!(deadline = ?options.shutdown_deadline, "reconciles did not finish in time");
        }
    }
    health.ready.store(false, Ordering::Relaxed);
    ctx.flush_events(options.shutdown_deadline).await;
    if let Some(webhooks) = webhooks {
        webhooks.stopped().await;
    }
    factory.shutdown().await;
    if let Some(task) = lease_task {
        // Dropping every holder of the leadership signal releases the lease.
        drop(stop);
        drop(lease_lost);
        let _ = task.await;
    }
    tracing::info!("stopped");
    Ok(health)
}

/// Leader election's part in a run: the lease's watch (`None` without election), and the
/// signal that stops reconciling (shutdown, or the lease lost).
struct Election {
    lost: Option<ShutdownSignal>,
    task: Option<tokio::task::JoinHandle<()>>,
    leading: Option<tokio::sync::watch::Receiver<bool>>,
    stop: ShutdownSignal,
}

/// Waits for the lease when leader election is on (then the process is ready: followers
/// wait here); losing the lease later stops everything.
async fn elect(
    client: &Client,
    options: &Options,
    shutdown: &ShutdownSignal,
    health: &Health,
) -> anyhow_free::Result<Election> {
    let Some(lease) = &options.leader_election else {
        return Ok(Election {
            lost: None,
            task: None,
            leading: None,
            stop: shutdown.clone(),
        });
    };
    let (mut is_leader, task) =
        crate::leader::acquire(client.clone(), lease, shutdown.clone()).await?;
    let leading = is_leader.clone();
    health.ready.store(true, Ordering::Relaxed);
    let lost = shutdown_signal(async move {
        let _ = is_leader.wait_for(|leader| !leader).await;
        tracing::warn!("leader lease lost; stopping");
    });
    let stop = shutdown_signal(futures::future::select(shutdown.clone(), lost.clone()).map(|_| ()));
    Ok(Election {
        lost: Some(lost),
        task: Some(task),
        leading: Some(leading),
        stop,
    })
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

/// Waits up to a minute for every started informer's cache; one that does not sync stops
/// the factory and fails the run.
async fn sync_caches(factory: &SharedInformerFactory, concurrency: u16) -> anyhow_free::Result<()> {
    let synced = factory.wait_for_cache_sync(Duration::from_secs(60)).await;
    if let Some((name, _)) = synced.iter().find(|(_, ok)| !**ok) {
        factory.shutdown().await;
        return Err(format!("the cache of {name} did not sync within 60s").into());
    }
    tracing::info!(caches = ?synced.keys().collect::<Vec<_>>(), concurrency, "caches synced; reconciling");
    Ok(())
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
