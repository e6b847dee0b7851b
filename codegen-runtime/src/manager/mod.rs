//! The process around the controllers, controller-runtime's `Manager`: one informer factory,
//! one [`Metrics`], the probes and `/metrics`, leader election with warm standby, and the
//! order Kubernetes expects at start and stop. What an operator's `main` would otherwise
//! write by hand:
//!
//! 1. [`Manager::new`] starts campaigning for the lease (when asked) at once; controllers
//!    are added with [`Manager::add`], other tasks (a webhook server) with
//!    [`Manager::add_runnable`];
//! 2. [`Manager::run`] serves the probes, starts the informers and waits for their first
//!    lists, then reports ready. A standby fills its caches and its controllers' queues
//!    like the leader, and reconciles the moment it leads;
//! 3. the shutdown signal (or a lost lease, or a task that failed) stops everything at any
//!    point, cache sync and the wait for the lease included: reconciles in flight get
//!    [`ManagerOptions::graceful_shutdown_timeout`] (25 s, inside Kubernetes' default grace
//!    period of 30 s), the lease is released, and `run` returns.

mod probes;
mod signals;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::controller::{Action, Controller};
use crate::informer::factory::SharedInformerFactory;
use crate::leader::{Elector, Ended, LeaderElection};
use crate::metrics::Metrics;
pub use signals::signals;

/// A clonable "stop now" signal: every task of a [`Manager`] holds one.
pub type Stopping = Shared<BoxFuture<'static, ()>>;

/// How a [`Manager`] runs.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// Where to serve `/healthz`, `/livez`, `/readyz` and `/metrics` (`None`: nowhere).
    pub health_addr: Option<SocketAddr>,
    /// Where to serve them as well, for a scrape on its own port.
    pub metrics_addr: Option<SocketAddr>,
    /// Campaign for a lease; without it this replica leads at once.
    pub leader_election: Option<LeaderElection>,
    /// With leader election: whether a standby starts its informers (and fills its
    /// controllers' queues) before it leads, so failover needs no list (on by default).
    /// Off, a standby holds no caches until it leads: less memory, a slower failover.
    pub warm_standby: bool,
    /// How long the informers may take to cache their first lists (2 minutes, as
    /// controller-runtime's `CacheSyncTimeout`).
    pub cache_sync_timeout: Duration,
    /// How long reconciles in flight may take to finish once stopping starts (25 s).
    pub graceful_shutdown_timeout: Duration,
    /// Where the controllers, the lease and the client report (a fresh one by default;
    /// pass the one whose [`Metrics::rest_client`] layer counts the client's requests).
    pub metrics: Metrics,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            health_addr: None,
            metrics_addr: None,
            leader_election: None,
            warm_standby: true,
            cache_sync_timeout: Duration::from_secs(120),
            graceful_shutdown_timeout: Duration::from_secs(25),
            metrics: Metrics::new(),
        }
    }
}

/// Why [`Manager::run`] ended other than by the shutdown signal.
#[derive(Debug)]
pub enum ManagerError {
    /// An address of the probes could not be bound.
    Bind(SocketAddr, std::io::Error),
    /// These informers had not cached their first list within the timeout.
    CacheSync(Vec<String>),
    /// The lease was lost (controller-runtime exits the process then: another replica leads).
    LeaseLost,
    /// A task of [`Manager::add_runnable`] failed.
    Runnable(String, String),
}

impl std::fmt::Display for ManagerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManagerError::Bind(addr, e) => write!(f, "cannot serve the probes on {addr}: {e}"),
            ManagerError::CacheSync(names) => {
                write!(f, "the caches of {} did not sync in time", names.join(", "))
            }
            ManagerError::LeaseLost => f.write_str("lost the leader lease"),
            ManagerError::Runnable(name, e) => write!(f, "{name} failed: {e}"),
        }
    }
}

impl std::error::Error for ManagerError {}

type Task = BoxFuture<'static, Result<(), String>>;

