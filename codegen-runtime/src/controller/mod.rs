//! Controllers on the shared informer factory, with client-go's work queue and
//! controller-runtime's metrics: what every operator otherwise writes by hand.
//!
//! A [`Controller`] of kind `K` reconciles one key (`namespace/name`) at a time per worker:
//!
//! - its own objects' changes queue their keys; objects it [`owns`](Controller::owns) (by
//!   their controller `ownerReference`: apiVersion, kind and uid) queue their owner's; other
//!   kinds it [`watches`](Controller::watches) queue what a mapper returns;
//! - [predicates](Controller::with_predicate) leave out changes that do not matter
//!   ([`predicate::generation_changed`], [`predicate::labels_changed`], ...);
//! - the [`queue`] dedups keys, never gives one key to two workers, backs failures off per
//!   key (5 ms doubling to 1000 s, reset on success) under an overall token bucket (10/s,
//!   bursts of 100), honours [`Action::requeue_after`], and hands out live changes before
//!   those of an initial list or a resync;
//! - [`ControllerOptions`] sets the workers (1 by default), a per-reconcile timeout (none by
//!   default), the backoff, how long shutdown waits for reconciles in flight, and a leader
//!   gate: with leader election, the informers (and the queue) fill while the replica
//!   stands by, and it reconciles the moment it leads;
//! - a reconcile whose error only says the object is gone (a `404` from the API server) is
//!   not a failure;
//! - every reconcile is counted under controller-runtime's names ([`crate::metrics`]);
//! - helpers for what reconciles do: [`conditions`] (`meta.SetStatusCondition`'s rules),
//!   [`finalizer::finalize`] (add, clean up, remove, in the order the server needs), and
//!   [`status::apply_status_if_changed`] (no write when nothing changed).

pub mod backoff;
pub mod conditions;
pub mod finalizer;
pub mod predicate;
pub mod queue;
pub mod status;

use std::fmt::{Debug, Display};
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Resource;
use kube::ResourceExt;
use serde::de::DeserializeOwned;

use crate::informer::SharedInformer;
use crate::metrics::{ControllerLabel, Metrics, ResultLabels};
pub use backoff::Backoff;
pub use queue::{Priority, WorkQueue};

/// The key a controller reconciles: an object's namespace (none for cluster-scoped kinds)
/// and name, controller-runtime's `reconcile.Request`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// The namespace, or `None` for a cluster-scoped kind.
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// The key of `obj`.
    pub fn of<K: ResourceExt>(obj: &K) -> Self {
        Self {
            namespace: obj.namespace(),
            name: obj.name_any(),
        }
    }
}

impl Display for ObjectKey {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A queued key: shared, so the queue's lanes and its index hold one copy.
type Key = Arc<ObjectKey>;

/// What a reconcile asks for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing until the object (or what it owns or watches) changes.
    Done,
    /// Again after the key's backoff, without counting it as an error.
    Requeue,
    /// Again after this long (the backoff is reset).
    RequeueAfter(Duration),
}

impl Action {
    /// [`Action::Done`], kube-runtime's name.
    pub fn await_change() -> Self {
        Action::Done
    }

    /// [`Action::RequeueAfter`].
    pub fn requeue_after(after: Duration) -> Self {
        Action::RequeueAfter(after)
    }
}

/// How a controller runs.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Workers reconciling at once (different keys; 1 by default, as controller-runtime's
    /// `MaxConcurrentReconciles`).
    pub concurrency: usize,
    /// The backoff of failed keys.
    pub backoff: Backoff,
    /// How long one reconcile may run before it is cancelled and counted as an error
    /// (`None`, the default: no limit).
    pub timeout: Option<Duration>,
    /// How long shutdown waits for the reconciles in flight.
    pub drain: Duration,
    /// Whether live changes go ahead of an initial list's and a resync's keys (on by
    /// default; off, the queue is one first-in first-out lane, as client-go's).
    pub live_first: bool,
    /// Whether this replica may reconcile now: with leader election, `false` while it
    /// stands by (its informers already fill its caches and its queue), `true` once it
    /// leads. `None`: always.
    pub leading: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            concurrency: 1,
            backoff: Backoff::default(),
            timeout: None,
            drain: Duration::from_secs(25),
            live_first: true,
            leading: None,
        }
    }
}

/// A registration that runs once the controller knows its queue.
type Hook = Box<dyn FnOnce(&Lanes) + Send>;

/// The queue as the event handlers add to it: in two lanes, or (with
/// [`ControllerOptions::live_first`] off) one.
#[derive(Clone)]
struct Lanes {
    queue: WorkQueue<Key>,
    live_first: bool,
}

