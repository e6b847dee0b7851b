//! Prometheus metrics of the controllers, in the text exposition format.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 10] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

/// Counters of one controller.
#[derive(Debug, Default)]
pub struct ControllerMetrics {
    reconciles: AtomicU64,
    errors: AtomicU64,
    in_flight: AtomicI64,
    duration_micros: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
}

impl ControllerMetrics {
    /// A reconcile started.
    pub fn started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A reconcile ended after `took`, with or without an error.
    pub fn finished(&self, took: Duration, failed: bool) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.reconciles.fetch_add(1, Ordering::Relaxed);
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.duration_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Reconciles so far.
    pub fn reconciles(&self) -> u64 {
        self.reconciles.load(Ordering::Relaxed)
    }

    /// Failed reconciles so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

/// The metrics of both controllers.
#[derive(Debug, Default)]
pub struct Metrics {
    /// The Foo controller.
    pub foo: ControllerMetrics,
    /// The Icecream controller.
    pub icecream: ControllerMetrics,
    /// The informers, whose watch errors are counted (set once they exist).
    pub informers: std::sync::OnceLock<kube_codegen_runtime::SharedInformerFactory>,
}

impl Metrics {
    /// The text exposition format, as `/metrics` serves it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(factory) = self.informers.get() {
            let _ = writeln!(
                out,
                "# HELP sample_controller_watch_errors_total List and watch errors met by each informer."
            );
            let _ = writeln!(out, "# TYPE sample_controller_watch_errors_total counter");
            for (resource, n) in factory.watch_errors() {
                let _ = writeln!(
                    out,
                    "sample_controller_watch_errors_total{{resource=\"{resource}\"}} {n}"
                );
            }
        }
        let all = [("foo", &self.foo), ("icecream", &self.icecream)];
        let _ = writeln!(
            out,
            "# HELP sample_controller_reconcile_total Reconciles run."
        );
        let _ = writeln!(out, "# TYPE sample_controller_reconcile_total counter");
        for (name, m) in all {
            let _ = writeln!(
                out,
                "sample_controller_reconcile_total{{controller=\"{name}\"}} {}",
                m.reconciles()
            );
        }
        let _ = writeln!(
            out,
            "# HELP sample_controller_reconcile_errors_total Reconciles that failed."
        );
        let _ = writeln!(
            out,
            "# TYPE sample_controller_reconcile_errors_total counter"
        );
        for (name, m) in all {
            let _ = writeln!(
                out,
                "sample_controller_reconcile_errors_total{{controller=\"{name}\"}} {}",
                m.errors()
            );
        }
        let _ = writeln!(
            out,
            "# HELP sample_controller_reconcile_in_flight Reconciles running now (the queue being worked on)."
        );
        let _ = writeln!(out, "# TYPE sample_controller_reconcile_in_flight gauge");
        for (name, m) in all {
            let _ = writeln!(
                out,
                "sample_controller_reconcile_in_flight{{controller=\"{name}\"}} {}",
                m.in_flight.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP sample_controller_reconcile_duration_seconds Time spent in reconcile."
        );
        let _ = writeln!(
            out,
            "# TYPE sample_controller_reconcile_duration_seconds histogram"
        );
        for (name, m) in all {
            for (bound, bucket) in BUCKETS.iter().zip(&m.buckets) {
                let _ = writeln!(
                    out,
                    "sample_controller_reconcile_duration_seconds_bucket{{controller=\"{name}\",le=\"{bound}\"}} {}",
                    bucket.load(Ordering::Relaxed)
                );
            }
            let count = m.reconciles();
            let _ = writeln!(
                out,
                "sample_controller_reconcile_duration_seconds_bucket{{controller=\"{name}\",le=\"+Inf\"}} {count}"
            );
            let sum = m.duration_micros.load(Ordering::Relaxed) as f64 / 1e6;
            let _ = writeln!(
                out,
                "sample_controller_reconcile_duration_seconds_sum{{controller=\"{name}\"}} {sum}"
            );
            let _ = writeln!(
                out,
                "sample_controller_reconcile_duration_seconds_count{{controller=\"{name}\"}} {count}"
            );
        }
        out
    }
}
