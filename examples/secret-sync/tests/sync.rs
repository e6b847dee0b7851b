//! Secret sync on the fake API server: new namespaces, updates, deletes, conflicts; a
//! namespace relabelled out of the selector, a copy deleted by hand, and a refused write
//! retried with the runtime's backoff.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_apiserver::{ApiError, FakeApiServer, Matcher};
use futures::FutureExt;
use kube::Client;
use kube::api::{Api, Patch};
use secret_sync::{COPY_LABEL, Options, Report, SOURCE_UID};
use serde_json::{Value, json};

struct Env {
    fake: FakeApiServer,
    reports: Arc<Mutex<Vec<Report>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl Env {
    async fn start(fake: FakeApiServer, namespace_selector: &str) -> Self {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        let options = Options {
            source_namespace: "default".into(),
            selector: "secret-sync.example.com/sync=true".into(),
            namespace_selector: namespace_selector.into(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(secret_sync::run(
            Client::new(fake.clone(), "default"),
            options,
            async {
                let _ = stopped.await;
            }
            .boxed(),
            move |r| sink.lock().unwrap().push(r.clone()),
        ));
        Self {
            fake,
            reports,
            stop: Some(stop),
            task,
        }
    }

    fn secret(&self, ns: &str, name: &str) -> Option<Value> {
        self.fake.get("v1", "Secret", Some(ns), name)
    }

    async fn until(&self, what: &str, check: impl Fn(&Self) -> bool) {
        for _ in 0..200 {
            if check(self) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "{what}: not within 5s; reports {:?}",
            self.reports.lock().unwrap()
        );
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

fn namespace(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
}

fn source(name: &str, token: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "default",
        "labels": {"secret-sync.example.com/sync": "true"}}, "data": {"token": token}})
}

#[tokio::test]
async fn copies_follow_namespaces_and_their_source() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-a", json!({}))).unwrap();
    let source_uid = fake.seed(source("registry", "djE=")).unwrap()["metadata"]["uid"].clone();
    fake.seed(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "unlabelled", "namespace": "default"}})).unwrap();
    let env = Env::start(fake.clone(), "").await;
    env.until("copy in team-a", |e| {
        e.secret("team-a", "registry").is_some()
    })
    .await;
    let copy = env.secret("team-a", "registry").unwrap();
    assert_eq!(copy["data"], json!({"token": "djE="}));
    assert_eq!(copy["metadata"]["labels"][COPY_LABEL], "default");
    assert_eq!(copy["metadata"]["annotations"][SOURCE_UID], source_uid);
    assert!(
        env.secret("team-a", "unlabelled").is_none(),
        "only labelled sources"
    );
    assert!(
        env.secret("kube-system", "registry").is_some(),
        "every other namespace"
    );

    fake.seed(namespace("team-new", json!({}))).unwrap();
    env.until("a new namespace gets the secrets", |e| {
        e.secret("team-new", "registry").is_some()
    })
    .await;

    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::default_namespaced(Client::new(fake.clone(), "default"));
    secrets
        .patch(
            "registry",
            &Default::default(),
            &Patch::Merge(json!({"data": {"token": "djI="}})),
        )
        .await
        .unwrap();
    env.until("the update propagates", |e| {
        e.secret("team-a", "registry").unwrap()["data"]["token"] == "djI="
    })
    .await;

    secrets
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("copies go with their source", |e| {
        e.secret("team-a", "registry").is_none() && e.secret("team-new", "registry").is_none()
    })
    .await;
    assert!(env.secret("default", "unlabelled").is_some());
    env.stop().await;
}

