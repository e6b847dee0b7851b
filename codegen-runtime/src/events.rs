//! Events through the events.k8s.io/v1 API with a bounded series cache: a drop-in for
//! `kube::runtime::events::Recorder` (same [`Event`], [`EventType`] and [`Reporter`]) for
//! controllers that record events about many objects.
//!
//! A repeat of an event (same type, action, reason, object and related object) within the
//! series window (6 minutes, as in kube and client-go) becomes a series on the first one: a
//! merge patch of `series.count` and `series.lastObservedTime` instead of a new Event. To
//! know the first one, the recorder remembers each event it sent for that window. kube's
//! `Recorder` keeps every such event whole, without a bound: at 10 000 objects synced in a
//! few minutes that is about 4.4 KB an object. This one keeps the event's name and its count
//! under a compact key, at most [`Recorder::with_capacity`] of them (4 096 by default, the
//! size of client-go's event correlator cache), forgetting the least recently seen first. A
//! forgotten event's repeat is a new Event, as after a restart.
//!
//! [`Recorder::publish`] waits for the API server; [`Recorder::publish_in_background`]
//! queues the event for one background task and returns at once, as client-go's event
//! broadcaster does (and, like it, drops events when 1 000 are waiting), so a reconcile
//! does not spend a request's time on its event.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
pub use kube::runtime::events::{Event, EventType, Reporter};
use tokio::sync::mpsc;

/// How many events' series a recorder remembers by default (client-go's correlator cache).
pub const DEFAULT_CAPACITY: usize = 4096;

/// How long a repeat of an event joins its series (kube's and client-go's 6 minutes).
pub const DEFAULT_SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// How many events wait for the background publisher before more are dropped (the queue of
/// client-go's event broadcaster).
pub const BACKGROUND_QUEUE: usize = 1000;

/// Publishes events; cheap to clone (clones share the series cache and the background queue).
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    window: Duration,
    capacity: usize,
    seen: Arc<Mutex<Seen>>,
    queue: Arc<OnceLock<mpsc::Sender<(Event, ObjectReference)>>>,
    dropped: Arc<AtomicU64>,
    waiting: Arc<Waiting>,
}

