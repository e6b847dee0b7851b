//! The pod watcher, a port of client-go's workqueue example: every Pod add, update and
//! delete queues the pod's key (`namespace/name`) in the runtime's [`WorkQueue`], and one
//! worker logs a line per key with namespace/name, phase and node; or, in metadata-only
//! mode, with namespace/name and owner from a metadata-only informer (a fraction of the
//! memory); or, encoded, with the full line from Pods cached as JSON and decoded as they are
//! logged.
//!
//! The queue holds keys, as client-go's does, so it dedups them: changes of one pod that
//! come faster than its line is written are one line, about its latest state (`ADDED` while
//! the pod has not been logged yet, `DELETED` once it is gone). Lines are paced by the
//! queue's token bucket ([`Options::rate`]). The informers, the wait for their first lists
//! and the shutdown are the runtime's [`Manager`]'s.
//!
//! It is not a [`Controller`](kube_codegen_runtime::controller::Controller): a controller
//! reconciles the objects that exist and drops the key of one that is gone, where the
//! watcher's last line about a pod is its deletion.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::core::PartialObjectMeta;
use kube::{Client, Resource, ResourceExt};
use kube_codegen_runtime::controller::queue::NoMetrics;
use kube_codegen_runtime::controller::{Backoff, ObjectKey, WorkQueue};
use kube_codegen_runtime::manager::{Manager, ManagerOptions};
use kube_codegen_runtime::{Encoded, Handlers, SharedInformer, SharedInformerFactory};
use serde::de::DeserializeOwned;

use crate::generated::InformerFactoryExt;

/// How the watcher runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Watch one namespace (default: all).
    pub namespace: Option<String>,
    /// Re-deliver every cached pod as an update this often.
    pub resync: Option<Duration>,
    /// At most this many log lines a second, evenly spaced (0 counts as 1): the queue's
    /// token bucket, which paces each key as it is queued.
    pub rate: u32,
    /// Cache and log Pods' metadata only (namespace/name and owner; no phase or node):
    /// what a watcher of every Pod of a big cluster needs, at a fraction of the memory.
    pub metadata_only: bool,
    /// Cache Pods encoded (metadata decoded, the rest as JSON) and decode each one as its
    /// line is written: the full line at well under half the memory of full Pods. Ignored
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

/// ` deleting` for a pod marked for deletion that is not gone yet (kube-apiserver marks a
/// pod first, then removes it once its kubelet, or a zero grace period, lets it go).
fn deleting(event: &str, meta: &kube::core::ObjectMeta) -> &'static str {
    if event != "DELETED" && meta.deletion_timestamp.is_some() {
        " deleting"
    } else {
        ""
    }
}

/// One line about a pod event: `ADDED default/web phase=Running node=node-a` (and
/// ` deleting` once it is marked for deletion).
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
        "{event} {}/{} phase={phase} node={node}{}",
        pod.namespace().unwrap_or_default(),
        pod.name_any(),
        deleting(event, &pod.metadata)
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
        "{event} {}/{} owner={owner}{}",
        pod.namespace().unwrap_or_default(),
        pod.name_any(),
        deleting(event, &pod.metadata)
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

/// What happened to a pod since its last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Updated,
    Deleted,
}

impl Change {
    fn word(self) -> &'static str {
        match self {
            Change::Added => "ADDED",
            Change::Updated => "UPDATED",
            Change::Deleted => "DELETED",
        }
    }

    /// What one line says when `later` comes before the line about `self` is written: an
    /// update of a pod not logged yet is still its addition; otherwise the latest change.
    fn then(self, later: Change) -> Change {
        match (self, later) {
            (Change::Added, Change::Updated) => Change::Added,
            _ => later,
        }
    }
}

/// For each queued key, the change to report and the pod in its latest state (shared with
/// the cache, or its final state once deleted). The queue holds the keys; this, what to say.
struct Pending<K>(Mutex<HashMap<ObjectKey, (Change, Arc<K>)>>);

