//! Watches: initial events or a replay from a `resourceVersion`, then live events, with
//! bookmarks, `sendInitialEvents`, `timeoutSeconds` and 410 for expired versions.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};

use super::body::{self, ResponseBody};
use super::control::Controls;
use super::partial::{self, Partial};
use super::route::Target;
use crate::admission::decode::options::ListOptions;
use crate::conversion::webhook::event_line;
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::store::objects::Watcher;
use crate::store::selector::FieldSelector;
use crate::store::{Shared, State};

/// An open watch's stream: its event lines, and when it sends a bookmark or ends.
struct Live {
    rx: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
    controls: Arc<Controls>,
    served: ResourceType,
    bookmarks: Option<Interval>,
    deadline: Instant,
    /// Events held back by a programmed lag, with when each happened.
    lagging: VecDeque<(Instant, Bytes)>,
    /// The store closed the watch: what is held back is the last to send.
    closed: bool,
    /// An event could not be converted: its ERROR event was the last.
    failed: bool,
}

/// What an open watch sends next.
enum Next {
    Event(Bytes),
    Bookmark,
    End,
}

/// One event line.
fn line(kind: &str, object: &Value) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

/// Opens a watch and returns its streaming response.
pub fn start(
    shared: &Arc<Shared>,
    controls: &Arc<Controls>,
    rt: &ResourceType,
    target: &Target,
    options: &ListOptions,
    partial: Option<Partial>,
) -> Response<ResponseBody> {
    let (labels, mut fields) = match options.selectors(rt) {
        Ok(s) => s,
        Err(e) => return body::error(&e),
    };
    // A watch of one object (`/foos/x?watch=true`, as old clients send) selects it by name.
    if let Some(name) = &target.name {
        fields = FieldSelector::name(name);
    }
    let since = match since(options) {
        Ok(since) => since,
        Err(e) => return body::error(&e),
    };
    // A negative `timeoutSeconds` is a deadline already past: kube-apiserver answers with
    // that one error event, before any other.
    if options.timeout_seconds.is_some_and(|t| t < 0) {
        let expired = ApiError::internal("context deadline exceeded");
        return body::stream(futures::stream::iter([line("ERROR", &expired.to_status())]));
    }
    let (watcher, rx) = Watcher::open(rt, target.namespace.as_deref(), labels, fields);
    if let Err(gone) = register(&mut shared.lock(), rt, watcher, since, options) {
        return body::stream(futures::stream::iter([line("ERROR", &gone.to_status())]));
    }
    let events = events(shared, controls, rt, rx, options);
    match partial {
        Some(Partial::Object(version)) => {
            body::stream(events.map(move |line| partial::event(version, line)))
        }
        // The real server cannot make an event's object a list: its watch ends at once,
        // without an event.
        Some(Partial::List(_)) => body::stream(futures::stream::empty()),
        None => body::stream(events),
    }
}

/// The version a watch starts after: none for `""` and `"0"` (from the current state).
fn since(options: &ListOptions) -> Result<Option<u64>, ApiError> {
    match options.resource_version.as_str() {
        "" | "0" => Ok(None),
        rv => rv.parse().map(Some).map_err(|_| {
            ApiError::custom(
                500,
                "",
                &format!(
                    "resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
                ),
            )
        }),
    }
}

/// Registers `watcher` with the store: after sending the current state as `ADDED` events
/// (and, with `sendInitialEvents`, the bookmark that ends them), or replaying the history
/// after `since`, which is a 410 when it is no longer kept.
fn register(
    state: &mut State,
    rt: &ResourceType,
    watcher: Watcher,
    since: Option<u64>,
    options: &ListOptions,
) -> Result<(), ApiError> {
    let initial = options.send_initial_events == Some(true);
    if initial || since.is_none() {
        // Current state as ADDED events, then live events from this version on.
        let namespace = watcher.namespace.clone();
        for (pos, obj) in state
            .store
            .list(&rt.storage_key(), namespace.as_deref(), None)
        {
            let namespace = pos.split_once('/').map_or("", |(ns, _)| ns);
            if watcher.selects(namespace, obj) {
                watcher.send_stored("ADDED", obj);
            }
        }
        if initial && options.bookmarks {
            let mut mark = json!({"metadata": {
                "resourceVersion": state.store.resource_version().to_string(),
                "annotations": {"k8s.io/initial-events-end": "true"}
            }});
            rt.rewrite(&mut mark);
            watcher.send("BOOKMARK", &mark);
        }
        state.store.watch_now(watcher);
    } else if let Some(since) = since
        && let Err(oldest) = state.store.watch_from(watcher, since)
    {
        return Err(ApiError::gone(format!(
            "too old resource version: {since} ({oldest})"
        )));
    }
    Ok(())
}

