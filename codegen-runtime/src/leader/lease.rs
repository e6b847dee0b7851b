//! One attempt of client-go's `tryAcquireOrRenew` on a `coordination.k8s.io/v1` Lease: read
//! the record, take it when it is free or expired, renew it when it is ours, and release it.
//!
//! A record is "expired" by the local clock: the time this process last saw it change plus
//! its duration, never the holder's `renewTime` (two machines' clocks need not agree, which
//! is why client-go does the same).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};

/// The record as this process last saw it, and when it last changed.
#[derive(Debug, Default)]
pub(super) struct Observed {
    /// `spec` of the Lease as read (or written) last.
    spec: Option<LeaseSpec>,
    /// When `spec` last changed, by the local clock.
    at: Option<Instant>,
}

impl Observed {
    fn see(&mut self, spec: LeaseSpec, now: Instant) {
        if self.spec.as_ref() != Some(&spec) {
            self.spec = Some(spec);
            self.at = Some(now);
        }
    }

    /// Records `spec` as seen now (from the standby's watch).
    pub(super) fn see_now(&mut self, spec: LeaseSpec) {
        self.see(spec, Instant::now());
    }

    /// Whether `identity` holds the lease as last seen.
    pub(super) fn held_by(&self, identity: &str) -> bool {
        self.holder() == Some(identity)
    }

    /// When the lease, held by someone else as last seen, expires by this process's clock:
    /// the time it last saw it change plus its duration (`default` when it says none).
    pub(super) fn expires(&self, identity: &str, default: Duration) -> Option<Instant> {
        if self.holder().is_none() || self.held_by(identity) {
            return None;
        }
        let duration = self
            .spec
            .as_ref()
            .and_then(|s| s.lease_duration_seconds)
            .and_then(|s| u64::try_from(s).ok())
            .map_or(default, Duration::from_secs);
        Some(self.at? + duration)
    }

    /// Who holds the lease as last seen (`None` when free).
    pub(super) fn holder(&self) -> Option<&str> {
        self.spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            .filter(|h| !h.is_empty())
    }
}

/// The Lease this process campaigns for.
pub(super) struct LeaseLock {
    pub(super) api: Api<Lease>,
    pub(super) name: String,
    pub(super) identity: String,
    pub(super) duration: Duration,
}

fn now_micro() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

fn seconds(d: Duration) -> i32 {
    i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX)
}

impl LeaseLock {
    /// One attempt: `true` when this process holds the lease afterwards.
    pub(super) async fn try_acquire_or_renew(
        &self,
        observed: &mut Observed,
    ) -> Result<bool, kube::Error> {
        let spec = LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds(self.duration)),
            acquire_time: Some(now_micro()),
            renew_time: Some(now_micro()),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        };
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(spec.clone()),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    observed.see(created.spec.unwrap_or(spec), Instant::now());
                    Ok(true)
                }
                // Another replica created it first: the next attempt reads it.
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(e) => Err(e),
            };
        };
        let now = Instant::now();
        let old = current.spec.clone().unwrap_or_default();
        observed.see(old.clone(), now);
        let ours = observed.held_by(&self.identity);
        if let Some(holder) = observed.holder()
            && !ours
        {
            let duration = old
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(self.duration, Duration::from_secs);
            let seen = observed.at.unwrap_or(now);
            if seen + duration > now {
                tracing::trace!(holder, "the lease is held and not expired");
                return Ok(false);
            }
        }
        let mut next = spec;
        if ours {
            next.acquire_time = old.acquire_time.clone();
            next.lease_transitions = old.lease_transitions;
        } else {
            next.lease_transitions = Some(old.lease_transitions.unwrap_or(0) + 1);
        }
        let mut lease = current;
        lease.spec = Some(next);
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(written) => {
                observed.see(written.spec.unwrap_or_default(), Instant::now());
                Ok(true)
            }
            // Someone else wrote it in between: not ours this time.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Gives the lease up, as client-go's `ReleaseOnCancel` does: no holder and a duration
    /// of one second, so a standby takes it at its next attempt instead of waiting for it to
    /// expire. Only when this process still holds it.
    pub(super) async fn release(&self, observed: &Observed) -> Result<(), kube::Error> {
        if !observed.held_by(&self.identity) {
            return Ok(());
        }
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let old = lease.spec.clone().unwrap_or_default();
        if old.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            acquire_time: Some(now_micro()),
            renew_time: Some(now_micro()),
            lease_transitions: old.lease_transitions,
            ..LeaseSpec::default()
        });
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map(|_| ())
    }
}
