//! The controllers on the fake API server, through the generated clients and informers:
//! the Go sample's cases (creates the deployment; in sync means no writes but a differing
//! status; updates replicas; not controlled by us is an error and an event) and more.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use kube::Client;
use kube_codegen_runtime::metrics::Metrics;
use sample_controller::apis::samplecontroller::v1alpha1::{
    Flavor, Foo, FooSpec, Icecream, IcecreamSpec,
};
use sample_controller::run::{self, Options, shutdown_signal};
use serde_json::{Value, json};
use tokio::sync::oneshot;

struct Running {
    fake: FakeApiServer,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<run::anyhow_free::Result<Metrics>>,
}

impl Running {
    async fn start(fake: FakeApiServer, resync: Option<Duration>) -> Self {
        Self::start_with(
            fake,
            Options {
                resync,
                ..Options::default()
            },
        )
        .await
    }

    async fn start_with(fake: FakeApiServer, options: Options) -> Self {
        for crd in sample_controller::generated::crds().unwrap() {
            // A server a test prepared may have them already; any other refusal fails.
            if let Err(e) = fake.seed(crd)
                && e.reason != "AlreadyExists"
            {
                panic!("the fake API server refused a generated CRD: {e:?}");
            }
        }
        // The controller runs as its ServiceAccount, bound to the RBAC its markers generate,
        // so a missing `+kubebuilder:rbac` marker is the 403 a cluster would give.
        let role = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts/rbac/role.yaml"),
        )
        .unwrap();
        if let Err(e) = fake.seed_yaml(&role) {
            assert_eq!(e.reason, "AlreadyExists", "{e:?}");
        }
        let client = Client::new(
            fake.as_service_account("default", "sample-controller"),
            "default",
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let options = Options {
            shutdown_deadline: Duration::from_secs(5),
            ..options
        };
        let task = tokio::spawn(run::run(
            client,
            options,
            shutdown_signal(async move {
                let _ = stopped.await;
            }),
        ));
        Self {
            fake,
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) -> Metrics {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .expect("stops in time")
            .unwrap()
            .unwrap()
    }

    fn get(&self, av: &str, kind: &str, name: &str) -> Option<Value> {
        self.fake.get(av, kind, Some("default"), name)
    }

    fn events(&self, reason: &str) -> Vec<Value> {
        self.fake
            .list("events.k8s.io/v1", "Event", Some("default"))
            .into_iter()
            .filter(|e| e["reason"] == reason)
            .collect()
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within 10s");
}

fn foo(name: &str, deployment: &str, replicas: i32) -> Foo {
    let mut foo = Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.into(),
            replicas: Some(replicas),
        },
    );
    foo.metadata.namespace = Some("default".into());
    foo
}