impl Lanes {
    fn add(&self, key: ObjectKey, priority: Priority) {
        let key = Arc::new(key);
        let priority = if self.live_first {
            priority
        } else {
            Priority::Low
        };
        self.queue.add(key, priority);
    }
}

/// What a controller waits for before its workers start: an informer's first list.
type Synced = BoxFuture<'static, bool>;

/// A controller of kind `K` (see the module's documentation).
pub struct Controller<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    name: String,
    informer: SharedInformer<K>,
    predicates: Vec<predicate::Predicate<K>>,
    hooks: Vec<Hook>,
    synced: Vec<Synced>,
    options: ControllerOptions,
    metrics: Option<Metrics>,
}

impl<K> Controller<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    /// A controller named `name` (the `controller` label of its metrics) of the objects
    /// `informer` caches. Build it before the informer factory starts, so the initial list
    /// reaches it as such (behind live changes).
    pub fn new(name: &str, informer: SharedInformer<K>) -> Self {
        let synced = vec![informer.synced().boxed()];
        Self {
            name: name.to_owned(),
            informer,
            predicates: Vec::new(),
            hooks: Vec::new(),
            synced,
            options: ControllerOptions::default(),
            metrics: None,
        }
    }

    /// The name (the `controller` label of its metrics).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its options, to change one field (a [`crate::manager::Manager`] sets the leader
    /// gate, the metrics and the shutdown deadline of the controllers it runs).
    pub fn options_mut(&mut self) -> &mut ControllerOptions {
        &mut self.options
    }

    /// Changes of `K` are reconciled only when `predicate` holds for them.
    #[must_use]
    pub fn with_predicate(mut self, predicate: predicate::Predicate<K>) -> Self {
        self.predicates.push(predicate);
        self
    }

    /// Runs with `options`.
    #[must_use]
    pub fn with_options(mut self, options: ControllerOptions) -> Self {
        self.options = options;
        self
    }

    /// Reports to `metrics`.
    #[must_use]
    pub fn with_metrics(mut self, metrics: &Metrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// Objects of kind `C` controlled by a `K` queue their owner when they change: their
    /// controller `ownerReference` names `K`'s apiVersion and kind, and (when the owner is
    /// cached) its uid, so a new owner of a deleted one's name is not woken by what the
    /// deleted one owned.
    #[must_use]
    pub fn owns<C>(self, owned: SharedInformer<C>) -> Self
    where
        C: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
        C::DynamicType: Clone + Eq + Hash + Send + Sync,
    {
        let (api_version, kind) = (K::api_version(&()).into_owned(), K::kind(&()).into_owned());
        let owners = self.informer.clone();
        self.watches(owned, move |obj: &C| {
            let namespace = obj.namespace();
            obj.owner_references()
                .iter()
                .filter(|r| {
                    r.controller == Some(true) && r.api_version == api_version && r.kind == kind
                })
                .filter(|r| {
                    owners
                        .object(namespace.as_deref(), &r.name)
                        .is_none_or(|o| o.meta().uid.as_deref() == Some(r.uid.as_str()))
                })
                .map(|r| ObjectKey {
                    namespace: namespace.clone(),
                    name: r.name.clone(),
                })
                .collect()
        })
    }

    /// Objects of kind `W` queue the keys `mapper` returns when they change.
    #[must_use]
    pub fn watches<W>(
        mut self,
        watched: SharedInformer<W>,
        mapper: impl Fn(&W) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
        W::DynamicType: Clone + Eq + Hash + Send + Sync,
    {
        self.synced.push(watched.synced().boxed());
        self.hooks.push(Box::new(move |queue: &Lanes| {
            let mapper = Arc::new(mapper);
            let handler = enqueue(queue.clone(), watched.clone(), move |o: &W| mapper(o));
            watched.add_event_handler(handler);
        }));
        self
    }

    /// Reconciles until `shutdown` completes: `reconcile(object, context)` for each queued
    /// key whose object is cached (a key whose object is gone is dropped: clean-up on
    /// deletion belongs to a finalizer). Then stops taking keys, waits (at most
    /// [`ControllerOptions::drain`]) for the reconciles in flight, and completes.
    ///
    /// The controller's event handlers are registered when this is called, not when the
    /// future is first polled: call it before the informer factory starts, and the initial
    /// list reaches the controller as such (behind live changes). Workers start once every
    /// cache the controller reads has its first list, as controller-runtime's do.
    pub fn run<C, F, R, E>(
        self,
        reconcile: F,
        context: Arc<C>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> impl Future<Output = ()> + Send + 'static
    where
        C: Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<C>) -> R + Send + Sync + 'static,
        R: Future<Output = Result<Action, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let metrics = self.metrics.clone().unwrap_or_default();
        let queue: WorkQueue<Key> =
            WorkQueue::new(self.options.backoff, Arc::new(metrics.queue(&self.name)));
        let in_flight: Arc<dyn crate::metrics::InFlight> = Arc::new(queue.clone());
        metrics.watch_queue(&self.name, &in_flight);
        let label = ControllerLabel {
            controller: self.name.clone(),
        };
        let concurrency = self.options.concurrency.max(1);
        metrics.start_controller(&self.name, concurrency);
        let predicates = Arc::new(self.predicates);
        let lanes = Lanes {
            queue: queue.clone(),
            live_first: self.options.live_first,
        };
        let own = enqueue_filtered(lanes.clone(), self.informer.clone(), predicates);
        self.informer.add_event_handler(own);
        for hook in self.hooks {
            hook(&lanes);
        }
        let worker = Arc::new(Worker {
            name: self.name,
            informer: self.informer,
            queue: queue.clone(),
            reconcile,
            context,
            timeout: self.options.timeout,
            metrics,
            label,
        });
        let synced = futures::future::join_all(self.synced);
        let leading = self.options.leading;
        let drain = self.options.drain;
        async move {
            // Read by each scrape while the controller runs.
            let _in_flight = in_flight;
            let mut shutdown = std::pin::pin!(shutdown);
            let mut workers = tokio::task::JoinSet::new();
            // Tells workers still standing by for the lease that there is nothing to wait for.
            let (stopping, stopped) = tokio::sync::watch::channel(false);
            tokio::select! {
                () = &mut shutdown => {}
                _ = synced => {
                    for _ in 0..concurrency {
                        let worker = Arc::clone(&worker);
                        let leading = leading.clone();
                        let stopped = stopped.clone();
                        workers.spawn(async move { worker.work(leading, stopped).await });
                    }
                    shutdown.await;
                }
            }
            stopping.send_replace(true);
            queue.shut_down();
            let drained = tokio::time::timeout(drain, async {
                while workers.join_next().await.is_some() {}
            })
            .await;
            if drained.is_err() {
                tracing::warn!(
                    controller = %worker.name,
                    in_flight = queue.processing().len(),
                    "reconciles still running when the shutdown deadline passed are cancelled"
                );
                workers.abort_all();
            }
        }
    }
}