#[tokio::test]
async fn an_unrelated_secret_of_the_same_name_is_left_alone_and_reported() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-b", json!({}))).unwrap();
    fake.seed(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "registry", "namespace": "team-b"}, "data": {"token": "bWluZQ=="}})).unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    let env = Env::start(fake.clone(), "").await;
    env.until("a conflict report", |e| {
        e.reports
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.conflicts.contains(&"team-b/registry".to_owned()))
    })
    .await;
    assert_eq!(
        env.secret("team-b", "registry").unwrap()["data"]["token"],
        "bWluZQ==",
        "untouched"
    );
    let events = fake.list("events.k8s.io/v1", "Event", Some("default"));
    assert!(
        events.iter().any(|e| e["reason"] == "NameConflict"),
        "{events:?}"
    );
    // Deleting the source must not delete the unrelated secret either.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::default_namespaced(Client::new(fake.clone(), "default"));
    secrets
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("copies gone", |e| {
        e.secret("kube-system", "registry").is_none()
    })
    .await;
    assert!(env.secret("team-b", "registry").is_some());
    env.stop().await;
}

#[tokio::test]
async fn a_namespace_selector_limits_the_targets() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("wanted", json!({"sync": "yes"})))
        .unwrap();
    fake.seed(namespace("ignored", json!({}))).unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    let env = Env::start(fake.clone(), "sync=yes").await;
    env.until("copy in wanted", |e| {
        e.secret("wanted", "registry").is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(env.secret("ignored", "registry").is_none());
    env.stop().await;
}

/// The copies are compared with what secret-sync owns in them, extracted from the cached
/// copies' `managedFields` (which the informer factory keeps for Secrets): the syncs that a
/// new namespace and the new copies' own events trigger write nothing to copies in sync.
/// (Were `managedFields` dropped, nothing would be found owned and every sync would apply
/// every copy again, reporting it updated.)
#[tokio::test]
async fn copies_in_sync_are_not_written_again() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-a", json!({}))).unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    let env = Env::start(fake.clone(), "").await;
    env.until("copy in team-a", |e| {
        e.secret("team-a", "registry").is_some()
    })
    .await;
    fake.seed(namespace("team-b", json!({}))).unwrap();
    env.until("copy in team-b", |e| {
        e.secret("team-b", "registry").is_some()
    })
    .await;
    let reports = env.reports.lock().unwrap().clone();
    assert!(reports.iter().all(|r| r.updated.is_empty()), "{reports:?}");
    let team_a_writes = fake
        .actions()
        .iter()
        .filter(|a| a.is_write() && a.resource == "secrets")
        .filter(|a| a.namespace.as_deref() == Some("team-a"))
        .count();
    assert_eq!(team_a_writes, 1, "only the copy's creation");
    env.stop().await;
}

#[tokio::test]
async fn a_namespace_relabelled_out_of_the_selector_loses_its_copies() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-a", json!({"sync": "yes"})))
        .unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    let env = Env::start(fake.clone(), "sync=yes").await;
    env.until("copy in team-a", |e| {
        e.secret("team-a", "registry").is_some()
    })
    .await;
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> =
        Api::all(Client::new(fake.clone(), "default"));
    namespaces
        .patch(
            "team-a",
            &Default::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"sync": null}}})),
        )
        .await
        .unwrap();
    env.until("the copy goes", |e| {
        e.secret("team-a", "registry").is_none()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn a_copy_deleted_by_hand_comes_back() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-a", json!({}))).unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    let env = Env::start(fake.clone(), "").await;
    env.until("copy in team-a", |e| {
        e.secret("team-a", "registry").is_some()
    })
    .await;
    let copies: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(Client::new(fake.clone(), "default"), "team-a");
    copies
        .delete("registry", &Default::default())
        .await
        .unwrap();
    env.until("the copy is back", |e| {
        e.secret("team-a", "registry").is_some()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn a_refused_write_is_retried_until_it_goes_through() {
    let fake = FakeApiServer::new();
    fake.seed(namespace("team-a", json!({}))).unwrap();
    fake.seed(source("registry", "djE=")).unwrap();
    // Server-side apply is a patch: the first three, whichever namespace, fail.
    let mut refused = Matcher::new("patch", "secrets");
    refused.name = Some("registry".into());
    fake.fail(
        refused,
        ApiError::internal("etcd is having a bad day"),
        Some(3),
    );
    let env = Env::start(fake.clone(), "").await;
    env.until("copy in team-a", |e| {
        e.secret("team-a", "registry").is_some()
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