/// The live events of a registered watch: its event lines (converted by the CRD's
/// conversion webhook when it must; a failure is the last event), bookmarks when asked
/// for, until `timeoutSeconds` (30 minutes by default). A lag programmed for the resource
/// ([`Controls::lag_watches`]) holds each event back that long after it happened, as a
/// busy cluster's watch cache does; no bookmark is sent while events are held back.
fn events(
    shared: &Arc<Shared>,
    controls: &Arc<Controls>,
    rt: &ResourceType,
    rx: mpsc::UnboundedReceiver<Bytes>,
    options: &ListOptions,
) -> impl futures::Stream<Item = Bytes> + Send + 'static {
    let timeout = match options.timeout_seconds {
        None | Some(0) => Duration::from_secs(1800),
        Some(t) => Duration::from_secs(u64::try_from(t).unwrap_or(0)),
    };
    let bookmarks = options.bookmarks.then(|| {
        let period = shared.config.bookmark_interval;
        tokio::time::interval_at(Instant::now() + period, period)
    });
    let live = Live {
        rx,
        shared: shared.clone(),
        controls: controls.clone(),
        served: rt.clone(),
        bookmarks,
        deadline: Instant::now() + timeout,
        lagging: VecDeque::new(),
        closed: false,
        failed: false,
    };
    futures::stream::unfold(live, |mut live| async move {
        if live.failed {
            return None;
        }
        let line = match next(&mut live).await {
            // An object the CRD's conversion webhook converts; a failure ends the watch.
            Next::Event(line) => match event_line(&live.shared, &live.served, line).await {
                Ok(line) => line,
                Err(error) => {
                    live.failed = true;
                    error
                }
            },
            Next::Bookmark => {
                let rv = live.shared.lock().store.resource_version();
                let mut mark = json!({"metadata": {"resourceVersion": rv.to_string()}});
                live.served.rewrite(&mut mark);
                line("BOOKMARK", &mark)
            }
            Next::End => return None,
        };
        Some((line, live))
    })
}

/// Waits for what the watch sends next.
async fn next(live: &mut Live) -> Next {
    loop {
        // Registered before the lag is read, so a change in between is not missed (a
        // clone: the select below borrows `live` mutably).
        let controls = live.controls.clone();
        let lags_changed = controls.lags_changed();
        let lag = controls.watch_lag(&live.served.plural);
        let due = live.lagging.front().map(|(at, _)| *at + lag);
        if live.closed && due.is_none() {
            return Next::End;
        }
        tokio::select! {
            biased;
            // A lag lowered or removed: what is held back may be due now.
            () = lags_changed, if due.is_some() => {}
            () = sleep_until_some(due) => {
                if let Some((_, line)) = live.lagging.pop_front() {
                    return Next::Event(line);
                }
            }
            msg = live.rx.recv(), if !live.closed => match msg {
                Some(line) if lag.is_zero() && live.lagging.is_empty() => return Next::Event(line),
                Some(line) => live.lagging.push_back((Instant::now(), line)),
                None => live.closed = true,
            },
            () = tick(&mut live.bookmarks) => {
                if live.lagging.is_empty() {
                    return Next::Bookmark;
                }
            }
            () = tokio::time::sleep_until(live.deadline) => return Next::End,
        }
    }
}

/// Sleeps until `at`, or forever when there is none.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn tick(interval: &mut Option<Interval>) {
    match interval {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}