/// Sets a Deployment's status as the Deployment controller would.
async fn make_available(fake: &FakeApiServer, name: &str, n: i32) {
    let client = Client::new(fake.clone(), "default");
    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::default_namespaced(client);
    let status = json!({"status": {"replicas": n, "availableReplicas": n, "readyReplicas": n}});
    api.patch_status(name, &Default::default(), &kube::api::Patch::Merge(status))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_the_deployment_owned_by_the_foo_and_writes_status() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "test-deploy", 1)).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_some()
    })
    .await;
    let d = r.get("apps/v1", "Deployment", "test-deploy").unwrap();
    let foo = r
        .get("samplecontroller.k8s.io/v1alpha1", "Foo", "test")
        .unwrap();
    let owner = &d["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["kind"].as_str(), owner["apiVersion"].as_str()),
        (Some("Foo"), Some("samplecontroller.k8s.io/v1alpha1"))
    );
    assert_eq!(owner["uid"], foo["metadata"]["uid"]);
    assert_eq!(owner["controller"], true);
    assert_eq!(d["spec"]["replicas"], 1);
    make_available(&fake, "test-deploy", 1).await;
    eventually("status", || {
        r.get("samplecontroller.k8s.io/v1alpha1", "Foo", "test")
            .unwrap()["status"]["availableReplicas"]
            == 1
    })
    .await;
    eventually("synced event", || !r.events("Synced").is_empty()).await;
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_sync_means_no_writes_even_across_resyncs() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), Some(Duration::from_millis(100))).await;
    fake.seed(foo("test", "test-deploy", 1)).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_some()
    })
    .await;
    make_available(&fake, "test-deploy", 1).await;
    eventually("status", || {
        r.get("samplecontroller.k8s.io/v1alpha1", "Foo", "test")
            .unwrap()["status"]["availableReplicas"]
            == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.clear_actions();
    // Several resyncs later: reads from the cache only, zero writes.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let writes = fake.writes();
    assert!(writes.is_empty(), "steady state wrote: {writes:?}");
    let metrics = r.stop().await;
    assert!(
        metrics.reconciles_total("foo") >= 5,
        "resyncs reconciled {} times",
        metrics.reconciles_total("foo")
    );
    // Least privilege, both ways: the generated role refused nothing the controller asked
    // for, and what it used is reported (the unused grants are the candidates to trim).
    let access = fake.access_report("system:serviceaccount:default:sample-controller");
    assert!(access.denied.is_empty(), "refused: {:?}", access.denied);
    assert!(
        access
            .used
            .iter()
            .any(|(grant, n)| *n > 0 && format!("{grant:?}").contains("deployments")),
        "{access:?}"
    );
}

/// The Foo cache lags behind the writes, as on a busy cluster: the reconcile that the new
/// Deployment's event triggers reads the Foo from before the status just written. Each
/// status is still written once (`ReadYourWrites`), and so each Synced event is recorded
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_cache_still_gets_one_status_write_per_foo() {
    const N: usize = 20;
    let fake = FakeApiServer::new();
    fake.lag_watches("foos", Duration::from_millis(300));
    let r = Running::start(fake.clone(), None).await;
    for i in 0..N {
        fake.seed(foo(&format!("burst-{i}"), &format!("burst-{i}"), 1))
            .unwrap();
    }
    let foo_status = |i: usize| {
        r.get(
            "samplecontroller.k8s.io/v1alpha1",
            "Foo",
            &format!("burst-{i}"),
        )
        .map(|f| f["status"]["availableReplicas"].clone())
    };
    eventually("every status written", || {
        (0..N).all(|i| foo_status(i) == Some(json!(0)))
    })
    .await;
    // The reconciles that the Deployments' events and the status writes' own (late)
    // events trigger have run by now.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let status_writes = fake
        .writes()
        .into_iter()
        .filter(|a| a.resource == "foos" && a.subresource.as_deref() == Some("status"))
        .count();
    assert_eq!(status_writes, N, "status writes for {N} Foos");
    assert_eq!(r.events("Synced").len(), N);
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_replicas_and_recreates_a_deleted_deployment() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "test-deploy", 1)).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_some()
    })
    .await;
    let client = Client::new(fake.clone(), "default");
    let foos: kube::Api<Foo> = kube::Api::default_namespaced(client.clone());
    foos.patch(
        "test",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    eventually("replicas 4", || {
        r.get("apps/v1", "Deployment", "test-deploy").unwrap()["spec"]["replicas"] == 4
    })
    .await;

    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::default_namespaced(client);
    deployments
        .delete("test-deploy", &Default::default())
        .await
        .unwrap();
    eventually("recreated", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_some()
    })
    .await;
    assert_eq!(
        r.get("apps/v1", "Deployment", "test-deploy").unwrap()["spec"]["replicas"],
        4
    );
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_we_do_not_control_is_left_alone_and_reported() {
    let fake = FakeApiServer::new();
    fake.seed(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "taken", "namespace": "default"},
        "spec": {"replicas": 7, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
    .unwrap();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "taken", 1)).unwrap();
    eventually("ErrResourceExists event", || {
        !r.events("ErrResourceExists").is_empty()
    })
    .await;
    let event = &r.events("ErrResourceExists")[0];
    assert_eq!(event["type"], "Warning");
    assert_eq!(
        event["note"],
        "Resource \"taken\" already exists and is not managed by Foo"
    );
    let d = r.get("apps/v1", "Deployment", "taken").unwrap();
    assert_eq!(d["spec"]["replicas"], 7, "untouched");
    assert!(d["metadata"].get("ownerReferences").is_none());
    let metrics = r.stop().await;
    assert!(
        metrics.reconcile_errors("foo") >= 1,
        "the reconcile failed (and was retried with backoff)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ownership_is_by_uid_not_name() {
    let fake = FakeApiServer::new();
    for crd in sample_controller::generated::crds().unwrap() {
        fake.seed(crd).unwrap();
    }
    // A Deployment controlled by an earlier Foo of the same name (another uid).
    fake.seed(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "old", "namespace": "default",
        "ownerReferences": [{"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "name": "test", "uid": "not-this-foo", "controller": true}]},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
    .unwrap_or_default();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "old", 1)).unwrap();
    eventually("not ours", || !r.events("ErrResourceExists").is_empty()).await;
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_deployment_name_is_reported_and_not_retried() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "", 1)).unwrap();
    eventually("InvalidSpec event", || !r.events("InvalidSpec").is_empty()).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let metrics = r.stop().await;
    assert_eq!(
        metrics.reconcile_errors("foo"),
        0,
        "not an error: not retried"
    );
    assert!(
        fake.list("apps/v1", "Deployment", Some("default"))
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_foo_removes_its_deployment() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("test", "test-deploy", 1)).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_some()
    })
    .await;
    let foos: kube::Api<Foo> = kube::Api::default_namespaced(Client::new(fake.clone(), "default"));
    foos.delete("test", &Default::default()).await.unwrap();
    eventually("garbage collected", || {
        r.get("apps/v1", "Deployment", "test-deploy").is_none()
    })
    .await;
    r.stop().await;
}