/// How many background events are queued or being sent, and a wake-up when that changes.
#[derive(Default)]
struct Waiting {
    count: std::sync::atomic::AtomicUsize,
    changed: tokio::sync::Notify,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("reporter", &self.reporter)
            .field("window", &self.window)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder reporting as `reporter`, remembering up to [`DEFAULT_CAPACITY`] series for
    /// [`DEFAULT_SERIES_WINDOW`].
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            window: DEFAULT_SERIES_WINDOW,
            capacity: DEFAULT_CAPACITY,
            seen: Arc::default(),
            queue: Arc::default(),
            dropped: Arc::default(),
            waiting: Arc::default(),
        }
    }

    /// Remember at most `capacity` events (at least one).
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Join a repeat to its series only within `window` of the last one.
    #[must_use]
    pub fn with_series_window(mut self, window: Duration) -> Self {
        self.window = window;
        self
    }

    /// How many events' series the recorder remembers now.
    pub fn remembered(&self) -> usize {
        self.lock().entries.len()
    }

    /// Records `ev` about `regarding` in its namespace (`default` for a cluster-scoped
    /// object): a new Event, or the next count of the series it repeats. The caller needs
    /// `create` and `patch` on `events.events.k8s.io`.
    ///
    /// # Errors
    ///
    /// The API server's answer when it refuses the Event or the patch.
    pub async fn publish(
        &self,
        ev: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let key = key(ev, regarding);
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let api: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let now = Timestamp::now();
        let repeat = self.lock().repeat(&key, Instant::now(), self.window);
        if let Some((name, count)) = repeat {
            let series = K8sEvent {
                series: Some(EventSeries {
                    count,
                    last_observed_time: MicroTime(now),
                }),
                ..K8sEvent::default()
            };
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&series))
                .await
            {
                Ok(_) => {
                    self.lock()
                        .seen(key, name, count, Instant::now(), self.capacity);
                    return Ok(());
                }
                // Deleted meanwhile (or expired by the server's TTL): start a new series.
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let event = self.event(ev, regarding, now);
        let name = event.metadata.name.clone().unwrap_or_default();
        api.create(&PostParams::default(), &event).await?;
        self.lock()
            .seen(key, name, 1, Instant::now(), self.capacity);
        Ok(())
    }

    /// Queues `ev` for a background task that publishes queued events one at a time, and
    /// returns at once; a failure to publish is logged (warn). When [`BACKGROUND_QUEUE`]
    /// events are waiting, or outside a tokio runtime, the event is dropped and counted
    /// ([`Recorder::dropped`]). Events still queued when the process exits are lost: on a
    /// graceful shutdown, await [`Recorder::flush`] (under a timeout) first.
    pub fn publish_in_background(&self, ev: Event, regarding: ObjectReference) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(dropped = n, "no tokio runtime to publish in; event dropped");
            return;
        };
        let queue = self.queue.get_or_init(|| {
            let (tx, mut rx) = mpsc::channel::<(Event, ObjectReference)>(BACKGROUND_QUEUE);
            // The task's own recorder has no queue: when every other clone is gone, the
            // channel closes and the task ends.
            let worker = Recorder {
                queue: Arc::default(),
                ..self.clone()
            };
            let task = async move {
                while let Some((ev, regarding)) = rx.recv().await {
                    if let Err(e) = worker.publish(&ev, &regarding).await {
                        tracing::warn!(error = %e, reason = %ev.reason, "could not record event");
                    }
                    worker.waiting.count.fetch_sub(1, Ordering::AcqRel);
                    worker.waiting.changed.notify_waiters();
                }
            };
            runtime.spawn(task);
            tx
        });
        self.waiting.count.fetch_add(1, Ordering::AcqRel);
        if queue.try_send((ev, regarding)).is_err() {
            self.waiting.count.fetch_sub(1, Ordering::AcqRel);
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(dropped = n, "event queue full or closed; event dropped");
        }
    }

    /// Waits until every event queued by [`Recorder::publish_in_background`] has been sent
    /// (or failed): for a graceful shutdown, under a timeout of the caller's.
    pub async fn flush(&self) {
        loop {
            let changed = self.waiting.changed.notified();
            if self.waiting.count.load(Ordering::Acquire) == 0 {
                return;
            }
            changed.await;
        }
    }

    /// How many events [`Recorder::publish_in_background`] dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The Event for the first of a series.
    fn event(&self, ev: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        let object = regarding
            .name
            .as_deref()
            .unwrap_or(&self.reporter.controller);
        K8sEvent {
            metadata: ObjectMeta {
                name: Some(format!("{object}.{:x}", now.as_nanosecond())),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            note: ev.note.clone(),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: ev.secondary.clone(),
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match ev.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            ..K8sEvent::default()
        }
    }
}

/// What makes two events one series: type, action, reason and the two objects (by API
/// version, kind, namespace, name and uid; not resourceVersion, which every change moves).
fn key(ev: &Event, regarding: &ObjectReference) -> Box<str> {
    let mut key = String::new();
    let mut push = |part: &str| {
        key.push_str(part);
        key.push('\u{0}');
    };
    push(match ev.type_ {
        EventType::Normal => "N",
        EventType::Warning => "W",
    });
    push(&ev.action);
    push(&ev.reason);
    for object in std::iter::once(Some(regarding)).chain([ev.secondary.as_ref()]) {
        let Some(o) = object else {
            push("-");
            continue;
        };
        for part in [&o.api_version, &o.kind, &o.namespace, &o.name, &o.uid] {
            push(part.as_deref().unwrap_or(""));
        }
    }
    key.into_boxed_str()
}

/// The events sent in the window, by key, with their order of last use for eviction.
#[derive(Default)]
struct Seen {
    entries: HashMap<Arc<str>, Entry>,
    by_use: BTreeMap<u64, Arc<str>>,
    next: u64,
}

/// One remembered event: its name, its series count, when it was last sent.
struct Entry {
    name: Box<str>,
    count: i32,
    at: Instant,
    order: u64,
}

