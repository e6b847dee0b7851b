//! The work queue, with client-go's rules (`workqueue.TypedRateLimitingInterface`):
//!
//! - a key added while it waits is there once (dedup);
//! - a key is never handed to two workers at once: added while in flight, it runs again
//!   after [`WorkQueue::done`];
//! - [`WorkQueue::add_rate_limited`] waits out the key's backoff ([`super::backoff`]),
//!   [`WorkQueue::forget`] resets it, [`WorkQueue::add_after`] waits a given time;
//! - two lanes: keys added for a live change ([`Priority::Live`]) are handed out before
//!   those of an initial list or a resync ([`Priority::Low`]), so a new object is reconciled
//!   at once even while a restart works through thousands of cached ones; a waiting key
//!   added again live moves to the live lane;
//! - [`WorkQueue::shut_down`] hands out nothing more; workers finish what they hold.
//!
//! It reports to its [`QueueMetrics`]: depth, adds, time queued, time worked, retries,
//! and (read when scraped) the work in flight and the longest-running key.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use tokio::sync::Notify;

use super::backoff::{Backoff, RateLimiter};

/// Which lane a key is added to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    /// An initial list, a re-list or a resync: after every live change.
    Low,
    /// A change as it happens (and requeues of a key being worked on).
    Live,
}

/// What a queue reports, under client-go's `workqueue_*` metric names (see
/// [`crate::metrics`]).
pub trait QueueMetrics: Send + Sync + 'static {
    /// A key was added (`workqueue_adds_total`).
    fn added(&self) {}
    /// How many keys wait now (`workqueue_depth`).
    fn depth(&self, _depth: usize) {}
    /// A key waited this long before a worker took it (`workqueue_queue_duration_seconds`).
    fn queued_for(&self, _wait: Duration) {}
    /// A worker held a key this long (`workqueue_work_duration_seconds`).
    fn worked_for(&self, _work: Duration) {}
    /// A key was requeued after a failure (`workqueue_retries_total`).
    fn retried(&self) {}
}

/// A queue that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoMetrics;

impl QueueMetrics for NoMetrics {}

/// What the queue knows of a key that waits, runs, or both: 32 bytes, as the index holds
/// one per queued key (times are [`Ticks`], `0` for none).
struct Entry {
    /// Its place in its lane: the sequence number of its slot there (`0`: in no lane). A
    /// slot whose number is not this one is stale (the key moved up, or was handed out)
    /// and skipped.
    slot: u64,
    /// When it was added, for the time it waited.
    added_at: Ticks,
    /// Since when a worker holds it.
    processing: Ticks,
    /// The lane it waits for (also while its worker runs: it goes there when done).
    dirty: Option<Priority>,
}

/// An instant as nanoseconds after the queue's creation, plus one (`0` stands for none).
type Ticks = u64;

struct State<K> {
    /// What [`Ticks`] count from.
    base: Instant,
    /// Every key that waits or runs, once: one hash lookup per operation.
    entries: HashMap<K, Entry>,
    /// The lanes: slots of keys, in order, stale ones skipped when they come up.
    live: VecDeque<(u64, K)>,
    low: VecDeque<(u64, K)>,
    /// Keys waiting in the lanes (stale slots not counted): the depth.
    queued: usize,
    /// Keys added for later, soonest first; the sequence keeps equal times in order.
    later: BinaryHeap<Reverse<(Instant, u64, Priority)>>,
    later_keys: HashMap<u64, K>,
    /// The earliest time each key is waited for (later adds for a key already waiting
    /// sooner are dropped, as client-go does).
    later_at: HashMap<K, Instant>,
    /// The next sequence number, of lane slots and later entries alike.
    sequence: u64,
    limiter: RateLimiter<K>,
    shutting_down: bool,
}

impl<K: Clone + Eq + Hash> State<K> {
    fn next(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    fn ticks(&self, at: Instant) -> Ticks {
        let nanos = at.saturating_duration_since(self.base).as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX - 1) + 1
    }

    /// The time from `ticks` to `now` (zero for none).
    fn since(&self, ticks: Ticks, now: Instant) -> Duration {
        match ticks {
            0 => Duration::ZERO,
            t => now.saturating_duration_since(self.base + Duration::from_nanos(t - 1)),
        }
    }

    /// Puts `key` (whose entry says it is dirty for `lane`) in a new slot of `lane`.
    fn enqueue(&mut self, key: K, lane: Priority) {
        let slot = self.next();
        if let Some(entry) = self.entries.get_mut(&key) {
            if entry.slot == 0 {
                self.queued += 1;
            }
            entry.slot = slot;
        }
        match lane {
            Priority::Live => self.live.push_back((slot, key)),
            Priority::Low => self.low.push_back((slot, key)),
        }
    }

