//! Rolling node reboots. An agent on every node reboots it when its Node carries
//! `reboot-now`; a controller moves nodes from `reboot-needed` to `reboot-now` while fewer
//! than `max_unavailable` nodes are unavailable. Both are controllers of Nodes on the
//! runtime, under its manager: they only read caches, write by patching, and a failed patch
//! is retried with the runtime's backoff. The controller holds a leader lease when asked.

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Patch, PatchParams};
use kube::core::Selector;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::controller::{Action, Controller, ObjectKey, is_not_found};
use kube_codegen_runtime::leader::LeaderElection;
use kube_codegen_runtime::manager::{Manager, ManagerOptions};
use kube_codegen_runtime::{FieldManager, SharedInformerFactory};
use serde_json::json;

use crate::generated::core::v1::{NodeClient, NodeLister};
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

/// A patch of a Node's annotations that the API server refused; the reconcile that made it
/// is retried with the runtime's backoff.
#[derive(Debug)]
pub struct PatchError {
    node: String,
    what: &'static str,
    source: kube::Error,
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {}: cannot {}: {}",
            self.node, self.what, self.source
        )
    }
}

impl std::error::Error for PatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Merge-patches `node`'s annotations with `changes` (`null` removes one); `what` says
/// what for, in the error.
async fn annotate(
    nodes: &NodeClient,
    node: &str,
    changes: serde_json::Value,
    what: &'static str,
) -> Result<(), PatchError> {
    let patch = Patch::Merge(json!({"metadata": {"annotations": changes}}));
    match nodes.patch(node, &PatchParams::default(), &patch).await {
        Ok(_) => Ok(()),
        Err(source) => Err(PatchError {
            node: node.to_owned(),
            what,
            source,
        }),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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

/// Where the agent's own reboot stands.
#[derive(Debug, Clone, Copy)]
enum Rebooting {
    /// None since this agent started: a `reboot-in-progress` mark is from before, so the
    /// node is back.
    NotYet,
    /// The reboot command ran; a real reboot ends this process, and the next one clears
    /// the mark.
    Command,
    /// A dry run, back at this instant.
    DryRun(Instant),
    /// The last dry run is back and its mark cleared: a mark the cache still shows is that
    /// one, not a new reboot.
    Back,
}

/// What the agent's reconciles share.
struct Agent {
    options: AgentOptions,
    nodes: NodeClient,
    rebooting: Mutex<Rebooting>,
    on_reboot: Box<dyn Fn(&str) + Send + Sync>,
}

/// The agent's reconcile of its own Node (see [`run_agent`]). A dry run is a requeue: the
/// worker is free meanwhile, and the mark is cleared when the requeue comes.
async fn reconcile_agent(node: Arc<Node>, agent: Arc<Agent>) -> Result<Action, PatchError> {
    let name = node.name_any();
    let state = *lock(&agent.rebooting);
    if has(&node, REBOOT_IN_PROGRESS) {
        let back_in = match state {
            Rebooting::NotYet => Duration::ZERO,
            Rebooting::DryRun(at) => at.saturating_duration_since(Instant::now()),
            Rebooting::Command | Rebooting::Back => return Ok(Action::Done),
        };
        if !back_in.is_zero() {
            return Ok(Action::RequeueAfter(back_in));
        }
        let clear = json!({REBOOT_IN_PROGRESS: null});
        annotate(&agent.nodes, &name, clear, "clear reboot-in-progress").await?;
        eprintln!("node {name} is back from its reboot");
        *lock(&agent.rebooting) = Rebooting::Back;
        return Ok(Action::Done);
    }
    if !has(&node, REBOOT_NOW) {
        return Ok(Action::Done);
    }
    // Taken only from the version the cache shows: a cache that has not seen this agent's
    // own last take yet (another writer's change queued the node again in between) gets a
    // 409, not a second reboot; the next event brings the current node.
    let take = json!({"metadata": {
        "resourceVersion": node.resource_version(),
        "annotations": {REBOOT_NOW: null, REBOOT_IN_PROGRESS: "true"},
    }});
    match agent
        .nodes
        .patch(&name, &PatchParams::default(), &Patch::Merge(take))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => return Ok(Action::Done),
        Err(source) => {
            return Err(PatchError {
                node: name,
                what: "take the reboot",
                source,
            });
        }
    }
    (agent.on_reboot)(&name);
    match &agent.options.command {
        Some(cmd) if !cmd.is_empty() => {
            *lock(&agent.rebooting) = Rebooting::Command;
            eprintln!("node {name}: running {cmd:?}");
            let status = tokio::process::Command::new(&cmd[0])
                .args(&cmd[1..])
                .status()
                .await;
            // A real reboot ends this process; the next start clears `reboot-in-progress`.
            eprintln!("node {name}: reboot command ended: {status:?}");
            Ok(Action::Done)
        }
        _ => {
            eprintln!("node {name}: dry run, not rebooting (pass --reboot-command to reboot)");
            let back_in = agent.options.dry_run_back_after;
            *lock(&agent.rebooting) = Rebooting::DryRun(Instant::now() + back_in);
            Ok(Action::RequeueAfter(back_in))
        }
    }
}

/// The agent, until `shutdown`: a controller of the one Node `options.node` names. A
/// `reboot-in-progress` mark from before it started is cleared (the node is back); a
/// `reboot-now` is taken (`reboot-now` -> `reboot-in-progress`) and the reboot command
/// runs, or a dry run comes back after `dry_run_back_after`. `on_reboot` is told each reboot.
///
/// # Errors
/// When the node's cache does not have its first list within two minutes.
pub async fn run_agent(
    client: Client,
    options: AgentOptions,
    shutdown: BoxFuture<'static, ()>,
    on_reboot: impl Fn(&str) + Send + Sync + 'static,
) -> Result<(), String> {
    let factory = SharedInformerFactory::builder(client.clone())
        .field_selector(&format!("metadata.name={}", options.node))
        .build();
    let informer = factory.core().v1().nodes();
    let agent = Arc::new(Agent {
        nodes: Clientset::new(client.clone(), FieldManager::new("node-reboot-agent"))
            .core_v1()
            .nodes(),
        options,
        rebooting: Mutex::new(Rebooting::NotYet),
        on_reboot: Box::new(on_reboot),
    });
    let mut manager = Manager::new(client, factory, ManagerOptions::default(), shutdown);
    let controller = Controller::new("node-reboot-agent", informer.informer().clone());
    manager.add(controller, reconcile_agent, agent);
    manager.run().await.map_err(|e| e.to_string())
}

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// At most this many nodes unavailable (not Ready, or rebooting) at once.
    pub max_unavailable: usize,
    /// Hold this lease while acting, so one replica acts at a time (`None`: act at once).
    /// A standby's cache stays warm; a replica that loses the lease stops with an error.
    pub leader_election: Option<LeaderElection>,
    /// Only the nodes this label selector picks (`pool=gpu`; empty: every node): one pool
    /// rebooted at a time, with a budget of its own.
    pub node_selector: String,
}