impl Seen {
    /// The name and next count of the series `key` continues, if it was sent within `window`.
    fn repeat(&mut self, key: &str, now: Instant, window: Duration) -> Option<(String, i32)> {
        self.expire(now, window);
        self.entries
            .get(key)
            .map(|e| (e.name.to_string(), e.count.saturating_add(1)))
    }

    /// Remembers that `name` was sent for `key` with `count`, forgetting the least recently
    /// sent events past `capacity`.
    fn seen(&mut self, key: Box<str>, name: String, count: i32, now: Instant, capacity: usize) {
        let key: Arc<str> = Arc::from(key);
        let order = self.next;
        self.next += 1;
        let entry = Entry {
            name: name.into_boxed_str(),
            count,
            at: now,
            order,
        };
        if let Some(old) = self.entries.insert(key.clone(), entry) {
            self.by_use.remove(&old.order);
        }
        self.by_use.insert(order, key);
        while self.entries.len() > capacity {
            self.forget_oldest();
        }
    }

    /// Forgets every event last sent more than `window` ago.
    fn expire(&mut self, now: Instant, window: Duration) {
        while let Some((_, key)) = self.by_use.first_key_value() {
            let stale = self
                .entries
                .get(key)
                .is_none_or(|e| now.saturating_duration_since(e.at) > window);
            if !stale {
                break;
            }
            self.forget_oldest();
        }
    }

    fn forget_oldest(&mut self) {
        if let Some((_, key)) = self.by_use.pop_first() {
            self.entries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_in_the_window_continues_the_series_and_an_old_one_starts_anew() {
        let mut seen = Seen::default();
        let t0 = Instant::now();
        let window = Duration::from_secs(60);
        assert_eq!(seen.repeat("a", t0, window), None);
        seen.seen("a".into(), "x.1".into(), 1, t0, 10);
        assert_eq!(seen.repeat("a", t0, window), Some(("x.1".into(), 2)));
        seen.seen("a".into(), "x.1".into(), 2, t0, 10);
        assert_eq!(seen.repeat("a", t0, window), Some(("x.1".into(), 3)));
        let later = t0 + Duration::from_secs(61);
        assert_eq!(seen.repeat("a", later, window), None, "past the window");
        assert!(seen.entries.is_empty() && seen.by_use.is_empty());
    }

    #[test]
    fn past_its_capacity_it_forgets_the_least_recently_sent() {
        let mut seen = Seen::default();
        let t = Instant::now();
        let w = Duration::from_secs(60);
        seen.seen("a".into(), "a.1".into(), 1, t, 2);
        seen.seen("b".into(), "b.1".into(), 1, t, 2);
        // `a` sent again: `b` is now the least recently sent.
        seen.seen("a".into(), "a.1".into(), 2, t, 2);
        seen.seen("c".into(), "c.1".into(), 1, t, 2);
        assert_eq!(seen.entries.len(), 2);
        assert_eq!(seen.by_use.len(), 2);
        assert!(seen.repeat("b", t, w).is_none());
        assert_eq!(seen.repeat("a", t, w), Some(("a.1".into(), 3)));
        assert_eq!(seen.repeat("c", t, w), Some(("c.1".into(), 2)));
    }

    #[test]
    fn the_key_ignores_the_resource_version_but_not_the_object_or_reason() {
        let ev = |reason: &str| Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: None,
            action: "Reconcile".into(),
            secondary: None,
        };
        let obj = |name: &str, rv: &str| ObjectReference {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            resource_version: Some(rv.into()),
            ..ObjectReference::default()
        };
        assert_eq!(
            key(&ev("Synced"), &obj("a", "1")),
            key(&ev("Synced"), &obj("a", "2"))
        );
        assert_ne!(
            key(&ev("Synced"), &obj("a", "1")),
            key(&ev("Synced"), &obj("b", "1"))
        );
        assert_ne!(
            key(&ev("Synced"), &obj("a", "1")),
            key(&ev("Failed"), &obj("a", "1"))
        );
    }
}
