//! Secret sync through `TestEnv`: new namespaces, updates, deletes, conflicts; a namespace
//! relabelled out of the selector, a copy deleted by hand, and a refused write retried with
//! the runtime's backoff.
//!
//! The same tests run on the in-memory API server (default), on etcd and kube-apiserver
//! from `KUBEBUILDER_ASSETS`, and on the cluster of `KUBE_TEST_KUBECONFIG`. Each test keeps
//! to what is its own there: its sources live in the environment's namespace, and the
//! namespaces it makes carry a label with that namespace's name, which the controller's
//! namespace selector requires, so tests sharing a server (or a cluster with other
//! namespaces) never see each other's copies. The checks that need the fake's write log or
//! its faults run on the fake only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::{ApiError, Matcher, TestEnv};
use futures::FutureExt;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PostParams};
use secret_sync::{COPY_LABEL, Options, Report, SOURCE_UID};
use serde_json::json;

/// The label that ties a namespace to one test's environment.
const RUN: &str = "secret-sync.example.com/test-run";

struct Env {
    test: TestEnv,
    made: Mutex<Vec<String>>,
    reports: Arc<Mutex<Vec<Report>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), String>>>,
}

impl Env {
    async fn new() -> Self {
        Env {
            test: TestEnv::start().await.unwrap(),
            made: Mutex::new(Vec::new()),
            reports: Arc::default(),
            stop: None,
            task: None,
        }
    }

    /// This test's name for a namespace: `<environment namespace>-<name>`.
    fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.test.namespace())
    }

    /// Starts secret-sync: sources in the environment's namespace, targets the namespaces
    /// of this test that also match `namespace_selector`.
    fn start(&mut self, namespace_selector: &str) {
        let sink = self.reports.clone();
        let mut targets = format!("{RUN}={}", self.test.namespace());
        if !namespace_selector.is_empty() {
            targets = format!("{targets},{namespace_selector}");
        }
        let options = Options {
            source_namespace: self.test.namespace().to_owned(),
            selector: "secret-sync.example.com/sync=true".into(),
            namespace_selector: targets,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        self.task = Some(tokio::spawn(secret_sync::run(
            self.test.client(),
            options,
            async {
                let _ = stopped.await;
            }
            .boxed(),
            move |r| sink.lock().unwrap().push(r.clone()),
        )));
        self.stop = Some(stop);
    }

    /// Creates the namespace `self.ns(name)` with `labels` and this test's label.
    async fn namespace(&self, name: &str, labels: serde_json::Value) -> String {
        let name = self.ns(name);
        let mut labels = labels;
        labels[RUN] = json!(self.test.namespace());
        let object: Namespace =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}})).unwrap();
        Api::<Namespace>::all(self.test.client())
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        self.made.lock().unwrap().push(name.clone());
        name
    }

    fn secrets(&self, ns: &str) -> Api<Secret> {
        Api::namespaced(self.test.client(), ns)
    }

    /// A source secret: labelled for syncing, in the environment's namespace.
    async fn source(&self, name: &str, token: &str) -> Secret {
        let object: Secret = serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"secret-sync.example.com/sync": "true"}}, "data": {"token": token}}))
        .unwrap();
        self.secrets(self.test.namespace())
            .create(&PostParams::default(), &object)
            .await
            .unwrap()
    }

    async fn secret(&self, ns: &str, name: &str) -> Option<Secret> {
        self.secrets(ns).get_opt(name).await.unwrap()
    }

    async fn token(&self, ns: &str, name: &str) -> Option<String> {
        let secret = self.secret(ns, name).await?;
        let data = secret.data?;
        Some(String::from_utf8_lossy(&data.get("token")?.0).into_owned())
    }

    /// Waits up to 10 s for `check`.
    async fn until(&self, what: &str, check: impl AsyncFn(&Self) -> bool) {
        for _ in 0..400 {
            if check(self).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "{what}: not within 10s; reports {:?}",
            self.reports.lock().unwrap()
        );
    }

    /// Stops secret-sync and removes what the test made.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
        let namespaces: Api<Namespace> = Api::all(self.test.client());
        let made = self.made.lock().unwrap().clone();
        for ns in made {
            let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
        }
        self.test.cleanup().await.unwrap();
    }
}

#[tokio::test]
async fn copies_follow_namespaces_and_their_source() {
    let mut env = Env::new().await;
    let team_a = env.namespace("team-a", json!({})).await;
    let other = env.namespace("other", json!({})).await;
    let source_uid = env.source("registry", "djE=").await.metadata.uid;
    let home = env.test.namespace().to_owned();
    env.secrets(&home)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "unlabelled"}})).unwrap(),
        )
        .await
        .unwrap();
    env.start("");
    env.until("copy in team-a", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    let copy = env.secret(&team_a, "registry").await.unwrap();
    assert_eq!(env.token(&team_a, "registry").await.as_deref(), Some("v1"));
    assert_eq!(copy.metadata.labels.unwrap()[COPY_LABEL], home);
    assert_eq!(
        copy.metadata.annotations.unwrap().get(SOURCE_UID),
        source_uid.as_ref()
    );
    assert!(
        env.secret(&team_a, "unlabelled").await.is_none(),
        "only labelled sources"
    );
    env.until("every other namespace", async |e| {
        e.secret(&other, "registry").await.is_some()
    })
    .await;

    let team_new = env.namespace("team-new", json!({})).await;
    env.until("a new namespace gets the secrets", async |e| {
        e.secret(&team_new, "registry").await.is_some()
    })
    .await;

    let sources = env.secrets(&home);
    sources
        .patch(
            "registry",
            &Default::default(),
            &Patch::Merge(json!({"data": {"token": "djI="}})),
        )
        .await
        .unwrap();
    env.until("the update propagates", async |e| {
        e.token(&team_a, "registry").await.as_deref() == Some("v2")
    })
    .await;

    sources
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("copies go with their source", async |e| {
        e.secret(&team_a, "registry").await.is_none()
            && e.secret(&team_new, "registry").await.is_none()
    })
    .await;
    assert!(env.secret(&home, "unlabelled").await.is_some());
    env.stop().await;
}

