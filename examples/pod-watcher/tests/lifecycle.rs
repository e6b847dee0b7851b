//! A scripted pod lifecycle on the fake API server, and the lines the watcher logs for it;
//! the queue's pacing and its dedup of a pod's changes.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use kube::Client;
use kube::api::{Api, Patch};
use pod_watcher::Options;
use serde_json::json;

/// The watcher running on `fake` with `options`, the lines it logged so far, and how to
/// stop it.
struct Watching {
    lines: Arc<Mutex<Vec<String>>>,
    stopper: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl Watching {
    fn start(fake: &FakeApiServer, options: Options) -> Self {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let (stopper, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(pod_watcher::run(
            Client::new(fake.clone(), "default"),
            options,
            async {
                let _ = stopped.await;
            }
            .boxed(),
            move |l| sink.lock().unwrap().push(l),
        ));
        Self {
            lines,
            stopper,
            task,
        }
    }

    /// Waits (up to 5 s) until `n` lines were logged.
    async fn wait(&self, n: usize) {
        for _ in 0..200 {
            if self.lines.lock().unwrap().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{n} lines: {:?}", self.lines.lock().unwrap());
    }

    /// Stops the watcher and returns every line it logged.
    async fn stop(self) -> Vec<String> {
        let _ = self.stopper.send(());
        self.task.await.unwrap().unwrap();
        self.lines.lock().unwrap().clone()
    }
}

/// The lines logged, with `options`, for a pod created, scheduled, running and deleted
/// while another one already ran.
async fn lifecycle(options: Options) -> Vec<String> {
    let fake = FakeApiServer::new();
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old", "namespace": "kube-system"},
        "spec": {"nodeName": "node-b", "containers": [{"name": "c", "image": "x"}]}}))
    .unwrap();
    let watching = Watching::start(&fake, options);
    watching.wait(1).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(Client::new(fake.clone(), "default"));
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    .unwrap();
    watching.wait(2).await;
    pods.patch(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"spec": {"nodeName": "node-a"}})),
    )
    .await
    .unwrap();
    watching.wait(3).await;
    pods.patch_status(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    watching.wait(4).await;
    pods.delete("web", &Default::default()).await.unwrap();
    watching.wait(5).await;
    watching.stop().await
}

const LIFECYCLE: [&str; 5] = [
    "ADDED kube-system/old phase=Pending node=node-b",
    "ADDED default/web phase=Pending node=<none>",
    "UPDATED default/web phase=Pending node=node-a",
    "UPDATED default/web phase=Running node=node-a",
    "DELETED default/web phase=Running node=node-a",
];

#[tokio::test]
async fn logs_every_step_of_a_pod_lifecycle_in_order() {
    assert_eq!(lifecycle(Options::default()).await, LIFECYCLE);
}

#[tokio::test]
async fn encoded_logs_the_same_lines_from_pods_decoded_as_they_are_logged() {
    let options = Options {
        encoded: true,
        ..Options::default()
    };
    assert_eq!(lifecycle(options).await, LIFECYCLE);
}

#[tokio::test]
async fn one_namespace_and_resync() {
    let fake = FakeApiServer::new();
    for ns in ["default", "kube-system"] {
        fake.seed(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}),
        )
        .unwrap();
    }
    let options = Options {
        namespace: Some("default".into()),
        resync: Some(Duration::from_millis(100)),
        ..Options::default()
    };
    let watching = Watching::start(&fake, options);
    tokio::time::sleep(Duration::from_millis(450)).await;
    let lines = watching.stop().await;
    assert_eq!(lines[0], "ADDED default/p phase=Pending node=<none>");
    assert!(lines.iter().all(|l| l.contains("default/p")), "{lines:?}");
    assert!(
        lines.iter().filter(|l| l.starts_with("UPDATED")).count() >= 2,
        "resync: {lines:?}"
    );
}

#[tokio::test]
async fn metadata_only_logs_names_and_owners() {
    let fake = FakeApiServer::new();
    fake.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "default",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-6d4",
            "uid": "0b8e6a52-4a86-4a3c-9a57-3f1d0c9e2a10", "controller": true}]},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    .unwrap();
    let options = Options {
        metadata_only: true,
        ..Options::default()
    };
    let watching = Watching::start(&fake, options);
    watching.wait(1).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(Client::new(fake.clone(), "default"));
    pods.delete("web-1", &Default::default()).await.unwrap();
    watching.wait(2).await;
    assert_eq!(
        watching.stop().await,
        [
            "ADDED default/web-1 owner=ReplicaSet/web-6d4",
            "DELETED default/web-1 owner=ReplicaSet/web-6d4",
        ]
    );
}

fn pod(namespace: &str, name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "x"}]}})
}

#[tokio::test]
async fn lines_come_at_most_at_the_rate_evenly_spaced() {
    let fake = FakeApiServer::new();
    for i in 1..=5 {
        fake.seed(pod("default", &format!("p{i}"))).unwrap();
    }
    let options = Options {
        rate: 10,
        ..Options::default()
    };
    let started = Instant::now();
    let watching = Watching::start(&fake, options);
    watching.wait(5).await;
    let took = started.elapsed();
    let lines = watching.stop().await;
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(
        took >= Duration::from_millis(400),
        "5 lines at 10 a second take 400 ms at least: {took:?}"
    );
}

/// Changes of a pod queued while its key waits for the bucket are one line, about the
/// pod's latest state (the queue holds keys, as client-go's does).
#[tokio::test]
async fn changes_of_a_pod_waiting_its_turn_are_one_line() {
    let fake = FakeApiServer::new();
    fake.seed(pod("default", "web")).unwrap();
    // One line every half second: the first at once, the next 500 ms after.
    let options = Options {
        rate: 2,
        ..Options::default()
    };
    let watching = Watching::start(&fake, options);
    watching.wait(1).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(Client::new(fake.clone(), "default"));
    pods.patch(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"spec": {"nodeName": "node-a"}})),
    )
    .await
    .unwrap();
    pods.patch_status(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    watching.wait(2).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        watching.stop().await,
        [
            "ADDED default/web phase=Pending node=<none>",
            "UPDATED default/web phase=Running node=node-a",
        ]
    );
}
