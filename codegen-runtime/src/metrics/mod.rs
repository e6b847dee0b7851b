//! Metrics under the names controller-runtime and client-go export, so the dashboards and
//! alerts written for Go operators (kubebuilder's Grafana plugin, the usual
//! `controller_runtime_reconcile_errors_total` alert) read a Rust operator unchanged:
//!
//! | metric | labels |
//! |---|---|
//! | `controller_runtime_reconcile_total` | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) |
//! | `controller_runtime_reconcile_errors_total` | `controller` |
//! | `controller_runtime_reconcile_time_seconds` (histogram) | `controller` |
//! | `controller_runtime_max_concurrent_reconciles`, `controller_runtime_active_workers` | `controller` |
//! | `workqueue_depth`, `workqueue_adds_total`, `workqueue_retries_total` | `name`, `controller` |
//! | `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds` (histograms) | `name`, `controller` |
//! | `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds` | `name`, `controller` |
//! | `rest_client_requests_total` | `code`, `method`, `host` ([`RestClientMetrics`], a layer for kube's client) |
//! | `leader_election_master_status` | `name` |
//! | `kube_codegen_informer_watch_errors_total`, `kube_codegen_informer_decode_errors_total` | `resource` ([`Metrics::watch_informers`]) |
//! | `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_start_time_seconds`, `process_open_fds`, `process_max_fds` | (Linux, from `/proc/self`) |
//!
//! One [`Metrics`] per process holds them all (the Prometheus project's Rust client,
//! `prometheus-client`); [`Metrics::encode`] renders what `/metrics` answers.

mod process;
mod rest;

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

pub use rest::{RestClientLayer, RestClientMetrics};

/// The content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `controller`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ControllerLabel {
    pub(crate) controller: String,
}

/// `controller`, `result`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabels {
    pub(crate) controller: String,
    pub(crate) result: String,
}

/// `name`, `controller` (controller-runtime names a controller's queue after it).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct QueueLabels {
    pub(crate) name: String,
    pub(crate) controller: String,
}

/// `name` of a lease.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct LeaseLabel {
    pub(crate) name: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// controller-runtime's buckets of `controller_runtime_reconcile_time_seconds`.
fn reconcile_buckets() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
        15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
    ])
}

/// client-go's workqueue buckets: 10 ns to 10 000 s by tens (`ExponentialBuckets(10e-9, 10, 12)`).
fn queue_buckets() -> Histogram {
    Histogram::new((0..12).map(|i| 1e-8 * 10f64.powi(i)))
}

/// The families a controller reports to.
#[derive(Debug, Clone)]
pub(crate) struct Families {
    pub(crate) reconcile_total: Family<ResultLabels, Counter>,
    pub(crate) reconcile_errors: Family<ControllerLabel, Counter>,
    pub(crate) reconcile_time: Histograms<ControllerLabel>,
    pub(crate) max_concurrent: Family<ControllerLabel, Gauge>,
    pub(crate) active_workers: Family<ControllerLabel, Gauge>,
    pub(crate) depth: Family<QueueLabels, Gauge>,
    pub(crate) adds: Family<QueueLabels, Counter>,
    pub(crate) retries: Family<QueueLabels, Counter>,
    pub(crate) queue_duration: Histograms<QueueLabels>,
    pub(crate) work_duration: Histograms<QueueLabels>,
    pub(crate) leader: Family<LeaseLabel, Gauge>,
}

/// What reports work in flight when scraped: a controller's queue.
pub(crate) trait InFlight: Send + Sync {
    /// Seconds of work in flight and the longest a key has been held.
    fn in_flight(&self) -> (f64, f64);
}

/// The queues whose work in flight is read at each scrape.
#[derive(Default)]
struct Queues(Mutex<Vec<(QueueLabels, Weak<dyn InFlight>)>>);

impl Debug for Queues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queues")
    }
}

impl prometheus_client::collector::Collector for Queues {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut queues = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        queues.retain(|(_, q)| q.strong_count() > 0);
        let read: Vec<(QueueLabels, (f64, f64))> = queues
            .iter()
            .filter_map(|(labels, q)| Some((labels.clone(), q.upgrade()?.in_flight())))
            .collect();
        drop(queues);
        for (name, help, pick) in [
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.",
                0,
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                1,
            ),
        ] {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (labels, values) in &read {
                let value = if pick == 0 { values.0 } else { values.1 };
                ConstGauge::new(value).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}

/// The informer factories whose errors are read at each scrape.
#[derive(Default)]
struct Informers(Mutex<Vec<crate::informer::factory::SharedInformerFactory>>);

impl Debug for Informers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Informers")
    }
}

/// `resource` of an informer's metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabel {
    resource: String,
}