#[tokio::test]
async fn an_unrelated_secret_of_the_same_name_is_left_alone_and_reported() {
    let mut env = Env::new().await;
    let team_b = env.namespace("team-b", json!({})).await;
    let other = env.namespace("other", json!({})).await;
    env.secrets(&team_b)
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "registry"}, "data": {"token": "bWluZQ=="}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    env.source("registry", "djE=").await;
    env.start("");
    let conflict = format!("{team_b}/registry");
    env.until("a conflict report", async |e| {
        e.reports
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.conflicts.contains(&conflict))
    })
    .await;
    assert_eq!(
        env.token(&team_b, "registry").await.as_deref(),
        Some("mine"),
        "untouched"
    );
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(env.test.client(), env.test.namespace());
    env.until("a NameConflict event", async |_| {
        events
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("NameConflict"))
    })
    .await;
    // Deleting the source must not delete the unrelated secret either.
    env.secrets(env.test.namespace())
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("copies gone", async |e| {
        e.secret(&other, "registry").await.is_none()
    })
    .await;
    assert!(env.secret(&team_b, "registry").await.is_some());
    env.stop().await;
}

#[tokio::test]
async fn a_namespace_selector_limits_the_targets() {
    let mut env = Env::new().await;
    let wanted = env.namespace("wanted", json!({"sync": "yes"})).await;
    let ignored = env.namespace("ignored", json!({})).await;
    env.source("registry", "djE=").await;
    env.start("sync=yes");
    env.until("copy in wanted", async |e| {
        e.secret(&wanted, "registry").await.is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(env.secret(&ignored, "registry").await.is_none());
    env.stop().await;
}

/// The copies are compared with what secret-sync owns in them, extracted from the cached
/// copies' `managedFields` (which the informer factory keeps for Secrets): the syncs that a
/// new namespace and the new copies' own events trigger write nothing to copies in sync.
/// (Were `managedFields` dropped, nothing would be found owned and every sync would apply
/// every copy again, reporting it updated.)
#[tokio::test]
async fn copies_in_sync_are_not_written_again() {
    let mut env = Env::new().await;
    let team_a = env.namespace("team-a", json!({})).await;
    env.source("registry", "djE=").await;
    env.start("");
    env.until("copy in team-a", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    let version = env
        .secret(&team_a, "registry")
        .await
        .unwrap()
        .metadata
        .resource_version;
    let team_b = env.namespace("team-b", json!({})).await;
    env.until("copy in team-b", async |e| {
        e.secret(&team_b, "registry").await.is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reports = env.reports.lock().unwrap().clone();
    assert!(reports.iter().all(|r| r.updated.is_empty()), "{reports:?}");
    assert_eq!(
        env.secret(&team_a, "registry")
            .await
            .unwrap()
            .metadata
            .resource_version,
        version,
        "the copy in team-a is not written again"
    );
    if let Some(fake) = env.test.fake() {
        let team_a_writes = fake
            .actions()
            .iter()
            .filter(|a| a.is_write() && a.resource == "secrets")
            .filter(|a| a.namespace.as_deref() == Some(team_a.as_str()))
            .count();
        assert_eq!(team_a_writes, 1, "only the copy's creation");
    }
    env.stop().await;
}

#[tokio::test]
async fn a_namespace_relabelled_out_of_the_selector_loses_its_copies() {
    let mut env = Env::new().await;
    let team_a = env.namespace("team-a", json!({"sync": "yes"})).await;
    env.source("registry", "djE=").await;
    env.start("sync=yes");
    env.until("copy in team-a", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    Api::<Namespace>::all(env.test.client())
        .patch(
            &team_a,
            &Default::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"sync": null}}})),
        )
        .await
        .unwrap();
    env.until("the copy goes", async |e| {
        e.secret(&team_a, "registry").await.is_none()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn a_copy_deleted_by_hand_comes_back() {
    let mut env = Env::new().await;
    let team_a = env.namespace("team-a", json!({})).await;
    env.source("registry", "djE=").await;
    env.start("");
    env.until("copy in team-a", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    env.secrets(&team_a)
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("the copy is back", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    env.stop().await;
}

/// Fake only: it programs the fake's faults.
#[tokio::test]
async fn a_refused_write_is_retried_until_it_goes_through() {
    let mut env = Env::new().await;
    let Some(fake) = env.test.fake().cloned() else {
        eprintln!("fake only (faults): skipped on a real server");
        return env.stop().await;
    };
    let team_a = env.namespace("team-a", json!({})).await;
    env.source("registry", "djE=").await;
    // Server-side apply is a patch: the first three, whichever namespace, fail.
    let mut refused = Matcher::new("patch", "secrets");
    refused.name = Some("registry".into());
    fake.fail(
        refused,
        ApiError::internal("etcd is having a bad day"),
        Some(3),
    );
    env.start("");
    env.until("copy in team-a", async |e| {
        e.secret(&team_a, "registry").await.is_some()
    })
    .await;
    let tries = fake
        .actions()
        .iter()
        .filter(|a| a.verb == "patch" && a.resource == "secrets")
        .count();
    assert!(
        tries >= 4,
        "{tries} applies: three refused, then the copies"
    );
    env.stop().await;
}