impl<K> Pending<K> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectKey, (Change, Arc<K>)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Notes `change` of `pod`, and queues its key when it is not queued yet. The key waits
/// for a token of the queue's bucket (`add_rate_limited`; the per-key backoff is zero), so
/// lines come at the bucket's rate: one token a line, as changes to a key already queued
/// only update what its line will say.
fn note<K: Resource>(
    queue: &WorkQueue<ObjectKey>,
    pending: &Pending<K>,
    change: Change,
    pod: &Arc<K>,
) {
    let key = ObjectKey::of(pod.as_ref());
    let mut waiting = pending.lock();
    let queued = waiting.get(&key).map(|(was, _)| *was);
    let change = queued.map_or(change, |was| was.then(change));
    waiting.insert(key.clone(), (change, Arc::clone(pod)));
    drop(waiting);
    if queued.is_none() {
        queue.add_rate_limited(key);
    }
}

/// Logs the changes of the pods `informer` caches, a line each as `describe` writes it,
/// from a worker the manager runs once the informer has its first list.
fn log_changes<K>(
    manager: &mut Manager,
    informer: SharedInformer<K>,
    describe: fn(&str, &K) -> String,
    rate: u32,
    sink: impl Fn(String) + Send + 'static,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    // A zero per-key backoff: the bucket alone sets when each key is handed out.
    let pacing = Backoff {
        base: Duration::ZERO,
        max: Duration::ZERO,
        qps: f64::from(rate.max(1)),
        burst: 1,
    };
    let queue: WorkQueue<ObjectKey> = WorkQueue::new(pacing, Arc::new(NoMetrics));
    let pending = Arc::new(Pending::<K>(Mutex::default()));
    let (q1, q2, q3) = (queue.clone(), queue.clone(), queue.clone());
    let (p1, p2, p3) = (pending.clone(), pending.clone(), pending.clone());
    informer.add_event_handler(
        Handlers::new()
            .on_add(move |pod: &Arc<K>| note(&q1, &p1, Change::Added, pod))
            .on_update(move |_, pod: &Arc<K>| note(&q2, &p2, Change::Updated, pod))
            .on_delete(move |pod: &Arc<K>| note(&q3, &p3, Change::Deleted, pod)),
    );
    let synced = informer.synced();
    let stopping = manager.stopping();
    let work = {
        let (queue, stopping) = (queue.clone(), stopping.clone());
        async move {
            tokio::select! {
                () = stopping => return,
                _ = synced => {}
            }
            while let Some(key) = queue.get().await {
                let line = pending.lock().remove(&key);
                if let Some((change, pod)) = line {
                    sink(describe(change.word(), &pod));
                }
                // The key's count in the limiter goes, so it holds only keys still queued.
                queue.forget(&key);
                queue.done(&key);
            }
        }
    };
    let stop = async move {
        stopping.await;
        // The lines already due are written; the worker then ends.
        queue.shut_down();
    };
    manager.add_runnable("pod log", async move {
        futures::future::join(work, stop).await;
        Ok::<(), std::convert::Infallible>(())
    });
}

/// Watches pods until `shutdown` resolves, handing every line to `sink` in order.
///
/// # Errors
/// When the pods' cache does not have its first list within two minutes.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: BoxFuture<'static, ()>,
    sink: impl Fn(String) + Send + 'static,
) -> Result<(), String> {
    let mut builder = SharedInformerFactory::builder(client.clone());
    if let Some(ns) = &options.namespace {
        builder = builder.namespace(ns);
    }
    if let Some(period) = options.resync {
        builder = builder.default_resync(period);
    }
    let factory = builder.build();
    let mut manager = Manager::new(client, factory.clone(), ManagerOptions::default(), shutdown);
    let rate = options.rate;
    if options.metadata_only {
        let pods = factory.metadata_informer::<Pod>();
        log_changes(&mut manager, pods, describe_metadata, rate, sink);
    } else if options.encoded {
        let pods = factory.encoded_informer::<Pod>();
        log_changes(&mut manager, pods, describe_encoded, rate, sink);
    } else {
        let pods = factory.core().v1().pods().informer().clone();
        log_changes(&mut manager, pods, describe, rate, sink);
    }
    manager.run().await.map_err(|e| e.to_string())
}
