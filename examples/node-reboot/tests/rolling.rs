//! Rolling reboots: never more than max-unavailable, all done, and an agent restarted
//! mid-reboot recovers; a refused patch is retried with the runtime's backoff without
//! holding up the next node; a replica acts only while it holds the lease.
//!
//! Through `TestEnv`: on the in-memory API server (default), on etcd and kube-apiserver from
//! `KUBEBUILDER_ASSETS`, or on the cluster of `KUBE_TEST_KUBECONFIG`, unchanged. Each test's
//! Nodes are its own: named after its environment's namespace and labelled with it, and the
//! controller's `node_selector` picks only them, so tests sharing a server never spend each
//! other's budget. The checks of the fake's write log and faults run on the fake only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::{ApiError, Matcher, TestEnv};
use futures::FutureExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DeleteParams, ListParams, Patch, PostParams};
use kube_codegen_runtime::leader::LeaderElection;
use node_reboot::{AgentOptions, ControllerOptions, REBOOT_IN_PROGRESS, REBOOT_NEEDED, REBOOT_NOW};
use serde_json::{Value, json};

/// The label that ties a Node to one test's environment.
const RUN: &str = "node-reboot.example.com/test-run";

/// One test's environment and Nodes.
struct Nodes {
    env: TestEnv,
    api: Api<Node>,
}

impl Nodes {
    async fn new() -> Self {
        let env = TestEnv::start().await.unwrap();
        let api = Api::all(env.client());
        Nodes { env, api }
    }

    /// This test's name for node `n`.
    fn name(&self, n: &str) -> String {
        format!("{}-{n}", self.env.namespace())
    }

    fn selector(&self) -> String {
        format!("{RUN}={}", self.env.namespace())
    }

    /// Creates node `n` with `annotations`, Ready or not.
    async fn create(&self, n: &str, annotations: Value, ready: bool) -> String {
        let name = self.name(n);
        let node: Node = serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {RUN: self.env.namespace()}, "annotations": annotations}}))
        .unwrap();
        self.api
            .create(&PostParams::default(), &node)
            .await
            .unwrap();
        let status = if ready { "True" } else { "False" };
        self.api
            .patch_status(
                &name,
                &Default::default(),
                &Patch::Merge(
                    json!({"status": {"conditions": [{"type": "Ready", "status": status}]}}),
                ),
            )
            .await
            .unwrap();
        name
    }

    async fn annotated(&self, name: &str, key: &str) -> bool {
        self.api
            .get(name)
            .await
            .unwrap()
            .metadata
            .annotations
            .is_some_and(|a| a.contains_key(key))
    }

    async fn list(&self) -> Vec<Node> {
        self.api
            .list(&ListParams::default().labels(&self.selector()))
            .await
            .unwrap()
            .items
    }

    fn budget(&self, max_unavailable: usize) -> ControllerOptions {
        ControllerOptions {
            max_unavailable,
            leader_election: None,
            node_selector: self.selector(),
        }
    }

    async fn cleanup(self) {
        for node in self.list().await {
            let name = node.metadata.name.unwrap_or_default();
            let _ = self.api.delete(&name, &DeleteParams::default()).await;
        }
        self.env.cleanup().await.unwrap();
    }
}

fn rebooting(n: &Node) -> bool {
    n.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(REBOOT_NOW) || a.contains_key(REBOOT_IN_PROGRESS))
}

