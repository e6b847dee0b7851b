//! The pod watcher: every Pod add, update and delete, logged with namespace/name, phase and
//! node, through the shared informer and a rate-limited queue.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{Handlers, SharedInformerFactory};
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
}

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: None,
            resync: None,
            rate: 100,
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
    let pods = factory.core().v1().pods();
    // Handlers only queue; the worker below logs at the queue's rate.
    let (queue, mut work) = mpsc::unbounded_channel::<String>();
    let (a, u, d) = (queue.clone(), queue.clone(), queue);
    pods.informer().add_event_handler(
        Handlers::new()
            .on_add(move |p: &Arc<Pod>| {
                let _ = a.send(describe("ADDED", p));
            })
            .on_update(move |_, p: &Arc<Pod>| {
                let _ = u.send(describe("UPDATED", p));
            })
            .on_delete(move |p: &Arc<Pod>| {
                let _ = d.send(describe("DELETED", p));
            }),
    );
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