impl prometheus_client::collector::Collector for Informers {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let factories = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let read =
            |pick: fn(&crate::informer::factory::SharedInformerFactory) -> Vec<(String, u64)>| {
                let mut all: Vec<(String, u64)> = factories.iter().flat_map(pick).collect();
                all.sort();
                all
            };
        for (name, help, values) in [
            (
                "kube_codegen_informer_watch_errors",
                "List and watch errors each informer met (it retries with backoff).",
                read(|f| f.watch_errors()),
            ),
            (
                "kube_codegen_informer_decode_errors",
                "Objects each informer could not decode into its type (left out of its cache).",
                read(|f| f.decode_errors()),
            ),
        ] {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (resource, value) in values {
                let labels = ResourceLabel { resource };
                prometheus_client::metrics::counter::ConstCounter::new(value)
                    .encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// The metrics of one process: register controllers, leases and clients on it, and serve
/// [`Metrics::encode`] on `/metrics`. Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    pub(crate) families: Families,
    queues: Arc<Queues>,
    informers: Arc<Informers>,
    rest: RestClientMetrics,
}

impl Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric of the table above, at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let families = Families {
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_buckets),
            max_concurrent: Family::default(),
            active_workers: Family::default(),
            depth: Family::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(queue_buckets),
            work_duration: Family::new_with_constructor(queue_buckets),
            leader: Family::default(),
        };
        // Counters are registered without `_total`: the encoder adds it.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            families.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            families.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            families.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            families.max_concurrent.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            families.active_workers.clone(),
        );
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            families.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            families.adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            families.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            families.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            families.work_duration.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease",
            families.leader.clone(),
        );
        let queues = Arc::new(Queues::default());
        registry.register_collector(Box::new(Arc::clone(&queues)));
        let informers = Arc::new(Informers::default());
        registry.register_collector(Box::new(Arc::clone(&informers)));
        let rest = RestClientMetrics::register(&mut registry);
        registry.register_collector(Box::new(process::Process));
        Self {
            registry: Arc::new(Mutex::new(registry)),
            families,
            queues,
            informers,
            rest,
        }
    }

    /// The text `/metrics` answers (OpenMetrics, which Prometheus reads), as of now.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        // Writing into a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }

    /// Reports the list, watch and decode errors of `factory`'s informers at each scrape:
    /// `kube_codegen_informer_watch_errors_total{resource}` and
    /// `kube_codegen_informer_decode_errors_total{resource}` (a version whose objects stop
    /// decoding, after a storage move, shows here). Once per factory.
    pub fn watch_informers(&self, factory: &crate::informer::factory::SharedInformerFactory) {
        let mut factories = self
            .informers
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !factories.iter().any(|f| f.same_as(factory)) {
            factories.push(factory.clone());
        }
    }

    /// The counter of every request a client sends, for [`RestClientLayer`].
    pub fn rest_client(&self) -> RestClientMetrics {
        self.rest.clone()
    }

    /// `controller_runtime_reconcile_total{controller, result}` as it stands (0 for a result
    /// never seen): what a report or a test reads.
    pub fn reconciles(&self, controller: &str, result: &str) -> u64 {
        self.families
            .reconcile_total
            .get_or_create(&ResultLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            })
            .get()
    }

    /// Every reconcile of `controller` so far, whatever its result.
    pub fn reconciles_total(&self, controller: &str) -> u64 {
        ["success", "error", "requeue", "requeue_after"]
            .iter()
            .map(|result| self.reconciles(controller, result))
            .sum()
    }

    /// `controller_runtime_reconcile_errors_total{controller}` as it stands.
    pub fn reconcile_errors(&self, controller: &str) -> u64 {
        self.families
            .reconcile_errors
            .get_or_create(&ControllerLabel {
                controller: controller.to_owned(),
            })
            .get()
    }

    /// Sets `leader_election_master_status{name=lease}`: 1 while this process leads.
    pub fn set_leader(&self, lease: &str, leading: bool) {
        self.families
            .leader
            .get_or_create(&LeaseLabel {
                name: lease.to_owned(),
            })
            .set(i64::from(leading));
    }

    /// Puts every series of `controller` at zero, as controller-runtime does when a
    /// controller starts, so a rate or an alert over them has a series before the first
    /// failure; `concurrency` is its `max_concurrent_reconciles`.
    pub(crate) fn start_controller(&self, controller: &str, concurrency: usize) {
        let label = ControllerLabel {
            controller: controller.to_owned(),
        };
        let families = &self.families;
        families
            .max_concurrent
            .get_or_create(&label)
            .set(i64::try_from(concurrency).unwrap_or(i64::MAX));
        families.active_workers.get_or_create(&label).set(0);
        let _ = families.reconcile_errors.get_or_create(&label);
        for result in ["success", "error", "requeue", "requeue_after"] {
            let _ = families.reconcile_total.get_or_create(&ResultLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            });
        }
        let queue = QueueLabels {
            name: controller.to_owned(),
            controller: controller.to_owned(),
        };
        let _ = families.depth.get_or_create(&queue);
        let _ = families.adds.get_or_create(&queue);
        let _ = families.retries.get_or_create(&queue);
    }

    /// Reads `queue`'s work in flight at each scrape, labelled `name` and `controller`.
    pub(crate) fn watch_queue(&self, controller: &str, queue: &Arc<dyn InFlight>) {
        self.queues
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((
                QueueLabels {
                    name: controller.to_owned(),
                    controller: controller.to_owned(),
                },
                Arc::downgrade(queue),
            ));
    }

    /// The [`crate::controller::queue::QueueMetrics`] of `controller`'s queue.
    pub(crate) fn queue(&self, controller: &str) -> QueueReporter {
        QueueReporter {
            labels: QueueLabels {
                name: controller.to_owned(),
                controller: controller.to_owned(),
            },
            families: self.families.clone(),
        }
    }
}

/// A controller's queue reporting to its families.
pub(crate) struct QueueReporter {
    labels: QueueLabels,
    families: Families,
}

impl crate::controller::queue::QueueMetrics for QueueReporter {
    fn added(&self) {
        self.families.adds.get_or_create(&self.labels).inc();
    }
    fn depth(&self, depth: usize) {
        self.families
            .depth
            .get_or_create(&self.labels)
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }
    fn queued_for(&self, wait: Duration) {
        self.families
            .queue_duration
            .get_or_create(&self.labels)
            .observe(wait.as_secs_f64());
    }
    fn worked_for(&self, work: Duration) {
        self.families
            .work_duration
            .get_or_create(&self.labels)
            .observe(work.as_secs_f64());
    }
    fn retried(&self) {
        self.families.retries.get_or_create(&self.labels).inc();
    }
}