/// Waits (up to 10 s) for `check`.
async fn until(what: &str, check: impl AsyncFn() -> bool) {
    for _ in 0..400 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what}: not within 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_nodes_reboot_two_at_a_time_at_most() {
    let nodes = Nodes::new().await;
    let mut names = Vec::new();
    for i in 1..=5 {
        names.push(
            nodes
                .create(&format!("node-{i}"), json!({REBOOT_NEEDED: "true"}), true)
                .await,
        );
    }
    let client = nodes.env.client();
    let (stop, _) = tokio::sync::broadcast::channel::<()>(1);
    let reboots = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for name in &names {
        let options = AgentOptions {
            node: name.clone(),
            command: None,
            dry_run_back_after: Duration::from_millis(150),
        };
        let mut rx = stop.subscribe();
        let reboots = reboots.clone();
        tasks.push(tokio::spawn(node_reboot::run_agent(
            client.clone(),
            options,
            async move {
                let _ = rx.recv().await;
            }
            .boxed(),
            move |n| reboots.lock().unwrap().push(n.to_owned()),
        )));
    }
    let mut rx = stop.subscribe();
    tasks.push(tokio::spawn(node_reboot::run_controller(
        client,
        nodes.budget(2),
        async move {
            let _ = rx.recv().await;
        }
        .boxed(),
    )));

    // Sample the state often: every read is a list of this test's Nodes.
    let mut max_down = 0;
    for _ in 0..1200 {
        let listed = nodes.list().await;
        max_down = max_down.max(listed.iter().filter(|n| rebooting(n)).count());
        let done = listed
            .iter()
            .all(|n| n.metadata.annotations.as_ref().is_none_or(|a| a.is_empty()));
        if done && reboots.lock().unwrap().len() == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = stop.send(());
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let mut rebooted = reboots.lock().unwrap().clone();
    rebooted.sort();
    assert_eq!(rebooted, names, "every node rebooted exactly once");
    assert!(max_down <= 2, "{max_down} nodes were unavailable at once");
    assert_eq!(max_down, 2, "the controller used its budget");
    if let Some(fake) = nodes.env.fake() {
        // Every write of the controller and agents was a patch (the cache is never written
        // back); the test's own were a create and a status patch per node.
        let writes = fake.writes();
        let nodes_written: Vec<_> = writes.iter().filter(|a| a.resource == "nodes").collect();
        assert!(
            nodes_written
                .iter()
                .all(|a| a.verb == "patch" || a.verb == "create"),
            "{nodes_written:?}"
        );
    }
    nodes.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_restarted_mid_reboot_clears_the_mark() {
    let nodes = Nodes::new().await;
    let name = nodes
        .create("node-1", json!({REBOOT_IN_PROGRESS: "true"}), true)
        .await;
    let reboots = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = reboots.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = AgentOptions {
        node: name.clone(),
        command: None,
        dry_run_back_after: Duration::from_millis(50),
    };
    let task = tokio::spawn(node_reboot::run_agent(
        nodes.env.client(),
        options,
        async {
            let _ = stopped.await;
        }
        .boxed(),
        move |n| seen.lock().unwrap().push(n.to_owned()),
    ));
    until("the mark cleared", async || {
        !nodes.annotated(&name, REBOOT_IN_PROGRESS).await
    })
    .await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    assert!(!nodes.annotated(&name, REBOOT_IN_PROGRESS).await);
    assert!(
        reboots.lock().unwrap().is_empty(),
        "coming back is not another reboot"
    );
    nodes.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_that_are_not_ready_use_the_budget() {
    let nodes = Nodes::new().await;
    nodes.create("broken", json!({}), false).await;
    let waiting = nodes
        .create("waiting", json!({REBOOT_NEEDED: "true"}), true)
        .await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        nodes.env.client(),
        nodes.budget(1),
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    assert!(
        !nodes.annotated(&waiting, REBOOT_NOW).await,
        "one node is down already"
    );
    nodes.cleanup().await;
}

/// Fake only: it programs the fake's faults.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_patch_is_retried_and_does_not_hold_up_the_next_node() {
    let nodes = Nodes::new().await;
    let Some(fake) = nodes.env.fake().cloned() else {
        eprintln!("fake only (faults): skipped on a real server");
        return nodes.cleanup().await;
    };
    let one = nodes
        .create("node-1", json!({REBOOT_NEEDED: "true"}), true)
        .await;
    let two = nodes
        .create("node-2", json!({REBOOT_NEEDED: "true"}), true)
        .await;
    let mut refused = Matcher::new("patch", "nodes");
    refused.name = Some(one.clone());
    fake.fail(
        refused,
        ApiError::internal("etcd is having a bad day"),
        None,
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        nodes.env.client(),
        nodes.budget(2),
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    until("node-2 marked while node-1 is refused", async || {
        nodes.annotated(&two, REBOOT_NOW).await
    })
    .await;
    assert!(!nodes.annotated(&one, REBOOT_NOW).await);
    let tries = || {
        fake.actions()
            .iter()
            .filter(|a| a.verb == "patch" && a.name.as_deref() == Some(one.as_str()))
            .count()
    };
    until("node-1 tried again", async || tries() >= 3).await;
    fake.clear_faults();
    until("node-1 marked once the patch goes through", async || {
        nodes.annotated(&one, REBOOT_NOW).await
    })
    .await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    nodes.cleanup().await;
}

/// A short lease (2 s, renewed within 1 s, tried every 200 ms) named `lease` in
/// `namespace`, as `identity`.
fn election(lease: &str, namespace: &str, identity: &str) -> LeaderElection {
    LeaderElection::new(lease, namespace, identity)
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_secs(1))
        .retry_period(Duration::from_millis(200))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_acts_only_while_it_holds_the_lease() {
    let nodes = Nodes::new().await;
    let name = nodes
        .create("node-1", json!({REBOOT_NEEDED: "true"}), true)
        .await;
    let ns = nodes.env.namespace().to_owned();
    let lease_name = "node-reboot-controller";
    // Another replica leads.
    let leases: Api<Lease> = Api::namespaced(nodes.env.client(), &ns);
    let held: Lease = serde_json::from_value(json!({"metadata": {"name": lease_name},
        "spec": {"holderIdentity": "replica-a", "leaseDurationSeconds": 60}}))
    .unwrap();
    leases.create(&PostParams::default(), &held).await.unwrap();
    let options = ControllerOptions {
        leader_election: Some(election(lease_name, &ns, "replica-b")),
        ..nodes.budget(1)
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        nodes.env.client(),
        options,
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        !nodes.annotated(&name, REBOOT_NOW).await,
        "standing by, it does not act"
    );

    // replica-a goes away and its lease with it: replica-b takes the lease and acts.
    leases
        .delete(lease_name, &Default::default())
        .await
        .unwrap();
    until("node-1 marked by the new leader", async || {
        nodes.annotated(&name, REBOOT_NOW).await
    })
    .await;
    let holder = leases.get(lease_name).await.unwrap();
    assert_eq!(
        holder.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("replica-b")
    );
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    // Released at shutdown, for the next replica.
    let released = leases.get(lease_name).await.unwrap();
    assert_eq!(
        released.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("")
    );
    nodes.cleanup().await;
}
