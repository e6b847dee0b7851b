//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's rules and
//! controller-runtime's defaults, so replicas of a Rust operator and of a Go one behave the
//! same on a cluster:
//!
//! - a replica campaigns every `retry_period` (2 s, with client-go's jitter) and takes the
//!   lease when it is free or when its holder has not renewed it for `lease_duration` (15 s)
//!   by this replica's clock (tried the moment that expiry comes, where client-go waits for
//!   its next jittered attempt); a standby also watches the Lease, so it sees each renewal
//!   when it is written rather than at its next attempt, and a dead leader's lease expires
//!   for it `lease_duration` after that leader's last renewal, not up to 4.4 s later (the
//!   watch needs `list` and `watch` on leases; without them the attempts alone decide);
//! - the leader renews every `retry_period`; when it could not renew for `renew_deadline`
//!   (10 s) it has lost the lease, and [`Elector::leading`] turns `false` (controller-runtime
//!   then exits the process; [`crate::manager::Manager`] does too);
//! - at shutdown the leader gives the lease up (client-go's `ReleaseOnCancel`), so a standby
//!   takes over at its next attempt instead of after the lease expires;
//! - `leader_election_master_status{name}` is 1 while leading, 0 otherwise.
//!
//! Standing by is not idle: [`Elector::leading`] is the gate of
//! [`crate::controller::ControllerOptions::leading`], so a standby's informers fill its
//! caches and queues while it waits, and it reconciles the moment it leads.

mod lease;

use std::future::Future;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use tokio::sync::watch;

use crate::metrics::Metrics;
use lease::{LeaseLock, Observed};

/// What to campaign for, and how often.
#[derive(Debug, Clone)]
pub struct LeaderElection {
    lease: String,
    namespace: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    release_on_cancel: bool,
}

impl LeaderElection {
    /// Campaigns for the Lease `lease` in `namespace` as `identity` (unique per replica:
    /// the pod name), with controller-runtime's timings (15 s, 10 s, 2 s).
    pub fn new(lease: &str, namespace: &str, identity: &str) -> Self {
        Self {
            lease: lease.to_owned(),
            namespace: namespace.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: true,
        }
    }

    /// How long a lease not renewed stays its holder's (15 s).
    #[must_use]
    pub fn lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader keeps trying to renew before it gives up leading (10 s; less
    /// than the lease duration).
    #[must_use]
    pub fn renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// How often a replica tries to take or renew the lease (2 s).
    #[must_use]
    pub fn retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// Whether the leader gives the lease up at shutdown (on by default).
    #[must_use]
    pub fn release_on_cancel(mut self, release: bool) -> Self {
        self.release_on_cancel = release;
        self
    }

    /// The Lease's name.
    pub fn lease(&self) -> &str {
        &self.lease
    }

    /// This replica's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Starts campaigning on `client` until `shutdown` completes or the lease is lost,
    /// reporting to `metrics`.
    pub fn start(
        self,
        client: Client,
        metrics: &Metrics,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Elector {
        let (leading, watching) = watch::channel(false);
        let lock = LeaseLock {
            api: Api::<Lease>::namespaced(client, &self.namespace),
            name: self.lease.clone(),
            identity: self.identity.clone(),
            duration: self.lease_duration,
        };
        let metrics = metrics.clone();
        metrics.set_leader(&self.lease, false);
        let task = tokio::spawn(campaign(self, lock, leading, metrics, shutdown));
        Elector {
            leading: watching,
            task,
        }
    }
}

/// A running campaign.
#[derive(Debug)]
pub struct Elector {
    leading: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<Ended>,
}

/// How a campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Shutdown came (the lease released when it was held).
    Shutdown,
    /// The leader could not renew within the deadline.
    Lost,
}

impl Elector {
    /// `true` while this replica leads; the gate of
    /// [`crate::controller::ControllerOptions::leading`]. Closed when the campaign ends.
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Completes once this replica leads; `false` when the campaign ended first.
    pub async fn acquired(&self) -> bool {
        self.leading.clone().wait_for(|l| *l).await.is_ok()
    }

    /// Completes when the campaign ends (after shutdown, or when the lease is lost).
    pub fn ended(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut leading = self.leading.clone();
        async move { while leading.changed().await.is_ok() {} }
    }

