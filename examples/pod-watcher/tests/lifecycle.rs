//! A scripted pod lifecycle and the lines the watcher logs for it; the queue's pacing and
//! its dedup of a pod's changes.
//!
//! Through `TestEnv`: on the in-memory API server (default), on etcd and kube-apiserver from
//! `KUBEBUILDER_ASSETS`, or on the cluster of `KUBE_TEST_KUBECONFIG`, unchanged. Each test
//! watches its environment's namespace only, so tests sharing a server never see each
//! other's pods; a pod is put on a node as a scheduler does it, through its `binding`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_apiserver::TestEnv;
use futures::FutureExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PostParams};
use pod_watcher::Options;
use serde_json::json;

/// The watcher running with `options`, the lines it logged so far, and how to stop it.
struct Watching {
    lines: Arc<Mutex<Vec<String>>>,
    stopper: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl Watching {
    fn start(client: Client, options: Options) -> Self {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let (stopper, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(pod_watcher::run(
            client,
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

    /// Waits (up to 10 s) until `n` lines were logged.
    async fn wait(&self, n: usize) {
        for _ in 0..400 {
            if self.lines.lock().unwrap().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{n} lines: {:?}", self.lines.lock().unwrap());
    }

    /// Waits (up to 10 s) until a `DELETED` line was logged.
    async fn wait_deleted(&self) {
        for _ in 0..400 {
            if self
                .lines
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.starts_with("DELETED"))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no DELETED line: {:?}", self.lines.lock().unwrap());
    }

    /// Stops the watcher and returns every line it logged, less the update kube-apiserver
    /// makes of a deletion before the pod goes (it marks the pod first, which the watcher
    /// logs as ` deleting`; the fake removes a pod at once).
    async fn stop(self) -> Vec<String> {
        let _ = self.stopper.send(());
        self.task.await.unwrap().unwrap();
        let lines = self.lines.lock().unwrap().clone();
        lines
            .into_iter()
            .filter(|l| !(l.starts_with("UPDATED ") && l.ends_with(" deleting")))
            .collect()
    }
}

/// `options` watching `env`'s namespace.
fn scoped(env: &TestEnv, options: Options) -> Options {
    Options {
        namespace: Some(env.namespace().to_owned()),
        ..options
    }
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    .unwrap()
}

/// Puts pod `name` on `node`, as a scheduler does.
async fn bind(pods: &Api<Pod>, name: &str, node: &str) {
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
    let _: serde_json::Value = pods
        .create_subresource("binding", name, &PostParams::default(), &binding)
        .await
        .unwrap();
}

/// The lines logged, with `options`, for a pod created, scheduled, running and deleted
/// while another one already ran.
async fn lifecycle(options: Options) -> Vec<String> {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    pods.create(&PostParams::default(), &pod("old"))
        .await
        .unwrap();
    bind(&pods, "old", "node-b").await;
    let watching = Watching::start(env.client(), scoped(&env, options));
    watching.wait(1).await;
    pods.create(&PostParams::default(), &pod("web"))
        .await
        .unwrap();
    watching.wait(2).await;
    bind(&pods, "web", "node-a").await;
    watching.wait(3).await;
    pods.patch_status(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    watching.wait(4).await;
    // At once: no grace period for a kubelet that is not there.
    pods.delete("web", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    watching.wait_deleted().await;
    let lines = watching.stop().await;
    let ns = env.namespace().to_owned();
    env.cleanup().await.unwrap();
    lines
        .into_iter()
        .map(|l| l.replace(&format!(" {ns}/"), " NS/"))
        .collect()
}

const LIFECYCLE: [&str; 5] = [
    "ADDED NS/old phase=Pending node=node-b",
    "ADDED NS/web phase=Pending node=<none>",
    "UPDATED NS/web phase=Pending node=node-a",
    "UPDATED NS/web phase=Running node=node-a",
    "DELETED NS/web phase=Running node=node-a",
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
    let env = TestEnv::start().await.unwrap();
    let other = format!("{}-other", env.namespace());
    let namespaces: Api<Namespace> = Api::all(env.client());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": other}})).unwrap(),
        )
        .await
        .unwrap();
    for ns in [env.namespace(), other.as_str()] {
        let pods: Api<Pod> = Api::namespaced(env.client(), ns);
        // A new namespace's ServiceAccount may come a moment after it (on a real server).
        for attempt in 0.. {
            match pods.create(&PostParams::default(), &pod("p")).await {
                Ok(_) => break,
                Err(e) if attempt < 100 => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let options = Options {
        resync: Some(Duration::from_millis(100)),
        ..Options::default()
    };
    let watching = Watching::start(env.client(), scoped(&env, options));
    watching.wait(1).await;
    tokio::time::sleep(Duration::from_millis(450)).await;
    let lines = watching.stop().await;
    let ours = format!(" {}/p ", env.namespace());
    assert_eq!(
        lines[0],
        format!("ADDED {}/p phase=Pending node=<none>", env.namespace())
    );
    assert!(lines.iter().all(|l| l.contains(&ours)), "{lines:?}");
    assert!(
        lines.iter().filter(|l| l.starts_with("UPDATED")).count() >= 2,
        "resync: {lines:?}"
    );
    let _ = namespaces.delete(&other, &DeleteParams::default()).await;
    env.cleanup().await.unwrap();
}

#[tokio::test]
async fn metadata_only_logs_names_and_owners() {
    let env = TestEnv::start().await.unwrap();
    let owners: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::default_namespaced(env.client());
    let owner = owners
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "web-owner"}})).unwrap(),
        )
        .await
        .unwrap();
    let mut owned = pod("web-1");
    owned.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "name": "web-owner", "uid": owner.metadata.uid, "controller": true}))
        .unwrap(),
    ]);
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    pods.create(&PostParams::default(), &owned).await.unwrap();
    let options = Options {
        metadata_only: true,
        ..Options::default()
    };
    let watching = Watching::start(env.client(), scoped(&env, options));
    watching.wait(1).await;
    pods.delete("web-1", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    watching.wait_deleted().await;
    let ns = env.namespace().to_owned();
    assert_eq!(
        watching.stop().await,
        [
            format!("ADDED {ns}/web-1 owner=ConfigMap/web-owner"),
            format!("DELETED {ns}/web-1 owner=ConfigMap/web-owner"),
        ]
    );
    env.cleanup().await.unwrap();
}

#[tokio::test]
async fn lines_come_at_most_at_the_rate_evenly_spaced() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    for i in 1..=5 {
        pods.create(&PostParams::default(), &pod(&format!("p{i}")))
            .await
            .unwrap();
    }
    let options = Options {
        rate: 10,
        ..Options::default()
    };
    let started = Instant::now();
    let watching = Watching::start(env.client(), scoped(&env, options));
    watching.wait(5).await;
    let took = started.elapsed();
    let lines = watching.stop().await;
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(
        took >= Duration::from_millis(400),
        "5 lines at 10 a second take 400 ms at least: {took:?}"
    );
    env.cleanup().await.unwrap();
}

/// Changes of a pod queued while its key waits for the bucket are one line, about the
/// pod's latest state (the queue holds keys, as client-go's does).
#[tokio::test]
async fn changes_of_a_pod_waiting_its_turn_are_one_line() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    pods.create(&PostParams::default(), &pod("web"))
        .await
        .unwrap();
    // One line every half second: the first at once, the next 500 ms after.
    let options = Options {
        rate: 2,
        ..Options::default()
    };
    let watching = Watching::start(env.client(), scoped(&env, options));
    watching.wait(1).await;
    bind(&pods, "web", "node-a").await;
    pods.patch_status(
        "web",
        &Default::default(),
        &Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    watching.wait(2).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let ns = env.namespace().to_owned();
    assert_eq!(
        watching.stop().await,
        [
            format!("ADDED {ns}/web phase=Pending node=<none>"),
            format!("UPDATED {ns}/web phase=Running node=node-a"),
        ]
    );
    env.cleanup().await.unwrap();
}
