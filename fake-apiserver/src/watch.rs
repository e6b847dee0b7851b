//! Watches: initial events or a replay from a `resourceVersion`, then live events, with
//! bookmarks, `sendInitialEvents`, `timeoutSeconds` and 410 for expired versions.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};

use crate::body::{self, ResponseBody};
use crate::error::ApiError;
use crate::registry::ResourceType;
use crate::request::Target;
use crate::server::{self, Shared};

struct Live {
    rx: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
    served: ResourceType,
    bookmarks: Option<Interval>,
    deadline: Instant,
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
    target: &Target,
    params: &HashMap<String, String>,
) -> Response<ResponseBody> {
    let mut state = shared.lock();
    let Some(rt) = state
        .types
        .iter()
        .find(|r| {
            r.group == target.group && r.version == target.version && r.plural == target.plural
        })
        .cloned()
    else {
        return body::error(&ApiError::no_route(&target.plural));
    };
    let (labels, mut fields) = match server::selectors(&rt, params) {
        Ok(s) => s,
        Err(e) => return body::error(&e),
    };
    // A watch of one object (`/foos/x?watch=true`, as old clients send) selects it by name.
    if let Some(name) = &target.name {
        fields = crate::selector::FieldSelector::parse(&format!("metadata.name={name}"), &[])
            .unwrap_or(fields);
    }
    let (watcher, rx) = server::open_watch(&rt, target.namespace.as_deref(), labels, fields);
    let rv = params
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let initial = params.get("sendInitialEvents").is_some_and(|v| v == "true");
    let allow_bookmarks = params
        .get("allowWatchBookmarks")
        .is_some_and(|v| v == "true");
    if initial || rv.is_empty() || rv == "0" {
        // Current state as ADDED events, then live events from this version on.
        for (_, obj) in state
            .store
            .list(&rt.storage_key(), target.namespace.as_deref())
        {
            let mut served = obj.clone();
            rt.rewrite(&mut served);
            if watcher.labels.matches(served.pointer("/metadata/labels"))
                && watcher.fields.matches(&served)
            {
                watcher.send("ADDED", &served);
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
    } else {
        let since: u64 = match rv.parse() {
            Ok(v) => v,
            Err(_) => {
                return body::error(&ApiError::bad_request(format!(
                    "invalid resource version: {rv}"
                )));
            }
        };
        if let Err(oldest) = state.store.watch_from(watcher, since) {
            let status =
                ApiError::gone(format!("too old resource version: {since} ({oldest})")).to_status();
            return body::stream(futures::stream::iter([line("ERROR", &status)]));
        }
    }
    drop(state);
    let timeout = params
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let bookmarks = allow_bookmarks.then(|| {
        let period = shared.config.bookmark_interval;
        tokio::time::interval_at(Instant::now() + period, period)
    });
    let live = Live {
        rx,
        shared: shared.clone(),
        served: rt,
        bookmarks,
        deadline: Instant::now() + timeout,
    };
    let events = futures::stream::unfold(live, |mut live| async move {
        let next = tokio::select! {
            biased;
            msg = live.rx.recv() => msg,
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