    /// The next key of the lanes, live first, stale slots skipped; its entry then says
    /// it runs.
    fn pop(&mut self, now: Instant) -> Option<(K, Duration)> {
        loop {
            let (slot, key) = self.live.pop_front().or_else(|| self.low.pop_front())?;
            let ticks = self.ticks(now);
            let Some(entry) = self.entries.get_mut(&key) else {
                continue;
            };
            if entry.slot != slot {
                continue;
            }
            entry.slot = 0;
            entry.dirty = None;
            entry.processing = ticks;
            let added_at = std::mem::take(&mut entry.added_at);
            let waited = self.since(added_at, now);
            self.queued -= 1;
            if self.live.len() + self.low.len() > 4 * self.queued.max(16) {
                // Mostly stale slots (keys that moved up): dropped in one pass.
                let entries = &self.entries;
                let fresh = |(n, k): &(u64, K)| entries.get(k).is_some_and(|e| e.slot == *n);
                self.live.retain(fresh);
                self.low.retain(fresh);
            }
            return Some((key, waited));
        }
    }
}

/// A rate-limited work queue of keys `K` (cheap to clone: the clones share it).
pub struct WorkQueue<K> {
    state: Arc<Mutex<State<K>>>,
    ready: Arc<Notify>,
    metrics: Arc<dyn QueueMetrics>,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            ready: Arc::clone(&self.ready),
            metrics: Arc::clone(&self.metrics),
        }
    }
}

