//! The `process_*` metrics of client_golang's process collector, read from `/proc/self` at
//! each scrape (Linux; elsewhere none are reported).

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The collector.
#[derive(Debug, Default)]
pub(super) struct Process;

/// What `/proc/self` says of the process, each when it can be read.
#[derive(Debug, Default, PartialEq)]
struct Reading {
    cpu_seconds: Option<f64>,
    resident_bytes: Option<f64>,
    virtual_bytes: Option<f64>,
    start_time_seconds: Option<f64>,
    open_fds: Option<f64>,
    max_fds: Option<f64>,
}

/// Clock ticks a second and the page size: the values Linux uses on every architecture
/// Rust targets (`sysconf` is not reachable without libc).
const TICKS: f64 = 100.0;
const PAGE: f64 = 4096.0;

fn read() -> Reading {
    let mut r = Reading::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // The command may hold spaces; the fields after it are space-separated.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let field = |n: usize| fields.get(n).and_then(|f| f.parse::<f64>().ok());
        // Fields 14, 15 (utime, stime), 22 (starttime), 23 (vsize), 24 (rss), counted
        // from the state (field 3) at index 0.
        if let (Some(user), Some(system)) = (field(11), field(12)) {
            r.cpu_seconds = Some((user + system) / TICKS);
        }
        r.virtual_bytes = field(20);
        r.resident_bytes = field(21).map(|pages| pages * PAGE);
        let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|v| v.trim().parse::<f64>().ok())
        });
        if let (Some(boot), Some(start)) = (boot, field(19)) {
            r.start_time_seconds = Some(boot + start / TICKS);
        }
    }
    r.open_fds = std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as f64);
    r.max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse().ok())
        });
    r
}

impl prometheus_client::collector::Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let r = read();
        if let Some(cpu) = r.cpu_seconds {
            let counter = ConstCounter::new(cpu);
            counter.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                MetricType::Counter,
            )?)?;
        }
        for (name, help, value) in [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                r.resident_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                r.virtual_bytes,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                r.start_time_seconds,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                r.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                r.max_fds,
            ),
        ] {
            if let Some(value) = value {
                ConstGauge::new(value).encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    MetricType::Gauge,
                )?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_reads_itself_on_linux() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let r = read();
        assert!(r.resident_bytes.is_some_and(|b| b > 1e6), "{r:?}");
        assert!(r.open_fds.is_some_and(|n| n >= 3.0), "{r:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let start = r.start_time_seconds.unwrap();
        assert!(
            start <= now + 2.0 && start > now - 86_400.0 * 365.0,
            "{r:?}"
        );
    }
}