impl crate::metrics::InFlight for WorkQueue<Key> {
    fn in_flight(&self) -> (f64, f64) {
        WorkQueue::in_flight(self)
    }
}

/// One controller's workers' shared part.
struct Worker<K, C, F>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    name: String,
    informer: SharedInformer<K>,
    queue: WorkQueue<Key>,
    reconcile: F,
    context: Arc<C>,
    timeout: Option<Duration>,
    metrics: Metrics,
    label: ControllerLabel,
}

impl<K, C, F, R, E> Worker<K, C, F>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    C: Send + Sync + 'static,
    F: Fn(Arc<K>, Arc<C>) -> R + Send + Sync + 'static,
    R: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    /// Takes keys until the queue shuts down, once this replica may reconcile.
    async fn work(
        &self,
        mut leading: Option<tokio::sync::watch::Receiver<bool>>,
        mut stopped: tokio::sync::watch::Receiver<bool>,
    ) {
        if let Some(leading) = &mut leading {
            tokio::select! {
                led = leading.wait_for(|l| *l) => if led.is_err() { return },
                _ = stopped.wait_for(|s| *s) => return,
            }
        }
        while let Some(key) = self.queue.get().await {
            if self.queue.shutting_down() {
                self.queue.done(&key);
                break;
            }
            self.handle(&key).await;
            self.queue.done(&key);
        }
    }

    async fn handle(&self, key: &Key) {
        let Some(obj) = self.informer.object(key.namespace.as_deref(), &key.name) else {
            // Gone: nothing to reconcile, nothing to back off.
            self.queue.forget(key);
            return;
        };
        let active = self
            .metrics
            .families
            .active_workers
            .get_or_create(&self.label)
            .clone();
        active.inc();
        let started = Instant::now();
        let reconciled = (self.reconcile)(obj, Arc::clone(&self.context));
        let outcome = match self.timeout {
            Some(limit) => match tokio::time::timeout(limit, reconciled).await {
                Ok(result) => Outcome::from(result),
                Err(_) => Outcome::TimedOut(limit),
            },
            None => Outcome::from(reconciled.await),
        };
        let elapsed = started.elapsed();
        active.dec();
        self.metrics
            .families
            .reconcile_time
            .get_or_create(&self.label)
            .observe(elapsed.as_secs_f64());
        let result = match outcome {
            Outcome::Done(Action::Done) | Outcome::Gone => {
                self.queue.forget(key);
                "success"
            }
            Outcome::Done(Action::RequeueAfter(after)) => {
                self.queue.forget(key);
                self.queue.add_after(key.clone(), after, Priority::Live);
                "requeue_after"
            }
            Outcome::Done(Action::Requeue) => {
                self.queue.add_rate_limited(key.clone());
                "requeue"
            }
            Outcome::Failed(error) => {
                tracing::warn!(controller = %self.name, object = %key, error = %error, retries = self.queue.num_requeues(key), "reconcile failed");
                self.failed(key);
                "error"
            }
            Outcome::TimedOut(limit) => {
                tracing::warn!(controller = %self.name, object = %key, timeout = ?limit, "reconcile timed out");
                self.failed(key);
                "error"
            }
        };
        self.metrics
            .families
            .reconcile_total
            .get_or_create(&ResultLabels {
                controller: self.name.clone(),
                result: result.to_owned(),
            })
            .inc();
    }

    fn failed(&self, key: &Key) {
        self.metrics
            .families
            .reconcile_errors
            .get_or_create(&self.label)
            .inc();
        self.queue.add_rate_limited(key.clone());
    }
}