impl<K: Clone + Eq + Hash + Send + 'static> WorkQueue<K> {
    /// A queue with `backoff` for failed keys, reporting to `metrics`.
    pub fn new(backoff: Backoff, metrics: Arc<dyn QueueMetrics>) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                base: Instant::now(),
                entries: HashMap::new(),
                live: VecDeque::new(),
                low: VecDeque::new(),
                queued: 0,
                later: BinaryHeap::new(),
                later_keys: HashMap::new(),
                later_at: HashMap::new(),
                sequence: 0,
                limiter: RateLimiter::new(backoff),
                shutting_down: false,
            })),
            ready: Arc::new(Notify::new()),
            metrics,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `key` in lane `priority` (see the module's rules).
    pub fn add(&self, key: K, priority: Priority) {
        let mut s = self.lock();
        self.add_locked(&mut s, key, priority, Instant::now());
        let depth = s.queued;
        drop(s);
        self.metrics.depth(depth);
        self.ready.notify_one();
    }

    fn add_locked(&self, s: &mut State<K>, key: K, priority: Priority, now: Instant) {
        if s.shutting_down {
            return;
        }
        let ticks = s.ticks(now);
        match s.entries.get_mut(&key) {
            Some(entry) if entry.dirty.is_some() => {
                // Waiting already: at most moved up to the live lane (its low slot goes
                // stale).
                if entry.dirty == Some(Priority::Low) && priority == Priority::Live {
                    entry.dirty = Some(Priority::Live);
                    if entry.slot != 0 {
                        s.enqueue(key, Priority::Live);
                    }
                }
                return;
            }
            Some(entry) => {
                // Its worker runs: it waits until done, then goes to its lane.
                entry.dirty = Some(priority);
                entry.added_at = ticks;
            }
            None => {
                s.entries.insert(
                    key.clone(),
                    Entry {
                        slot: 0,
                        added_at: ticks,
                        processing: 0,
                        dirty: Some(priority),
                    },
                );
                s.enqueue(key, priority);
            }
        }
        self.metrics.added();
    }

    /// Adds `key` once `delay` has passed (at once when it is zero).
    pub fn add_after(&self, key: K, delay: Duration, priority: Priority) {
        if delay.is_zero() {
            return self.add(key, priority);
        }
        let mut s = self.lock();
        if s.shutting_down {
            return;
        }
        let at = Instant::now() + delay;
        if s.later_at.get(&key).is_some_and(|sooner| *sooner <= at) {
            return;
        }
        s.later_at.insert(key.clone(), at);
        s.sequence += 1;
        let n = s.sequence;
        s.later.push(Reverse((at, n, priority)));
        s.later_keys.insert(n, key);
        drop(s);
        // A worker waiting for the next deadline looks again.
        self.ready.notify_one();
    }

    /// Adds `key` after its backoff: the larger of its own (growing with each failure) and
    /// the shared bucket's.
    pub fn add_rate_limited(&self, key: K) {
        let delay = self.lock().limiter.when(&key, Instant::now());
        self.metrics.retried();
        self.add_after(key, delay, Priority::Live);
    }

    /// Forgets `key`'s failures: its next failure waits the base delay again.
    pub fn forget(&self, key: &K) {
        self.lock().limiter.forget(key);
    }

    /// How many times `key` failed since it last succeeded.
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.lock().limiter.requeues(key)
    }

    /// How many keys wait in the lanes now.
    pub fn len(&self) -> usize {
        self.lock().queued
    }

    /// Whether no key waits in the lanes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next key (live lane first), waiting for one; `None` once the queue is shut down
    /// and empty. The caller holds it until [`WorkQueue::done`].
    pub async fn get(&self) -> Option<K> {
        loop {
            // Registered before looking, so an add between the look and the wait wakes it.
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let next_deadline = {
                let mut s = self.lock();
                let now = Instant::now();
                while let Some(Reverse((at, n, priority))) = s.later.peek().copied() {
                    if at > now {
                        break;
                    }
                    s.later.pop();
                    // An entry a sooner time for its key replaced is stale: skipped.
                    if let Some(key) = s.later_keys.remove(&n)
                        && s.later_at.get(&key) == Some(&at)
                    {
                        s.later_at.remove(&key);
                        self.add_locked(&mut s, key, priority, now);
                    }
                }
                if let Some((key, waited)) = s.pop(now) {
                    let depth = s.queued;
                    drop(s);
                    self.metrics.queued_for(waited);
                    self.metrics.depth(depth);
                    if depth > 0 {
                        // Another worker may take the next one.
                        self.ready.notify_one();
                    }
                    return Some(key);
                }
                if s.shutting_down {
                    drop(s);
                    // Wake the other workers so they see it too.
                    self.ready.notify_one();
                    return None;
                }
                s.later.peek().map(|Reverse((at, _, _))| *at)
            };
            match next_deadline {
                Some(at) => {
                    tokio::select! {
                        () = &mut notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// The worker is done with `key`: if it was added meanwhile, it waits in its lane again.
    pub fn done(&self, key: &K) {
        let mut s = self.lock();
        let Some(entry) = s.entries.get_mut(key) else {
            return;
        };
        let started = std::mem::take(&mut entry.processing);
        let lane = entry.dirty;
        match lane {
            Some(lane) => s.enqueue(key.clone(), lane),
            None => {
                s.entries.remove(key);
            }
        }
        let worked = (started != 0).then(|| s.since(started, Instant::now()));
        drop(s);
        if let Some(worked) = worked {
            self.metrics.worked_for(worked);
        }
        if lane.is_some() {
            self.ready.notify_one();
        }
    }

    /// Hands out nothing more: [`WorkQueue::get`] returns `None` once the lanes are empty
    /// (keys waiting for later are dropped), and adds are ignored.
    pub fn shut_down(&self) {
        let mut s = self.lock();
        s.shutting_down = true;
        s.later.clear();
        s.later_keys.clear();
        s.later_at.clear();
        drop(s);
        self.ready.notify_waiters();
        self.ready.notify_one();
    }

    /// Whether [`WorkQueue::shut_down`] was called.
    pub fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    /// Seconds of work in flight (summed over the keys workers hold) and the longest a key
    /// has been held: `workqueue_unfinished_work_seconds` and
    /// `workqueue_longest_running_processor_seconds`, read when scraped.
    pub fn in_flight(&self) -> (f64, f64) {
        let s = self.lock();
        let now = Instant::now();
        s.entries
            .values()
            .filter(|e| e.processing != 0)
            .fold((0.0, 0.0), |(sum, longest), e| {
                let held = s.since(e.processing, now).as_secs_f64();
                (sum + held, f64::max(longest, held))
            })
    }

    /// The keys workers hold now.
    pub fn processing(&self) -> HashSet<K> {
        self.lock()
            .entries
            .iter()
            .filter(|(_, e)| e.processing != 0)
            .map(|(k, _)| k.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> WorkQueue<&'static str> {
        WorkQueue::new(Backoff::default(), Arc::new(NoMetrics))
    }

    #[tokio::test]
    async fn a_key_added_twice_is_handed_out_once() {
        let q = queue();
        q.add("a", Priority::Low);
        q.add("a", Priority::Low);
        q.add("b", Priority::Low);
        assert_eq!(q.len(), 2);
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(q.get().await, Some("b"));
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_key_in_flight_is_not_handed_out_again_until_done() {
        let q = queue();
        q.add("a", Priority::Live);
        assert_eq!(q.get().await, Some("a"));
        // Changed while its worker runs: waits, then runs again after.
        q.add("a", Priority::Live);
        q.add("b", Priority::Live);
        assert_eq!(q.get().await, Some("b"));
        let second = tokio::time::timeout(Duration::from_millis(50), q.get()).await;
        assert!(second.is_err(), "a is held by its worker");
        q.done(&"a");
        assert_eq!(q.get().await, Some("a"));
    }

    #[tokio::test]
    async fn live_changes_go_before_the_initial_list() {
        let q = queue();
        for k in ["l1", "l2", "l3"] {
            q.add(k, Priority::Low);
        }
        q.add("new", Priority::Live);
        // A waiting key changed live moves up too.
        q.add("l3", Priority::Live);
        let order: Vec<&str> = [q.get().await, q.get().await, q.get().await, q.get().await]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(order, ["new", "l3", "l1", "l2"]);
    }

    #[test]
    fn an_entry_is_32_bytes() {
        assert!(std::mem::size_of::<Entry>() <= 32);
    }

    #[tokio::test]
    async fn keys_moved_up_by_the_thousand_leave_no_stale_slots_behind() {
        let q: WorkQueue<u32> = WorkQueue::new(Backoff::default(), Arc::new(NoMetrics));
        for k in 0..10_000 {
            q.add(k, Priority::Low);
        }
        // Every other key changes live: each moves up once, however often it is added.
        for _ in 0..3 {
            for k in (0..10_000).step_by(2) {
                q.add(k, Priority::Live);
            }
        }
        assert_eq!(q.len(), 10_000);
        let mut order = Vec::new();
        while let Ok(Some(k)) = tokio::time::timeout(Duration::from_millis(10), q.get()).await {
            order.push(k);
            q.done(&k);
        }
        assert_eq!(order.len(), 10_000, "each key once");
        assert!(
            order[..5_000].iter().all(|k| k % 2 == 0),
            "the live ones first"
        );
        assert!(
            order[5_000..].windows(2).all(|w| w[0] < w[1]),
            "the rest in order"
        );
        let s = q.lock();
        assert!(s.live.is_empty() && s.low.is_empty() && s.entries.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limited_keys_wait_their_backoff_and_forget_resets_it() {
        let q = WorkQueue::new(
            Backoff {
                base: Duration::from_secs(1),
                max: Duration::from_secs(8),
                qps: 0.0,
                burst: 1,
            },
            Arc::new(NoMetrics),
        );
        let started = tokio::time::Instant::now();
        let mut waits = Vec::new();
        for _ in 0..5 {
            q.add_rate_limited("a");
            let before = tokio::time::Instant::now();
            assert_eq!(q.get().await, Some("a"));
            waits.push((tokio::time::Instant::now() - before).as_secs());
            q.done(&"a");
        }
        assert_eq!(waits, [1, 2, 4, 8, 8], "doubling to the cap");
        assert_eq!(q.num_requeues(&"a"), 5);
        q.forget(&"a");
        q.add_rate_limited("a");
        let before = tokio::time::Instant::now();
        q.get().await;
        assert_eq!((tokio::time::Instant::now() - before).as_secs(), 1);
        assert!(started.elapsed() >= Duration::from_secs(24));
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_keeps_the_earliest_time() {
        let q = queue();
        q.add_after("a", Duration::from_secs(10), Priority::Live);
        q.add_after("a", Duration::from_secs(2), Priority::Live);
        q.add_after("a", Duration::from_secs(5), Priority::Live);
        let before = tokio::time::Instant::now();
        assert_eq!(q.get().await, Some("a"));
        assert_eq!((tokio::time::Instant::now() - before).as_secs(), 2);
        q.done(&"a");
        let again = tokio::time::timeout(Duration::from_secs(20), q.get()).await;
        assert!(again.is_err(), "the later times were dropped");
    }

    #[tokio::test]
    async fn shut_down_hands_out_what_waits_then_nothing() {
        let q = queue();
        q.add("a", Priority::Live);
        q.shut_down();
        q.add("b", Priority::Live);
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(q.get().await, None);
        // Waiting workers wake up.
        let q2 = queue();
        let waiting = tokio::spawn({
            let q2 = q2.clone();
            async move { q2.get().await }
        });
        tokio::task::yield_now().await;
        q2.shut_down();
        assert_eq!(waiting.await.unwrap(), None);
    }
}
