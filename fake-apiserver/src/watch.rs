//! Watches: initial events or a replay from a `resourceVersion`, then live events, with
//! bookmarks, `sendInitialEvents`, `timeoutSeconds` and 410 for expired versions.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};

use crate::admission::decode::options::ListOptions;
use crate::body::{self, ResponseBody};
use crate::error::ApiError;
use crate::request::Target;
use crate::resource::ResourceType;
use crate::store::Shared;
use crate::store::objects::Watcher;
use crate::store::selector::FieldSelector;

struct Live {
    rx: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
    served: ResourceType,
    bookmarks: Option<Interval>,
    deadline: Instant,
    /// An event could not be converted: its ERROR event was the last.
    failed: bool,
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

/// Opens a watch and returns its streaming response.
pub fn start(
    shared: &Arc<Shared>,
    rt: &ResourceType,
    target: &Target,
    options: &ListOptions,
) -> Response<ResponseBody> {
    let (labels, mut fields) = match options.selectors(rt) {
        Ok(s) => s,
        Err(e) => return body::error(&e),
    };
    // A watch of one object (`/foos/x?watch=true`, as old clients send) selects it by name.
    if let Some(name) = &target.name {
        fields = FieldSelector::name(name);
    }
    let rv = options.resource_version.as_str();
    let since: Option<u64> = match rv {
        "" | "0" => None,
        rv => match rv.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                return body::error(&ApiError::custom(
                    500,
                    "",
                    &format!(
                        "resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
                    ),
                ));
            }
        },
    };
    let mut state = shared.lock();
    let (watcher, rx) = Watcher::open(rt, target.namespace.as_deref(), labels, fields);
    let allow_bookmarks = options.bookmarks;
    let initial = options.send_initial_events == Some(true);
    if initial || since.is_none() {
        // Current state as ADDED events, then live events from this version on.
        for (pos, obj) in state
            .store
            .list(&rt.storage_key(), target.namespace.as_deref(), None)
        {
            let namespace = pos.split_once('/').map_or("", |(ns, _)| ns);
            if watcher.selects(namespace, obj) {
                watcher.send_stored("ADDED", obj);
            }
        }
        if initial && allow_bookmarks {
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
        let status =
            ApiError::gone(format!("too old resource version: {since} ({oldest})")).to_status();
        return body::stream(futures::stream::iter([line("ERROR", &status)]));
    }
    drop(state);
    let timeout = match options.timeout_seconds {
        None | Some(0) => Duration::from_secs(1800),
        Some(t) => Duration::from_secs(u64::try_from(t).unwrap_or(0)),
    };
    let bookmarks = allow_bookmarks.then(|| {
        let period = shared.config.bookmark_interval;
        tokio::time::interval_at(Instant::now() + period, period)
    });
    let live = Live {
        rx,
        shared: shared.clone(),
        served: rt.clone(),
        bookmarks,
        deadline: Instant::now() + timeout,
        failed: false,
    };
    let events = futures::stream::unfold(live, |mut live| async move {
        if live.failed {
            return None;
        }
        let next = tokio::select! {
            biased;
            msg = live.rx.recv() => match msg {
                // An object the CRD's conversion webhook converts; a failure ends the watch.
                Some(line) => match crate::conversion::webhook::event_line(&live.shared, &live.served, line).await {
                    Ok(line) => Some(line),
                    Err(error) => {
                        live.failed = true;
                        Some(error)
                    }
                },
                None => None,
            },
            () = tick(&mut live.bookmarks) => {
                let rv = live.shared.lock().store.resource_version();
                let mut mark = json!({"metadata": {"resourceVersion": rv.to_string()}});
                live.served.rewrite(&mut mark);
                Some(line("BOOKMARK", &mark))
            }
            () = tokio::time::sleep_until(live.deadline) => None,
        };
        next.map(|b| (b, live))
    });
    body::stream(events)
}

async fn tick(interval: &mut Option<Interval>) {
    match interval {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}