    /// Waits for the campaign's end (its release of the lease included).
    pub async fn stopped(self) -> Ended {
        self.task.await.unwrap_or(Ended::Shutdown)
    }
}

/// client-go's `wait.JitterUntil` factor: each wait is `period * (1 + rand * 1.2)`.
const JITTER: f64 = 1.2;

fn jittered(period: Duration) -> Duration {
    // Randomness enough for spreading replicas: the clock's sub-second part, hashed (a
    // clock of microsecond resolution has no nanoseconds of its own).
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(nanos);
    let fraction = (hasher.finish() % 1000) as f64 / 1000.0;
    period.mul_f64(1.0 + fraction * JITTER)
}

/// The next renewal the watch shows; pending for ever once the watch has ended.
async fn next_renewal<S>(renewals: &mut Option<std::pin::Pin<Box<S>>>) -> Option<S::Item>
where
    S: Stream,
{
    match renewals {
        Some(stream) => stream.next().await,
        None => std::future::pending().await,
    }
}

/// The Lease as it is written, for a standby; a stream that never ends (the watcher backs
/// off and retries on errors, forbidden included).
fn renewals(lock: &LeaseLock) -> impl Stream<Item = Result<Lease, watcher::Error>> + Send + use<> {
    let config = watcher::Config::default().fields(&format!("metadata.name={}", lock.name));
    watcher(lock.api.clone(), config)
        .default_backoff()
        .applied_objects()
}

async fn campaign(
    election: LeaderElection,
    lock: LeaseLock,
    leading: watch::Sender<bool>,
    metrics: Metrics,
    shutdown: impl Future<Output = ()> + Send,
) -> Ended {
    let mut shutdown = std::pin::pin!(shutdown);
    let mut observed = Observed::default();
    let attempt = election.renew_deadline.min(election.retry_period * 5);
    tracing::info!(lease = %election.lease, identity = %election.identity, "campaigning for the leader lease");
    let mut renewals = Some(Box::pin(renewals(&lock)));
    // Standing by.
    loop {
        let tried = tokio::time::timeout(attempt, lock.try_acquire_or_renew(&mut observed));
        let tried = tokio::select! {
            () = &mut shutdown => return Ended::Shutdown,
            tried = tried => tried,
        };
        match tried {
            Ok(Ok(true)) => break,
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                tracing::warn!(lease = %election.lease, error = %e, "could not read or take the leader lease; trying again")
            }
            Err(_) => {
                tracing::warn!(lease = %election.lease, timeout = ?attempt, "reading or taking the leader lease timed out; trying again")
            }
        }
        // client-go waits its jittered period whatever the lease says; a lease that expires
        // sooner is tried the moment it does, and each renewal the watch shows moves that
        // moment, which takes the observation lag and the jitter off a failover. An expiry
        // already past (the attempt just failed for another reason: a refusal, an outage)
        // waits the period, as client-go does, never a tight loop.
        let next_attempt = tokio::time::Instant::now() + jittered(election.retry_period);
        loop {
            let mut until = next_attempt;
            if let Some(expires) = observed.expires(&election.identity, election.lease_duration)
                && expires > std::time::Instant::now()
            {
                until =
                    until.min(tokio::time::Instant::from_std(expires) + Duration::from_millis(10));
            }
            tokio::select! {
                () = &mut shutdown => return Ended::Shutdown,
                () = tokio::time::sleep_until(until) => break,
                seen = next_renewal(&mut renewals) => match seen {
                    Some(Ok(lease)) => observed.see_now(lease.spec.unwrap_or_default()),
                    Some(Err(e)) => tracing::debug!(lease = %election.lease, error = %e, "watching the leader lease failed; the attempts alone decide"),
                    None => renewals = None,
                },
            }
        }
    }
    // A leader renews by itself: the watch stops.
    drop(renewals);
    tracing::info!(lease = %election.lease, identity = %election.identity, "acquired the leader lease");
    metrics.set_leader(&election.lease, true);
    leading.send_replace(true);
    // Leading.
    let mut renewed = tokio::time::Instant::now();
    let ended = loop {
        tokio::select! {
            () = &mut shutdown => break Ended::Shutdown,
            () = tokio::time::sleep(election.retry_period) => {}
        }
        let left = (renewed + election.renew_deadline)
            .saturating_duration_since(tokio::time::Instant::now());
        let tried = tokio::time::timeout(
            left.max(Duration::from_millis(1)),
            lock.try_acquire_or_renew(&mut observed),
        );
        let ok = tokio::select! {
            () = &mut shutdown => break Ended::Shutdown,
            tried = tried => matches!(tried, Ok(Ok(true))),
        };
        if ok {
            renewed = tokio::time::Instant::now();
        } else if renewed.elapsed() >= election.renew_deadline {
            tracing::error!(lease = %election.lease, identity = %election.identity, deadline = ?election.renew_deadline, "could not renew the leader lease within its deadline: no longer leading");
            break Ended::Lost;
        }
    };
    leading.send_replace(false);
    metrics.set_leader(&election.lease, false);
    if ended == Ended::Shutdown && election.release_on_cancel {
        match tokio::time::timeout(attempt, lock.release(&observed)).await {
            Ok(Ok(())) => tracing::info!(lease = %election.lease, "released the leader lease"),
            Ok(Err(e)) => {
                tracing::warn!(lease = %election.lease, error = %e, "could not release the leader lease; it expires")
            }
            Err(_) => {
                tracing::warn!(lease = %election.lease, "releasing the leader lease timed out; it expires")
            }
        }
    }
    ended
}
