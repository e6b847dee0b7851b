//! Rolling reboots on the fake API server: never more than max-unavailable, all done, and an
//! agent restarted mid-reboot recovers; a refused patch is retried with the runtime's
//! backoff without holding up the next node; a replica acts only while it holds the lease.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::{ApiError, FakeApiServer, Matcher};
use futures::FutureExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::Api;
use kube_codegen_runtime::leader::LeaderElection;
use node_reboot::{AgentOptions, ControllerOptions, REBOOT_IN_PROGRESS, REBOOT_NEEDED, REBOOT_NOW};
use serde_json::{Value, json};

fn node(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
}

fn budget(max_unavailable: usize) -> ControllerOptions {
    ControllerOptions {
        max_unavailable,
        leader_election: None,
    }
}

fn rebooting(n: &Value) -> bool {
    let a = &n["metadata"]["annotations"];
    a.get(REBOOT_NOW).is_some() || a.get(REBOOT_IN_PROGRESS).is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_nodes_reboot_two_at_a_time_at_most() {
    let fake = FakeApiServer::new();
    let names: Vec<String> = (1..=5).map(|i| format!("node-{i}")).collect();
    for name in &names {
        fake.seed(node(name, json!({REBOOT_NEEDED: "true"})))
            .unwrap();
    }
    let client = Client::new(fake.clone(), "default");
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
        budget(2),
        async move {
            let _ = rx.recv().await;
        }
        .boxed(),
    )));

    // Sample the cluster's state often; the fake is in process, so every write is observable.
    let mut max_down = 0;
    for _ in 0..600 {
        let nodes = fake.list("v1", "Node", None);
        max_down = max_down.max(nodes.iter().filter(|n| rebooting(n)).count());
        let done = nodes.iter().all(|n| {
            n["metadata"]["annotations"]
                .as_object()
                .is_none_or(|a| a.is_empty())
        });
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
    // Every write was a patch (the cache is never written back).
    assert!(
        fake.writes()
            .iter()
            .filter(|a| a.resource == "nodes")
            .all(|a| a.verb == "patch")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_restarted_mid_reboot_clears_the_mark() {
    let fake = FakeApiServer::new();
    fake.seed(node("node-1", json!({REBOOT_IN_PROGRESS: "true"})))
        .unwrap();
    let reboots = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = reboots.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = AgentOptions {
        node: "node-1".into(),
        command: None,
        dry_run_back_after: Duration::from_millis(50),
    };
    let task = tokio::spawn(node_reboot::run_agent(
        Client::new(fake.clone(), "default"),
        options,
        async {
            let _ = stopped.await;
        }
        .boxed(),
        move |n| seen.lock().unwrap().push(n.to_owned()),
    ));
    for _ in 0..200 {
        if fake.get("v1", "Node", None, "node-1").unwrap()["metadata"]["annotations"]
            .get(REBOOT_IN_PROGRESS)
            .is_none()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    assert!(
        fake.get("v1", "Node", None, "node-1").unwrap()["metadata"]["annotations"]
            .get(REBOOT_IN_PROGRESS)
            .is_none()
    );
    assert!(
        reboots.lock().unwrap().is_empty(),
        "coming back is not another reboot"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_that_are_not_ready_use_the_budget() {
    let fake = FakeApiServer::new();
    fake.seed(
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "broken"},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    )
    .unwrap();
    fake.seed(node("waiting", json!({REBOOT_NEEDED: "true"})))
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        Client::new(fake.clone(), "default"),
        budget(1),
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    let waiting = fake.get("v1", "Node", None, "waiting").unwrap();
    assert!(
        waiting["metadata"]["annotations"].get(REBOOT_NOW).is_none(),
        "one node is down already: {waiting}"
    );
}

fn marked_now(fake: &FakeApiServer, name: &str) -> bool {
    fake.get("v1", "Node", None, name).unwrap()["metadata"]["annotations"]
        .get(REBOOT_NOW)
        .is_some()
}

/// Waits (up to 5 s) for `check`.
async fn until(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what}: not within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_patch_is_retried_and_does_not_hold_up_the_next_node() {
    let fake = FakeApiServer::new();
    for name in ["node-1", "node-2"] {
        fake.seed(node(name, json!({REBOOT_NEEDED: "true"})))
            .unwrap();
    }
    let mut refused = Matcher::new("patch", "nodes");
    refused.name = Some("node-1".into());
    fake.fail(
        refused,
        ApiError::internal("etcd is having a bad day"),
        None,
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        Client::new(fake.clone(), "default"),
        budget(2),
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    until("node-2 marked while node-1 is refused", || {
        marked_now(&fake, "node-2")
    })
    .await;
    assert!(!marked_now(&fake, "node-1"));
    let tries = || {
        fake.actions()
            .iter()
            .filter(|a| a.verb == "patch" && a.name.as_deref() == Some("node-1"))
            .count()
    };
    until("node-1 tried again", || tries() >= 3).await;
    fake.clear_faults();
    until("node-1 marked once the patch goes through", || {
        marked_now(&fake, "node-1")
    })
    .await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

/// A short lease (2 s, renewed within 1 s, tried every 200 ms) as `identity`.
fn election(identity: &str) -> LeaderElection {
    LeaderElection::new("node-reboot-controller", "kube-system", identity)
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_secs(1))
        .retry_period(Duration::from_millis(200))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_acts_only_while_it_holds_the_lease() {
    let fake = FakeApiServer::new();
    fake.seed(node("node-1", json!({REBOOT_NEEDED: "true"})))
        .unwrap();
    // Another replica leads.
    fake.seed(
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "node-reboot-controller", "namespace": "kube-system"},
        "spec": {"holderIdentity": "replica-a", "leaseDurationSeconds": 60}}),
    )
    .unwrap();
    let client = Client::new(fake.clone(), "default");
    let options = ControllerOptions {
        max_unavailable: 1,
        leader_election: Some(election("replica-b")),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(node_reboot::run_controller(
        client.clone(),
        options,
        async {
            let _ = stopped.await;
        }
        .boxed(),
    ));
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!marked_now(&fake, "node-1"), "standing by, it does not act");

    // replica-a goes away and its lease with it: replica-b takes the lease and acts.
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    leases
        .delete("node-reboot-controller", &Default::default())
        .await
        .unwrap();
    until("node-1 marked by the new leader", || {
        marked_now(&fake, "node-1")
    })
    .await;
    let holder = leases.get("node-reboot-controller").await.unwrap();
    assert_eq!(
        holder.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("replica-b")
    );
    let _ = stop.send(());
    task.await.unwrap().unwrap();
    // Released at shutdown, for the next replica.
    let released = leases.get("node-reboot-controller").await.unwrap();
    assert_eq!(
        released.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("")
    );
}
