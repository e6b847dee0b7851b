//! The runtime's manager and leader election on the fake API server: one replica leads and
//! the other stands by with a warm cache; a released lease is taken at the next attempt and
//! an abandoned one once it expires; a lease taken away stops the leader with an error; the
//! probes follow the caches; and a shutdown during the initial sync (an informer that never
//! syncs) ends the run at once.
//!
//! Times are generous bounds (seconds, not milliseconds) on short leases.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::controller::{Action, Controller};
use kube_codegen_runtime::leader::{Ended, LeaderElection};
use kube_codegen_runtime::manager::{Manager, ManagerError, ManagerOptions};
use kube_codegen_runtime::metrics::Metrics;
use support::wait_for;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A short lease: 2 s, renewed within 1 s, tried every 200 ms.
fn election(identity: &str) -> LeaderElection {
    LeaderElection::new("test-lease", "a", identity)
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_secs(1))
        .retry_period(Duration::from_millis(200))
}

fn stop_signal() -> (
    tokio::sync::oneshot::Sender<()>,
    impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    (tx, async move {
        let _ = rx.await;
    })
}

async fn holder(client: &Client) -> Option<String> {
    Api::<Lease>::namespaced(client.clone(), "a")
        .get_opt("test-lease")
        .await
        .unwrap()
        .and_then(|l| l.spec?.holder_identity)
}

#[tokio::test]
async fn one_replica_leads_and_a_released_lease_passes_at_the_next_attempt() {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    let (m1, m2) = (Metrics::new(), Metrics::new());
    let (stop1, shutdown1) = stop_signal();
    let first = election("one").start(client.clone(), &m1, shutdown1);
    assert!(first.acquired().await);
    let (stop2, shutdown2) = stop_signal();
    let second = election("two").start(client.clone(), &m2, shutdown2);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        !*second.leading().borrow(),
        "the lease is held: two stands by"
    );
    assert_eq!(holder(&client).await.as_deref(), Some("one"));
    assert!(
        m1.encode()
            .contains("leader_election_master_status{name=\"test-lease\"} 1")
    );
    assert!(
        m2.encode()
            .contains("leader_election_master_status{name=\"test-lease\"} 0")
    );

    let released = Instant::now();
    let _ = stop1.send(());
    assert_eq!(first.stopped().await, Ended::Shutdown);
    assert!(second.acquired().await);
    assert!(
        released.elapsed() < Duration::from_millis(1500),
        "released: taken at the next attempt, before the 2 s lease would expire ({:?})",
        released.elapsed()
    );
    assert_eq!(holder(&client).await.as_deref(), Some("two"));
    let lease = Api::<Lease>::namespaced(client.clone(), "a")
        .get("test-lease")
        .await
        .unwrap();
    assert_eq!(lease.spec.unwrap().lease_transitions, Some(1));
    let _ = stop2.send(());
    assert_eq!(second.stopped().await, Ended::Shutdown);
}

#[tokio::test]
async fn an_abandoned_lease_is_taken_once_it_expires() {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    let metrics = Metrics::new();
    // A leader that dies without releasing (as after SIGKILL).
    let (stop1, shutdown1) = stop_signal();
    let first = election("one")
        .release_on_cancel(false)
        .start(client.clone(), &metrics, shutdown1);
    assert!(first.acquired().await);
    let (stop2, shutdown2) = stop_signal();
    let second = election("two").start(client.clone(), &metrics, shutdown2);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let died = Instant::now();
    let _ = stop1.send(());
    first.stopped().await;
    assert!(second.acquired().await);
    let waited = died.elapsed();
    assert!(
        waited >= Duration::from_millis(1500) && waited < Duration::from_secs(5),
        "taken after the 2 s lease expired, by two's clock ({waited:?})"
    );
    let _ = stop2.send(());
    second.stopped().await;
}

#[tokio::test]
async fn a_leader_whose_lease_is_taken_stops_with_an_error() {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("a")
        .build();
    let options = ManagerOptions {
        leader_election: Some(election("one")),
        ..ManagerOptions::default()
    };
    let (_stop, shutdown) = stop_signal();
    let manager = Manager::new(client.clone(), factory.clone(), options, shutdown);
    let mut leading = manager.leading();
    let run = tokio::spawn(manager.run());
    leading.wait_for(|l| *l).await.unwrap();
    // Someone else writes themselves in as the holder: one cannot renew.
    let api = Api::<Lease>::namespaced(client.clone(), "a");
    let mut lease = api.get("test-lease").await.unwrap();
    let spec = lease.spec.as_mut().unwrap();
    spec.holder_identity = Some("intruder".into());
    spec.lease_duration_seconds = Some(60);
    api.replace("test-lease", &PostParams::default(), &lease)
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the manager stops")
        .unwrap();
    assert!(matches!(ended, Err(ManagerError::LeaseLost)), "{ended:?}");
    assert_eq!(holder(&client).await.as_deref(), Some("intruder"));
}

