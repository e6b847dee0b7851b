//! What to start: the assets directory and the variables envtest users know.

use std::path::PathBuf;
use std::time::Duration;

/// The variable naming the directory of `etcd`, `kube-apiserver` and, optionally,
/// `kube-controller-manager`.
pub const ASSETS_VAR: &str = "KUBEBUILDER_ASSETS";
/// envtest's variable for the start timeout (a number of seconds, or Go's `20s`/`1m`).
pub const START_TIMEOUT_VAR: &str = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT";
/// envtest's variable that sends the servers' output to this process's instead of log files.
pub const ATTACH_OUTPUT_VAR: &str = "KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT";

/// What to start.
#[derive(Debug, Clone)]
pub struct ControlPlaneOptions {
    pub(super) assets: PathBuf,
    pub(super) controller_manager: Option<bool>,
    pub(super) start_timeout: Duration,
    pub(super) attach_output: bool,
}

impl ControlPlaneOptions {
    /// The binaries of `assets`; kube-controller-manager when it is there; the start
    /// timeout of `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT` (default 60 s).
    pub fn new(assets: impl Into<PathBuf>) -> Self {
        let start_timeout = match std::env::var(START_TIMEOUT_VAR) {
            Ok(v) => parse_duration(&v).unwrap_or_else(|| {
                eprintln!(
                    "envtest: {START_TIMEOUT_VAR}={v:?} is not a duration (20s, 1m30s, 90); 60s"
                );
                Duration::from_secs(60)
            }),
            Err(_) => Duration::from_secs(60),
        };
        let attach_output = std::env::var(ATTACH_OUTPUT_VAR).is_ok_and(|v| v == "true");
        ControlPlaneOptions {
            assets: assets.into(),
            controller_manager: None,
            start_timeout,
            attach_output,
        }
    }

    /// Runs kube-controller-manager too (`true`: its binary must be there), or never
    /// (`false`). By default it runs when `assets` has it: namespaces then finish deleting,
    /// owners' dependents are collected and ServiceAccounts get their tokens, as on a cluster.
    pub fn controller_manager(mut self, run: bool) -> Self {
        self.controller_manager = Some(run);
        self
    }

    /// How long etcd and kube-apiserver (and the controller manager) may take together
    /// (at most a day).
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout.min(MAX_TIMEOUT);
        self
    }
}

/// The longest start timeout taken (a day); longer ones are cut to it.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// `20s`, `1m30s`, `1500ms` or a plain number of seconds, at most a day.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs).min(MAX_TIMEOUT));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let part = match &rest[..unit] {
            "h" => n.checked_mul(3600).map(Duration::from_secs),
            "m" => n.checked_mul(60).map(Duration::from_secs),
            "s" => Some(Duration::from_secs(n)),
            "ms" => Some(Duration::from_millis(n)),
            _ => return None,
        };
        total = total.saturating_add(part.unwrap_or(MAX_TIMEOUT));
        rest = &rest[unit..];
    }
    Some(total.min(MAX_TIMEOUT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_and_seconds_parse() {
        assert_eq!(parse_duration("20"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("20s"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1500ms"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("18446744073709551615"), Some(MAX_TIMEOUT));
        assert_eq!(parse_duration("18446744073709551615h"), Some(MAX_TIMEOUT));
    }
}
