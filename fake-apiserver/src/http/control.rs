//! Test controls: the actions the server saw, and faults programmed to happen.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;

use crate::error::ApiError;

/// One request as the server saw it, like client-go's fake `Action`.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`, `scale`).
    pub subresource: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// The request body, when it was JSON.
    pub body: Option<Value>,
}

impl Action {
    /// Whether the action writes (everything but get, list and watch).
    pub fn is_write(&self) -> bool {
        !matches!(self.verb.as_str(), "get" | "list" | "watch")
    }
}

/// The recorded actions: the newest `capacity`, oldest dropped first, so a long-running
/// server keeps bounded memory. Bodies are kept as the bytes received and read as JSON
/// only when the actions are asked for.
#[derive(Debug, Default)]
pub struct ActionLog {
    entries: std::collections::VecDeque<(Action, Recorded)>,
    capacity: usize,
    dropped: u64,
}

impl ActionLog {
    /// A log that keeps the last `capacity` actions (0: none).
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: std::collections::VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    /// Records one action (its `body` left `None`) with the body as received, dropping the
    /// oldest when full.
    pub fn push(&mut self, action: Action, body: Recorded) {
        if self.capacity == 0 {
            self.dropped += 1;
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
            self.dropped += 1;
        }
        self.entries.push_back((action, body));
    }

    /// The kept actions, oldest first, with their bodies as JSON.
    pub fn entries(&self) -> impl Iterator<Item = Action> + '_ {
        self.entries.iter().map(|(action, body)| Action {
            body: (body.decode)(&body.content_type, &body.bytes),
            ..action.clone()
        })
    }

    /// How many actions were dropped (or not recorded) since the last clear.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.entries.shrink_to_fit();
        self.dropped = 0;
    }
}

/// A request body as received, and how to read it as JSON.
#[derive(Debug)]
pub struct Recorded {
    /// The body.
    pub bytes: bytes::Bytes,
    /// Its `Content-Type`.
    pub content_type: String,
    /// Reads it as JSON (`None` when it is not a JSON, YAML or protobuf object).
    pub decode: fn(&str, &[u8]) -> Option<Value>,
}

/// Which requests a fault applies to; `None` matches anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matcher {
    /// Verb (`create`, `update`, `patch`, ...).
    pub verb: Option<String>,
    /// Plural resource.
    pub resource: Option<String>,
    /// Subresource.
    pub subresource: Option<String>,
    /// Object name.
    pub name: Option<String>,
}

impl Matcher {
    /// Requests with this verb on this resource (`"*"` for any).
    pub fn new(verb: &str, resource: &str) -> Self {
        let any = |s: &str| (s != "*").then(|| s.to_owned());
        Self {
            verb: any(verb),
            resource: any(resource),
            ..Self::default()
        }
    }

    /// Only on this subresource.
    #[must_use]
    pub fn subresource(mut self, sub: &str) -> Self {
        self.subresource = Some(sub.to_owned());
        self
    }

    /// Only for this object.
    #[must_use]
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    fn matches(&self, a: &Action) -> bool {
        self.verb.as_ref().is_none_or(|v| *v == a.verb)
            && self.resource.as_ref().is_none_or(|r| *r == a.resource)
            && self
                .subresource
                .as_ref()
                .is_none_or(|s| Some(s) == a.subresource.as_ref())
            && self
                .name
                .as_ref()
                .is_none_or(|n| Some(n) == a.name.as_ref())
    }
}

#[derive(Debug, Clone)]
struct Fault {
    matcher: Matcher,
    error: Option<ApiError>,
    delay: Option<Duration>,
    /// How many more requests it applies to; `None` for all.
    remaining: Option<usize>,
}

/// Programmed faults, checked in order for every request.
#[derive(Debug, Default)]
pub struct Faults(Vec<Fault>);

impl Faults {
    /// Adds a fault.
    pub fn add(
        &mut self,
        matcher: Matcher,
        error: Option<ApiError>,
        delay: Option<Duration>,
        times: Option<usize>,
    ) {
        self.0.push(Fault {
            matcher,
            error,
            delay,
            remaining: times,
        });
    }