/// How one reconcile ended.
enum Outcome {
    Done(Action),
    /// An error that only says the object is gone: not a failure.
    Gone,
    Failed(String),
    TimedOut(Duration),
}

impl<E: std::error::Error + 'static> From<Result<Action, E>> for Outcome {
    fn from(result: Result<Action, E>) -> Self {
        match result {
            Ok(action) => Outcome::Done(action),
            Err(e) if is_not_found(&e) => Outcome::Gone,
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}

/// Whether `error` (or an error it wraps) is the API server's `404 NotFound`.
pub fn is_not_found(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(kube::Error::Api(status)) = e.downcast_ref::<kube::Error>()
            && status.code == 404
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The handler that queues the keys `map` gives for each change of `W`: an initial list's
/// and a resync's in the low lane, live changes in the live lane.
fn enqueue<W>(
    queue: Lanes,
    informer: SharedInformer<W>,
    map: impl Fn(&W) -> Vec<ObjectKey> + Send + Sync + 'static,
) -> crate::informer::Handlers<W>
where
    W: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    W::DynamicType: Clone + Eq + Hash + Send + Sync,
{
    let map = Arc::new(map);
    let lane = move || {
        if informer.has_synced() {
            Priority::Live
        } else {
            Priority::Low
        }
    };
    let lane = Arc::new(lane);
    let (q1, q2, q3) = (queue.clone(), queue.clone(), queue);
    let (m1, m2, m3) = (Arc::clone(&map), Arc::clone(&map), map);
    let (l1, l2) = (Arc::clone(&lane), lane);
    crate::informer::Handlers::new()
        .on_add(move |o: &Arc<W>| {
            for key in m1(o) {
                q1.add(key, l1());
            }
        })
        .on_update(move |old: &Arc<W>, new: &Arc<W>| {
            // A resync hands the cached object over as both.
            let priority = if Arc::ptr_eq(old, new) {
                Priority::Low
            } else {
                l2()
            };
            let mut keys = m2(old);
            keys.extend(m2(new));
            keys.dedup();
            for key in keys {
                q2.add(key, priority);
            }
        })
        .on_delete(move |o: &Arc<W>| {
            for key in m3(o) {
                q3.add(key, Priority::Live);
            }
        })
}

/// [`enqueue`] for the controller's own kind, through its predicates.
fn enqueue_filtered<K>(
    queue: Lanes,
    informer: SharedInformer<K>,
    predicates: Arc<Vec<predicate::Predicate<K>>>,
) -> crate::informer::Handlers<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync,
{
    let lane = {
        let informer = informer.clone();
        Arc::new(move || {
            if informer.has_synced() {
                Priority::Live
            } else {
                Priority::Low
            }
        })
    };
    let (q1, q2, q3) = (queue.clone(), queue.clone(), queue);
    let (l1, l2) = (Arc::clone(&lane), lane);
    crate::informer::Handlers::new()
        .on_add(move |o: &Arc<K>| q1.add(ObjectKey::of(o.as_ref()), l1()))
        .on_update(move |old: &Arc<K>, new: &Arc<K>| {
            if Arc::ptr_eq(old, new) {
                q2.add(ObjectKey::of(new.as_ref()), Priority::Low);
            } else if predicates.iter().all(|p| p(old, new)) {
                q2.add(ObjectKey::of(new.as_ref()), l2());
            }
        })
        .on_delete(move |o: &Arc<K>| q3.add(ObjectKey::of(o.as_ref()), Priority::Live))
}
