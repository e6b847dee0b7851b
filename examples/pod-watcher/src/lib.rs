//! The pod watcher: every Pod add, update and delete, logged with namespace/name, phase and
//! node, through the shared informer and a rate-limited queue; or, in metadata-only mode,
//! with namespace/name and owner from a metadata-only informer (a fraction of the memory);
//! or, encoded, with the full line from Pods cached as JSON and decoded as they are logged.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::core::PartialObjectMeta;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{Encoded, Handlers, SharedInformerFactory};
use tokio::sync::mpsc;

use crate::generated::InformerFactoryExt;

/// How the watcher runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Watch one namespace (default: all).
    pub namespace: Option<String>,
    /// Re-deliver every cached pod as an update this often.
    pub resync: Option<Duration>,
    /// At most this many log lines per second (the queue's rate limit).
    pub rate: u32,
    /// Cache and log Pods' metadata only (namespace/name and owner; no phase or node):
    /// what a watcher of every Pod of a big cluster needs, at a fraction of the memory.
    pub metadata_only: bool,
    /// Cache Pods encoded (metadata decoded, the rest as JSON) and decode each one as its
    /// event is logged: the full line at well under half the memory of full Pods. Ignored
    /// with `metadata_only`.
    pub encoded: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: None,
            resync: None,
            rate: 100,
            metadata_only: false,
            encoded: false,
        }
    }
}

/// One line about a pod event: `ADDED default/web phase=Running node=node-a`.
pub fn describe(event: &str, pod: &Pod) -> String {
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Unknown".into());
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_else(|| "<none>".into());
    format!(
        "{event} {}/{} phase={phase} node={node}",
        pod.namespace().unwrap_or_default(),
        pod.name_any()
    )
}

/// One line about a pod event from its metadata alone: `ADDED default/web owner=ReplicaSet/web-6d4`.
pub fn describe_metadata(event: &str, pod: &PartialObjectMeta<Pod>) -> String {
    let owner = pod
        .owner_references()
        .iter()
        .find(|o| o.controller == Some(true))
        .or_else(|| pod.owner_references().first())
        .map_or_else(|| "<none>".to_owned(), |o| format!("{}/{}", o.kind, o.name));
    format!(
        "{event} {}/{} owner={owner}",
        pod.namespace().unwrap_or_default(),
        pod.name_any()
    )
}

/// One line about a pod event from an encoded cache: the pod decoded, then as [`describe`]
/// writes it.
pub fn describe_encoded(event: &str, pod: &Encoded<Pod>) -> String {
    match pod.decode() {
        Ok(decoded) => describe(event, &decoded),
        Err(e) => format!(
            "{event} {}/{} (not decoded: {e})",
            pod.namespace().unwrap_or_default(),
            pod.name_any()
        ),
    }
}

/// Handlers that queue one line per event, as `describe` writes it.
fn queueing<K: Send + Sync + 'static>(
    queue: &mpsc::UnboundedSender<String>,
    describe: fn(&str, &K) -> String,
) -> Handlers<K> {
    let (a, u, d) = (queue.clone(), queue.clone(), queue.clone());
    Handlers::new()
        .on_add(move |p: &Arc<K>| {
            let _ = a.send(describe("ADDED", p));
        })
        .on_update(move |_, p: &Arc<K>| {
            let _ = u.send(describe("UPDATED", p));
        })
        .on_delete(move |p: &Arc<K>| {
            let _ = d.send(describe("DELETED", p));
        })
}

/// Watches pods until `shutdown` resolves, handing every line to `sink` in order.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: BoxFuture<'static, ()>,
    sink: impl Fn(String) + Send + 'static,
) -> Result<(), String> {
    let mut builder = SharedInformerFactory::builder(client);
    if let Some(ns) = &options.namespace {
        builder = builder.namespace(ns);
    }
    if let Some(period) = options.resync {
        builder = builder.default_resync(period);
    }
    let factory = builder.build();
    // Handlers only queue; the worker below logs at the queue's rate.
    let (queue, mut work) = mpsc::unbounded_channel::<String>();
    if options.metadata_only {
        factory
            .metadata_informer::<Pod>()
            .add_event_handler(queueing(&queue, describe_metadata));
    } else if options.encoded {
        factory
            .encoded_informer::<Pod>()
            .add_event_handler(queueing(&queue, describe_encoded));
    } else {
        let pods = factory.core().v1().pods();
        pods.informer()
            .add_event_handler(queueing(&queue, describe));
    }
    drop(queue);
    factory.start();
    let synced = factory.wait_for_cache_sync(Duration::from_secs(60)).await;
    if synced.values().any(|ok| !ok) {
        factory.shutdown().await;
        return Err(format!("caches did not sync: {synced:?}"));
    }
    let mut limiter = tokio::time::interval(Duration::from_secs(1) / options.rate.max(1));
    let mut shutdown = shutdown;
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            line = work.recv() => match line {
                Some(line) => {
                    limiter.tick().await;
                    sink(line);
                }
                None => break,
            },
        }
    }
    factory.shutdown().await;
    Ok(())
}
