//! Rolling node reboots. An agent on every node reboots it when its Node carries
//! `reboot-now`; a controller moves nodes from `reboot-needed` to `reboot-now` while fewer
//! than `max_unavailable` nodes are unavailable. Both only read caches and write by patching.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams};
use kube::core::Selector;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{FieldManager, SharedInformerFactory};
use serde_json::json;

use crate::generated::{Clientset, InformerFactoryExt};

/// A node that needs a reboot (set by whoever decides: an admin, a kured-like check).
pub const REBOOT_NEEDED: &str = "reboot.example.com/reboot-needed";
/// A node whose agent should reboot it now (set by the controller).
pub const REBOOT_NOW: &str = "reboot.example.com/reboot-now";
/// A node being rebooted (set by its agent, cleared when it is back).
pub const REBOOT_IN_PROGRESS: &str = "reboot.example.com/reboot-in-progress";

fn has(node: &Node, annotation: &str) -> bool {
    node.annotations().contains_key(annotation)
}

fn ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Whether a node counts against `max_unavailable`: not Ready, or rebooting.
pub fn unavailable(node: &Node) -> bool {
    !ready(node) || has(node, REBOOT_NOW) || has(node, REBOOT_IN_PROGRESS)
}

fn annotate(changes: serde_json::Value) -> Patch<serde_json::Value> {
    Patch::Merge(json!({"metadata": {"annotations": changes}}))
}

/// How the agent reboots its node.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The Node this agent runs on (from the downward API).
    pub node: String,
    /// The reboot command; `None` is a dry run that only logs and comes back after `dry_run_back_after`.
    pub command: Option<Vec<String>>,
    /// How long a dry-run reboot takes.
    pub dry_run_back_after: Duration,
}

/// The agent: on start, a node still marked `reboot-in-progress` has come back, so the mark
/// goes; then every `reboot-now` on this node is taken (`reboot-now` -> `reboot-in-progress`)
/// and the reboot command runs. `on_reboot` is told each time.
pub async fn run_agent(
    client: Client,
    options: AgentOptions,
    shutdown: BoxFuture<'static, ()>,
    on_reboot: impl Fn(&str) + Send + 'static,
) -> Result<(), String> {
    let factory = SharedInformerFactory::builder(client.clone())
        .field_selector(&format!("metadata.name={}", options.node))
        .build();
    let informer = factory.core().v1().nodes();
    let mut changes = informer.informer().subscribe().boxed();
    factory.start();
    if !factory
        .wait_for_cache_sync(Duration::from_secs(60))
        .await
        .values()
        .all(|ok| *ok)
    {
        factory.shutdown().await;
        return Err(format!("the cache of node {} did not sync", options.node));
    }
    let nodes = Clientset::new(client, FieldManager::new("node-reboot-agent"))
        .core_v1()
        .nodes();
    let lister = informer.lister();
    let back = |name: &str| {
        let nodes = nodes.clone();
        let name = name.to_owned();
        async move {
            nodes
                .patch(
                    &name,
                    &PatchParams::default(),
                    &annotate(json!({REBOOT_IN_PROGRESS: null})),
                )
                .await
        }
    };
    if lister
        .get(&options.node)
        .is_ok_and(|n| has(&n, REBOOT_IN_PROGRESS))
    {
        eprintln!("node {} is back from its reboot", options.node);
        back(&options.node).await.map_err(|e| e.to_string())?;
    }
    let mut shutdown = shutdown;
    loop {
        let node: Arc<Node> = tokio::select! {
            () = &mut shutdown => break,
            n = changes.next() => match n { Some(n) => n, None => break },
        };
        if !has(&node, REBOOT_NOW) || has(&node, REBOOT_IN_PROGRESS) {
            continue;
        }
        let name = node.name_any();
        nodes
            .patch(
                &name,
                &PatchParams::default(),
                &annotate(json!({REBOOT_NOW: null, REBOOT_IN_PROGRESS: "true"})),
            )
            .await
            .map_err(|e| e.to_string())?;
        on_reboot(&name);
        match &options.command {
            Some(cmd) if !cmd.is_empty() => {
                eprintln!("node {name}: running {cmd:?}");
                let status = tokio::process::Command::new(&cmd[0])
                    .args(&cmd[1..])
                    .status()
                    .await;
                // A real reboot ends this process; the next start clears `reboot-in-progress`.
                eprintln!("node {name}: reboot command ended: {status:?}");
            }
            _ => {
                eprintln!("node {name}: dry run, not rebooting (pass --reboot-command to reboot)");
                tokio::time::sleep(options.dry_run_back_after).await;
                back(&name).await.map_err(|e| e.to_string())?;
            }
        }
    }
    factory.shutdown().await;
    Ok(())
}

/// Runs the controller until `shutdown`: whenever a Node changes, nodes that need a reboot
/// move to `reboot-now`, sorted by name, while fewer than `max_unavailable` are unavailable.
pub async fn run_controller(
    client: Client,
    max_unavailable: usize,
    shutdown: BoxFuture<'static, ()>,
) -> Result<(), String> {
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.core().v1().nodes();
    let mut changes = informer.informer().subscribe().boxed();
    factory.start();
    if !factory
        .wait_for_cache_sync(Duration::from_secs(60))
        .await
        .values()
        .all(|ok| *ok)
    {
        factory.shutdown().await;
        return Err("the node cache did not sync".into());
    }
    let lister = informer.lister();
    let nodes = Clientset::new(client, FieldManager::new("node-reboot-controller"))
        .core_v1()
        .nodes();
    // Nodes moved to `reboot-now` whose change the cache has not shown yet ("expectations"):
    // they count as unavailable, so a burst of events cannot overshoot `max_unavailable`.
    let mut moved: BTreeSet<String> = BTreeSet::new();
    let mut shutdown = shutdown;
    loop {
        let all = lister.list(&Selector::default());
        moved.retain(|name| {
            all.iter()
                .any(|n| n.name_any() == *name && has(n, REBOOT_NEEDED) && !has(n, REBOOT_NOW))
        });
        let mut down = all
            .iter()
            .filter(|n| unavailable(n) || moved.contains(&n.name_any()))
            .count();
        let candidates: Vec<&Arc<Node>> = all
            .iter()
            .filter(|n| has(n, REBOOT_NEEDED) && !unavailable(n) && !moved.contains(&n.name_any()))
            .collect();
        for node in candidates {
            if down >= max_unavailable {
                break;
            }
            let name = node.name_any();
            let patch = annotate(json!({REBOOT_NEEDED: null, REBOOT_NOW: "true"}));
            match nodes.patch(&name, &PatchParams::default(), &patch).await {
                Ok(_) => {
                    eprintln!(
                        "node {name}: reboot now ({} of at most {max_unavailable} unavailable)",
                        down + 1
                    );
                    moved.insert(name);
                    down += 1;
                }
                Err(e) => eprintln!("node {name}: could not mark for reboot: {e}"),
            }
        }
        tokio::select! {
            () = &mut shutdown => break,
            n = changes.next() => if n.is_none() { break },
        }
        // Debounce a burst of node events into one pass.
        tokio::time::sleep(Duration::from_millis(20)).await;
        while futures::FutureExt::now_or_never(changes.next())
            .flatten()
            .is_some()
        {}
    }
    factory.shutdown().await;
    Ok(())
}