fn pod(name: &str, icecream: &str, node: Option<&str>, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
        "labels": {"app": "icecream", "samplecontroller.k8s.io/icecream": icecream}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": phase}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn icecream_status_follows_its_pods() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    let mut ice = Icecream::new(
        "cone",
        IcecreamSpec {
            deployment_name: "cone".into(),
            replicas: Some(2),
            flavor: Flavor::Chocolate,
        },
    );
    ice.metadata.namespace = Some("default".into());
    fake.seed(&ice).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "cone").is_some()
    })
    .await;
    let status = || {
        r.get("samplecontroller.k8s.io/v1alpha1", "Icecream", "cone")
            .unwrap()["status"]
            .clone()
    };

    fake.seed(pod("cone-1", "cone", Some("node-b"), "Running"))
        .unwrap();
    fake.seed(pod("cone-2", "cone", None, "Pending")).unwrap();
    fake.seed(pod("other", "not-cone", Some("node-z"), "Running"))
        .unwrap();
    eventually("two pods", || {
        status()["podPhases"] == json!({"Pending": 1, "Running": 1})
    })
    .await;
    assert_eq!(status()["nodes"], json!(["node-b"]));

    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::default_namespaced(Client::new(fake.clone(), "default"));
    pods.patch(
        "cone-2",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"spec": {"nodeName": "node-a"}})),
    )
    .await
    .unwrap();
    pods.patch_status(
        "cone-2",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"status": {"phase": "Running"}})),
    )
    .await
    .unwrap();
    eventually("scheduled and running", || {
        status()["nodes"] == json!(["node-a", "node-b"])
            && status()["podPhases"] == json!({"Running": 2})
    })
    .await;

    pods.delete("cone-1", &Default::default()).await.unwrap();
    eventually("pod deleted", || {
        status()["nodes"] == json!(["node-a"]) && status()["podPhases"] == json!({"Running": 1})
    })
    .await;
    make_available(&fake, "cone", 2).await;
    eventually("available", || status()["availableReplicas"] == 2).await;
    r.stop().await;
}