async fn get(port: u16, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn a_shutdown_during_the_initial_sync_ends_the_run_at_once() {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("a")
        .build();
    // A kind the server does not serve: its informer never syncs.
    let missing = kube::api::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Missing".into(),
        plural: "missings".into(),
    };
    let _never = factory.dynamic(missing, true);
    let options = ManagerOptions {
        health_addr: Some(([127, 0, 0, 1], 0).into()),
        ..ManagerOptions::default()
    };
    let (stop, shutdown) = stop_signal();
    let mut manager = Manager::new(client, factory, options, shutdown);
    let port = manager.bind().await.unwrap()[0].port();
    let run = tokio::spawn(manager.run());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let readyz = get(port, "/readyz").await;
    assert!(readyz.starts_with("HTTP/1.1 503"), "{readyz}");
    let healthz = get(port, "/healthz").await;
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
    let stopping = Instant::now();
    let _ = stop.send(());
    let ended = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("stopped within 5 s of the signal")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert!(stopping.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_standby_manager_reconciles_from_its_warm_cache_once_it_leads() {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    let seen: Arc<std::sync::Mutex<Vec<(String, String)>>> = Arc::default();
    let start = |identity: &'static str| {
        let factory = SharedInformerFactory::builder(client.clone())
            .namespace("a")
            .build();
        let options = ManagerOptions {
            leader_election: Some(election(identity).release_on_cancel(false)),
            health_addr: Some(([127, 0, 0, 1], 0).into()),
            ..ManagerOptions::default()
        };
        let (stop, shutdown) = stop_signal();
        let mut manager = Manager::new(client.clone(), factory.clone(), options, shutdown);
        let seen = Arc::clone(&seen);
        manager.add(
            Controller::new("configmaps", factory.informer::<ConfigMap>()),
            move |cm: Arc<ConfigMap>, _ctx: Arc<()>| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock()
                        .unwrap()
                        .push((identity.to_owned(), cm.name_any()));
                    Ok::<_, kube::Error>(Action::Done)
                }
            },
            Arc::new(()),
        );
        let ready = manager.ready();
        (stop, tokio::spawn(manager.run()), ready)
    };
    let (stop1, run1, _) = start("one");
    wait_for("one leads", || {
        fake.list("coordination.k8s.io/v1", "Lease", Some("a"))
            .len()
            == 1
    })
    .await;
    let (stop2, run2, ready2) = start("two");
    wait_for("two's caches synced", || ready2.load(Ordering::Relaxed)).await;
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .create(&PostParams::default(), &{
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some("first".into());
            cm
        })
        .await
        .unwrap();
    wait_for("one reconciles first", || !seen.lock().unwrap().is_empty()).await;
    assert!(seen.lock().unwrap().iter().all(|(who, _)| who == "one"));

    // One dies without releasing; two takes over after the lease expires and reconciles a
    // new object from the cache it kept warm, without listing again.
    let _ = stop1.send(());
    run1.await.unwrap().unwrap();
    let lists = fake.actions().iter().filter(|a| a.verb == "list").count();
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .create(&PostParams::default(), &{
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some("second".into());
            cm
        })
        .await
        .unwrap();
    wait_for("two reconciles the new object", || {
        seen.lock()
            .unwrap()
            .iter()
            .any(|(who, name)| who == "two" && name == "second")
    })
    .await;
    let lists_after = fake.actions().iter().filter(|a| a.verb == "list").count();
    assert_eq!(lists, lists_after, "no list: the standby's cache was warm");
    let _ = stop2.send(());
    run2.await.unwrap().unwrap();
}

/// A standby whose every attempt fails after the lease expired (here its Role lets it read
/// the Lease but not take it) tries once per retry period, as client-go does, never in a
/// tight loop.
#[tokio::test]
async fn a_standby_refused_the_lease_tries_once_per_period() {
    let fake = support::fake();
    fake.seed_yaml(
        "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease-reader, namespace: a}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lease-reader, namespace: a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease-reader}
subjects: [{kind: ServiceAccount, name: standby, namespace: a}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: test-lease, namespace: a}
spec: {holderIdentity: gone, leaseDurationSeconds: 1}
",
    )
    .unwrap();
    let client = Client::new(fake.as_service_account("a", "standby"), "a");
    let (stop, shutdown) = stop_signal();
    let standby = election("standby").start(client, &Metrics::new(), shutdown);
    // The lease expires a second after the standby first sees it; then 2 s of refusals.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let actions = fake.actions();
    let seen: Vec<String> = actions
        .iter()
        .filter(|a| a.resource == "leases")
        .map(|a| a.verb.clone())
        .collect();
    // Each attempt reads the Lease (its refused update is not in the action log): one per
    // 200 to 440 ms, where a tight loop would make hundreds.
    let attempts = seen.iter().filter(|v| *v == "get").count();
    assert!(
        (5..=16).contains(&attempts),
        "{attempts} attempts in 3 s: {seen:?}"
    );
    let denied = fake
        .access_report("system:serviceaccount:a:standby")
        .to_string();
    assert!(
        denied.contains("cannot update resource \"leases\""),
        "the expired lease was tried: {denied}"
    );
    assert!(!*standby.leading().borrow());
    let _ = stop.send(());
    standby.stopped().await;
}