    /// Removes every fault.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The delay and error for this request, consuming counted faults.
    pub fn check(&mut self, action: &Action) -> (Option<Duration>, Option<ApiError>) {
        let mut delay = None;
        let mut error = None;
        for f in self
            .0
            .iter_mut()
            .filter(|f| f.matcher.matches(action) && f.remaining != Some(0))
        {
            if let Some(n) = f.remaining.as_mut() {
                *n -= 1;
            }
            delay = delay.or(f.delay);
            if error.is_none() {
                error = f.error.clone();
            }
        }
        self.0.retain(|f| f.remaining != Some(0));
        (delay, error)
    }
}

/// The test controls one server's clones share: the action log, the programmed faults and
/// the watch lags.
#[derive(Debug)]
pub struct Controls {
    actions: Mutex<ActionLog>,
    faults: Mutex<Faults>,
    /// Per plural resource (`None`: any), how late watches deliver each event.
    lags: Mutex<Vec<(Option<String>, Duration)>>,
    /// Wakes the watches waiting out a lag when the lags change.
    lags_changed: tokio::sync::Notify,
    /// The bearer tokens the HTTP server knows besides the default admin's, and whom each
    /// authenticates.
    tokens: Mutex<std::collections::BTreeMap<String, crate::admission::authorization::User>>,
    /// The impersonation mode that last worked for each requestor.
    impersonation: super::impersonation::Modes,
}

impl Controls {
    /// Controls with an action log of `capacity` and no faults.
    pub fn new(capacity: usize) -> Self {
        Self {
            actions: Mutex::new(ActionLog::new(capacity)),
            faults: Mutex::new(Faults::default()),
            lags: Mutex::default(),
            lags_changed: tokio::sync::Notify::new(),
            tokens: Mutex::default(),
            impersonation: super::impersonation::Modes::default(),
        }
    }

    /// The impersonation mode that last worked for each requestor.
    pub(crate) fn impersonation(&self) -> &super::impersonation::Modes {
        &self.impersonation
    }

    /// A new bearer token that authenticates `user`: 128 bits from the operating system, so
    /// a token on a shared machine is not guessed.
    pub fn mint_token(&self, user: crate::admission::authorization::User) -> String {
        let mut bytes = [0u8; 16];
        let random = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
        if random.is_err() {
            // No /dev/urandom: the clock and a counter, still unique per token.
            static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            bytes = (nanos ^ (u128::from(n) << 64)).to_le_bytes();
        }
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let token = format!("fake-{token}");
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), user);
        token
    }

    /// The user `token` authenticates, when it is one the server gave out.
    pub fn token_user(&self, token: &str) -> Option<crate::admission::authorization::User> {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
            .cloned()
    }

    /// Makes watches of `resource` (plural; `None` for every resource) deliver each event
    /// `lag` after it happened; a zero lag removes the setting. The last setting that
    /// matches a resource wins.
    pub fn lag_watches(&self, resource: Option<&str>, lag: Duration) {
        let mut lags = self.lags.lock().unwrap_or_else(PoisonError::into_inner);
        let resource = resource.map(str::to_owned);
        lags.retain(|(r, _)| *r != resource);
        if !lag.is_zero() {
            lags.push((resource, lag));
        }
        drop(lags);
        self.lags_changed.notify_waiters();
    }

    /// Completes at the next change of the lags (from when it is created, polled or not).
    pub fn lags_changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.lags_changed.notified()
    }

    /// How late watches of `resource` deliver their events now.
    pub fn watch_lag(&self, resource: &str) -> Duration {
        let lags = self.lags.lock().unwrap_or_else(PoisonError::into_inner);
        lags.iter()
            .rev()
            .find(|(r, _)| r.as_deref().is_none_or(|r| r == resource))
            .map_or(Duration::ZERO, |(_, lag)| *lag)
    }

    /// The action log, even if a panicking test poisoned its lock.
    pub fn actions(&self) -> MutexGuard<'_, ActionLog> {
        self.actions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The faults, even if a panicking test poisoned their lock.
    pub fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