/// The generated `artifacts/rbac/role.yaml` (from `+kubebuilder:rbac` markers) allows every
/// request the controller makes: informers, Deployment writes, status patches, events and
/// the leader-election Lease. A missing marker fails here, not in a cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_rbac_covers_every_request_the_controller_makes() {
    let role: Vec<Value> = serde_saphyr::from_multiple(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts/rbac/role.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    let rules: Vec<&Value> = role
        .iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .flat_map(|d| d["rules"].as_array().unwrap())
        .collect();
    let allows = |group: &str, resource: &str, verb: &str| {
        let has = |v: &Value, x: &str| v.as_array().unwrap().iter().any(|i| i == x || i == "*");
        rules.iter().any(|r| {
            has(&r["apiGroups"], group) && has(&r["resources"], resource) && has(&r["verbs"], verb)
        })
    };

    let fake = FakeApiServer::new();
    let r = Running::start_with(
        fake.clone(),
        Options {
            leader_election: Some(kube_codegen_runtime::leader::LeaderElection::new(
                "sample-controller",
                "default",
                "test",
            )),
            ..Options::default()
        },
    )
    .await;
    fake.seed(foo("f", "f", 1)).unwrap();
    let mut ice = Icecream::new(
        "i",
        IcecreamSpec {
            deployment_name: "i".into(),
            replicas: Some(1),
            flavor: Flavor::Vanilla,
        },
    );
    ice.metadata.namespace = Some("default".into());
    fake.seed(&ice).unwrap();
    let status_of = |kind: &str, name: &str| {
        fake.get(
            "samplecontroller.k8s.io/v1alpha1",
            kind,
            Some("default"),
            name,
        )
        .is_some_and(|o| !o["status"].is_null())
    };
    eventually("both statuses written", || {
        status_of("Foo", "f") && status_of("Icecream", "i")
    })
    .await;
    eventually("an event recorded", || {
        !fake
            .list("events.k8s.io/v1", "Event", Some("default"))
            .is_empty()
    })
    .await;
    r.stop().await;

    let mut seen = std::collections::BTreeSet::new();
    let mut written = std::collections::BTreeSet::new();
    for a in fake.actions() {
        let resource = match &a.subresource {
            Some(sub) => format!("{}/{sub}", a.resource),
            None => a.resource.clone(),
        };
        // A patch that is the first write of an object the test did not seed is a
        // server-side apply that created it: kube-apiserver then also checks `create`.
        let seeded = ["foos", "icecreams"].contains(&a.resource.as_str());
        let object = (
            a.group.clone(),
            a.resource.clone(),
            a.namespace.clone(),
            a.name.clone(),
        );
        if a.is_write() && written.insert(object) && a.verb == "patch" && !seeded {
            seen.insert((a.group.clone(), resource.clone(), "create".to_owned()));
        }
        seen.insert((a.group.clone(), resource, a.verb.clone()));
    }
    // The test drove the paths that matter: status writes, Deployments created by apply,
    // the Lease.
    for must in [
        ("samplecontroller.k8s.io", "foos/status", "patch"),
        ("apps", "deployments", "patch"),
        ("apps", "deployments", "create"),
        ("coordination.k8s.io", "leases", "get"),
        ("events.k8s.io", "events", "create"),
    ] {
        assert!(
            seen.contains(&(must.0.to_owned(), must.1.to_owned(), must.2.to_owned())),
            "the scenario did not exercise {must:?}: {seen:?}"
        );
    }
    let denied: Vec<_> = seen.iter().filter(|(g, r, v)| !allows(g, r, v)).collect();
    assert!(denied.is_empty(), "role.yaml denies {denied:?}");
}

/// A burst of 410 Gone on the Foo watch (an expired resource version, 20 times in a row)
/// makes the informer list again at once, without backing off: a spec change right after
/// the burst is acted on within seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_acts_at_once_after_a_burst_of_410_gone() {
    let fake = FakeApiServer::new();
    let r = Running::start(fake.clone(), None).await;
    fake.seed(foo("gone", "gone-deploy", 1)).unwrap();
    eventually("deployment", || {
        r.get("apps/v1", "Deployment", "gone-deploy").is_some()
    })
    .await;
    let watches = |fake: &FakeApiServer| {
        fake.actions()
            .iter()
            .filter(|a| a.verb == "watch" && a.resource == "foos")
            .count()
    };
    let before = watches(&fake);
    fake.fail(
        fake_apiserver::Matcher::new("watch", "foos"),
        fake_apiserver::ApiError::gone("too old resource version: 1 (2)"),
        Some(20),
    );
    fake.drop_watches();
    // The 20 failed watches, each followed by a new list, then a watch that holds.
    eventually("20 watches refused, then one accepted", || {
        watches(&fake) > before + 20
    })
    .await;
    let faults_ended = std::time::Instant::now();
    let client = Client::new(fake.clone(), "default");
    let foos: kube::Api<Foo> = kube::Api::default_namespaced(client);
    foos.patch(
        "gone",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    eventually("replicas 5", || {
        r.get("apps/v1", "Deployment", "gone-deploy").unwrap()["spec"]["replicas"] == 5
    })
    .await;
    let took = faults_ended.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "acted {took:?} after the faults ended"
    );
    r.stop().await;
}