/// See the module's documentation.
pub struct Manager {
    factory: SharedInformerFactory,
    options: ManagerOptions,
    elector: Option<Elector>,
    leading: watch::Receiver<bool>,
    /// Keeps `leading` at `true` without leader election.
    _always: Option<watch::Sender<bool>>,
    /// Stops everything when a task fails.
    abort: watch::Sender<bool>,
    stopping: Stopping,
    ready: Arc<AtomicBool>,
    tasks: Vec<(String, Task)>,
    listeners: Vec<(tokio::net::TcpListener, SocketAddr)>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field(
                "tasks",
                &self.tasks.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager of `factory`'s informers on `client`, stopping when `shutdown` completes
    /// (pass [`signals()`]); campaigns for the lease at once when
    /// [`ManagerOptions::leader_election`] is set. Call inside a tokio runtime.
    pub fn new(
        client: Client,
        factory: SharedInformerFactory,
        mut options: ManagerOptions,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        let shutdown = shutdown.boxed().shared();
        let (abort, aborted) = watch::channel(false);
        let aborted = async move {
            let mut aborted = aborted;
            let _ = aborted.wait_for(|a| *a).await;
        }
        .boxed()
        .shared();
        let campaign_stop = futures::future::select(shutdown.clone(), aborted.clone()).map(|_| ());
        let elector = options
            .leader_election
            .take()
            .map(|election| election.start(client, &options.metrics, campaign_stop));
        let (leading, always) = match &elector {
            Some(elector) => (elector.leading(), None),
            None => {
                let (tx, rx) = watch::channel(true);
                (rx, Some(tx))
            }
        };
        let lost: BoxFuture<'static, ()> = match &elector {
            Some(elector) => elector.ended().boxed(),
            None => futures::future::pending().boxed(),
        };
        let stopping = async move {
            futures::pin_mut!(lost);
            let stop = futures::future::select(shutdown, aborted);
            futures::future::select(stop, lost).await;
        }
        .boxed()
        .shared();
        Self {
            factory,
            options,
            elector,
            leading,
            _always: always,
            abort,
            stopping,
            ready: Arc::new(AtomicBool::new(false)),
            tasks: Vec::new(),
            listeners: Vec::new(),
        }
    }

    /// The metrics everything reports to.
    pub fn metrics(&self) -> &Metrics {
        &self.options.metrics
    }

    /// The informer factory.
    pub fn informers(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// `true` while this replica leads (always, without leader election): for what only
    /// the leader may do outside a controller (rotating a shared certificate).
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Completes when stopping starts (shutdown, a lost lease, a failed task): hand it to a
    /// task of [`Manager::add_runnable`].
    pub fn stopping(&self) -> Stopping {
        self.stopping.clone()
    }

    /// Runs `controller` with `reconcile` and `context`: its metrics go to
    /// [`Manager::metrics`], it reconciles only while this replica leads, and reconciles in
    /// flight at shutdown get the graceful timeout. Its event handlers are registered now,
    /// before the informers start.
    pub fn add<K, C, F, R, E>(
        &mut self,
        mut controller: Controller<K>,
        reconcile: F,
        context: Arc<C>,
    ) where
        K: Resource<DynamicType = ()>
            + Clone
            + std::fmt::Debug
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let options = controller.options_mut();
        options.leading = Some(self.leading.clone());
        options.drain = self.options.graceful_shutdown_timeout;
        let controller = controller.with_metrics(&self.options.metrics);
        let name = format!("controller {}", controller.name());
        let running = controller.run(reconcile, context, self.stopping.clone());
        self.tasks.push((name, running.map(Ok).boxed()));
    }

    /// Runs `task` beside the controllers (a webhook server, say); it should complete soon
    /// after [`Manager::stopping`]. When it fails, everything stops and
    /// [`Manager::run`] returns its error.
    pub fn add_runnable<E: std::fmt::Display>(
        &mut self,
        name: &str,
        task: impl Future<Output = Result<(), E>> + Send + 'static,
    ) {
        self.tasks.push((
            name.to_owned(),
            task.map(|r| r.map_err(|e| e.to_string())).boxed(),
        ));
    }