/// What the controller's reconciles share.
struct Rollout {
    max_unavailable: usize,
    nodes: NodeLister,
    client: NodeClient,
    /// Nodes moved to `reboot-now` whose change the cache has not shown yet
    /// ("expectations"): they count as unavailable, so a pass that comes before the cache
    /// catches up cannot overshoot `max_unavailable`.
    moved: Mutex<BTreeSet<String>>,
}

/// The controller's reconcile: a pass over every node, level-triggered from the cache,
/// whichever node's key queued it. Ready nodes that need a reboot move to `reboot-now`, by
/// name, while fewer than `max_unavailable` nodes are unavailable. One worker runs the
/// passes one at a time, so the budget is never spent twice. A node whose patch fails
/// does not hold up the next one; the pass is then retried with the runtime's backoff.
async fn reconcile_rollout(
    _queued: Arc<Node>,
    rollout: Arc<Rollout>,
) -> Result<Action, PatchError> {
    let all = rollout.nodes.list(&Selector::default());
    let (mut down, candidates) = {
        let mut moved = lock(&rollout.moved);
        moved.retain(|m| {
            all.iter()
                .any(|n| n.name_any() == *m && has(n, REBOOT_NEEDED) && !has(n, REBOOT_NOW))
        });
        let down = all
            .iter()
            .filter(|n| unavailable(n) || moved.contains(&n.name_any()))
            .count();
        let candidates: Vec<String> = all
            .iter()
            .filter(|n| has(n, REBOOT_NEEDED) && !unavailable(n))
            .map(|n| n.name_any())
            .filter(|name| !moved.contains(name))
            .collect();
        (down, candidates)
    };
    let mut failed = None;
    for name in candidates {
        if down >= rollout.max_unavailable {
            break;
        }
        let reboot = json!({REBOOT_NEEDED: null, REBOOT_NOW: "true"});
        match annotate(&rollout.client, &name, reboot, "mark it for reboot").await {
            Ok(()) => {
                lock(&rollout.moved).insert(name.clone());
                down += 1;
                eprintln!(
                    "node {name}: reboot now ({down} of at most {} unavailable)",
                    rollout.max_unavailable
                );
            }
            // Deleted since the cache showed it: nothing to reboot.
            Err(e) if is_not_found(&e) => {}
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    failed.map_or(Ok(Action::Done), Err)
}

/// The first node waiting for a reboot, by name: what any node's change queues, since a
/// node coming back (or going down, or going away) changes the budget.
fn first_waiting(nodes: &NodeLister) -> Vec<ObjectKey> {
    nodes
        .list(&Selector::default())
        .iter()
        .find(|n| has(n, REBOOT_NEEDED) && !unavailable(n))
        .map(|n| ObjectKey::of(n.as_ref()))
        .into_iter()
        .collect()
}

/// Runs the controller until `shutdown` (or, with leader election, until the lease is
/// lost): a controller of Nodes whose reconcile is a pass over every node, from the cache.
/// Ready nodes that need a reboot move to `reboot-now`, by name, while fewer than
/// `max_unavailable` are unavailable; nodes it has just moved count until the cache shows
/// the change.
///
/// # Errors
/// When the node cache does not have its first list within two minutes, or the lease was
/// lost.
pub async fn run_controller(
    client: Client,
    options: ControllerOptions,
    shutdown: BoxFuture<'static, ()>,
) -> Result<(), String> {
    let mut factory = SharedInformerFactory::builder(client.clone());
    if !options.node_selector.is_empty() {
        factory = factory.label_selector(&options.node_selector);
    }
    let factory = factory.build();
    let nodes = factory.core().v1().nodes();
    let rollout = Arc::new(Rollout {
        max_unavailable: options.max_unavailable,
        nodes: nodes.lister(),
        client: Clientset::new(client.clone(), FieldManager::new("node-reboot-controller"))
            .core_v1()
            .nodes(),
        moved: Mutex::default(),
    });
    let manager_options = ManagerOptions {
        leader_election: options.leader_election,
        ..ManagerOptions::default()
    };
    let mut manager = Manager::new(client, factory, manager_options, shutdown);
    let lister = nodes.lister();
    // A node's change queues its own key and the first waiting node's: a pass either way.
    let controller = Controller::new("node-reboot", nodes.informer().clone())
        .watches(nodes.informer().clone(), move |_: &Node| {
            first_waiting(&lister)
        });
    manager.add(controller, reconcile_rollout, rollout);
    manager.run().await.map_err(|e| e.to_string())
}