    /// Binds the probes' addresses now (else [`Manager::run`] does): the addresses bound,
    /// for a port chosen by the system.
    pub async fn bind(&mut self) -> Result<Vec<SocketAddr>, ManagerError> {
        if self.listeners.is_empty() {
            let addrs = self
                .options
                .health_addr
                .iter()
                .chain(&self.options.metrics_addr);
            for addr in addrs.copied().collect::<Vec<_>>() {
                let bound = probes::bind(addr)
                    .await
                    .map_err(|e| ManagerError::Bind(addr, e))?;
                tracing::info!(addr = %bound.1, "serving /healthz, /readyz and /metrics");
                self.listeners.push(bound);
            }
        }
        Ok(self.listeners.iter().map(|(_, a)| *a).collect())
    }

    /// Whether the caches are synced and the manager is running (what `/readyz` says).
    pub fn ready(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.ready)
    }

    /// Runs until stopping (see the module's documentation). `Ok` after the shutdown
    /// signal; an error when the lease was lost, a cache did not sync or a task failed.
    pub async fn run(mut self) -> Result<(), ManagerError> {
        self.bind().await?;
        self.options.metrics.watch_informers(&self.factory);
        let servers: Vec<_> = std::mem::take(&mut self.listeners)
            .into_iter()
            .map(|(listener, _)| {
                probes::serve(
                    listener,
                    Arc::clone(&self.ready),
                    self.options.metrics.clone(),
                )
            })
            .collect();
        let mut tasks = tokio::task::JoinSet::new();
        for (name, task) in std::mem::take(&mut self.tasks) {
            let abort = self.abort.clone();
            tasks.spawn(async move {
                let result = task.await;
                if let Err(e) = &result {
                    tracing::error!(task = %name, error = %e, "stopping: a task failed");
                    abort.send_replace(true);
                }
                result.map_err(|e| (name, e))
            });
        }
        if !self.options.warm_standby && self.elector.is_some() {
            // A cold standby: nothing to sync until it leads.
            self.ready.store(true, Ordering::Relaxed);
            let mut leading = self.leading.clone();
            tokio::select! {
                () = self.stopping.clone() => {}
                _ = leading.wait_for(|l| *l) => {}
            }
            self.ready.store(false, Ordering::Relaxed);
        }
        self.factory.start();
        let mut failure = None;
        let synced = self
            .factory
            .wait_for_cache_sync(self.options.cache_sync_timeout);
        tokio::select! {
            () = self.stopping.clone() => {}
            synced = synced => {
                let late: Vec<String> = synced.into_iter().filter(|(_, ok)| !ok).map(|(n, _)| n).collect();
                if late.is_empty() {
                    tracing::info!("caches synced");
                    self.ready.store(true, Ordering::Relaxed);
                } else {
                    failure = Some(ManagerError::CacheSync(late));
                    self.abort.send_replace(true);
                }
            }
        }
        self.stopping.clone().await;
        self.ready.store(false, Ordering::Relaxed);
        // The controllers drain within the graceful timeout; a task that outlives it (and a
        // second for the rest) is cut off.
        let deadline = self.options.graceful_shutdown_timeout + Duration::from_secs(1);
        let joined = tokio::time::timeout(deadline, async {
            let mut first = None;
            while let Some(joined) = tasks.join_next().await {
                if let Ok(Err((name, e))) = joined {
                    first.get_or_insert(ManagerError::Runnable(name, e));
                }
            }
            first
        })
        .await;
        let task_failure = match joined {
            Ok(first) => first,
            Err(_) => {
                tracing::warn!(
                    ?deadline,
                    "tasks still running at the shutdown deadline are cancelled"
                );
                tasks.abort_all();
                None
            }
        };
        self.factory.shutdown().await;
        for server in servers {
            server.abort();
        }
        let lost = match self.elector.take() {
            Some(elector) => elector.stopped().await == Ended::Lost,
            None => false,
        };
        match failure.or(task_failure) {
            Some(e) => Err(e),
            None if lost => Err(ManagerError::LeaseLost),
            None => Ok(()),
        }
    }
}
