//! The runtime's controller layer on the fake API server: each rule of the work queue as a
//! controller meets it (no key reconciled by two workers at once, backoff growing per key
//! and reset by a success, `requeue after`, timeouts, a 404 that is not a failure, draining
//! shutdown, the leader gate of warm standby), the restart scenario that shows the lane for
//! live changes (a new object among the first reconciled after a restart with 300 cached,
//! and last without the lane), and the metrics under controller-runtime's names.
//!
//! Times are asserted as orders and generous bounds, never as exact durations.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::controller::{Action, Backoff, Controller, ControllerOptions};
use kube_codegen_runtime::metrics::Metrics;
use support::wait_for;

fn configmap(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm
}

async fn create(client: &Client, name: &str) {
    Api::<ConfigMap>::namespaced(client.clone(), "a")
        .create(&PostParams::default(), &configmap(name))
        .await
        .unwrap();
}

/// What a test's reconcile saw: each call's object and when.
#[derive(Default)]
struct Calls(Mutex<Vec<(String, Instant)>>);

impl Calls {
    fn record(&self, name: &str) {
        self.0
            .lock()
            .unwrap()
            .push((name.to_owned(), Instant::now()));
    }
    fn of(&self, name: &str) -> Vec<Instant> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .collect()
    }
    fn names(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

#[derive(Debug)]
struct Failed;

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("failed on purpose")
    }
}

impl std::error::Error for Failed {}

type Reconcile = BoxFuture<'static, Result<Action, kube::Error>>;

/// Starts a controller of the ConfigMaps of namespace `a` with `options` and `reconcile`,
/// and returns the stop signal and the task.
fn start<F>(
    client: &Client,
    options: ControllerOptions,
    metrics: &Metrics,
    reconcile: F,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
    SharedInformerFactory,
)
where
    F: Fn(Arc<ConfigMap>, Arc<()>) -> Reconcile + Send + Sync + 'static,
{
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace("a")
        .build();
    let controller = Controller::new("configmaps", factory.informer::<ConfigMap>())
        .with_options(options)
        .with_metrics(metrics);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(reconcile, Arc::new(()), async move {
        let _ = stopped.await;
    }));
    factory.start();
    (stop, task, factory)
}

fn setup() -> (FakeApiServer, Client) {
    let fake = support::fake();
    let client = Client::new(fake.clone(), "a");
    (fake, client)
}

#[tokio::test]
async fn one_key_is_never_reconciled_by_two_workers_at_once() {
    let (_fake, client) = setup();
    for i in 0..4 {
        create(&client, &format!("cm{i}")).await;
    }
    let running: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let overlap = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let options = ControllerOptions {
        concurrency: 4,
        ..ControllerOptions::default()
    };
    let (r, o, c) = (running.clone(), overlap.clone(), calls.clone());
    let (stop, task, factory) = start(&client, options, &Metrics::new(), move |cm, _| {
        let (r, o, c) = (r.clone(), o.clone(), c.clone());
        async move {
            let name = cm.name_any();
            {
                let mut running = r.lock().unwrap();
                let n = running.entry(name.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    o.fetch_add(1, Ordering::SeqCst);
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            *r.lock().unwrap().get_mut(&name).unwrap() -= 1;
            c.fetch_add(1, Ordering::SeqCst);
            Ok(Action::Done)
        }
        .boxed()
    });
    // Many changes of the same objects while their reconciles run.
    let api = Api::<ConfigMap>::namespaced(client.clone(), "a");
    for round in 0..10 {
        for i in 0..4 {
            let mut cm = api.get(&format!("cm{i}")).await.unwrap();
            cm.data = Some([("round".to_owned(), round.to_string())].into());
            api.replace(&format!("cm{i}"), &PostParams::default(), &cm)
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    wait_for("the last changes reconciled", || {
        calls.load(Ordering::SeqCst) >= 8
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        overlap.load(Ordering::SeqCst),
        0,
        "no key ran twice at once"
    );
    // Changes that arrived while a key ran were folded into one more run, not 40.
    assert!(
        calls.load(Ordering::SeqCst) < 44,
        "{}",
        calls.load(Ordering::SeqCst)
    );
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

#[tokio::test]
async fn failures_back_off_exponentially_and_a_success_resets_the_backoff() {
    let (_fake, client) = setup();
    create(&client, "flaky").await;
    let calls = Arc::new(Calls::default());
    let metrics = Metrics::new();
    let options = ControllerOptions {
        backoff: Backoff {
            base: Duration::from_millis(40),
            max: Duration::from_secs(1),
            qps: 0.0,
            burst: 1,
        },
        ..ControllerOptions::default()
    };
    let c = calls.clone();
    let (stop, task, factory) = start(&client, options, &metrics, move |cm, _| {
        let c = c.clone();
        async move {
            c.record(&cm.name_any());
            // Fails four times, succeeds once, then fails again.
            let n = c.of("flaky").len();
            if n == 5 {
                Ok(Action::RequeueAfter(Duration::from_millis(10)))
            } else if n <= 8 {
                Err(kube::Error::Service(Box::new(Failed)))
            } else {
                Ok(Action::Done)
            }
        }
        .boxed()
    });
    wait_for("nine reconciles", || calls.of("flaky").len() >= 9).await;
    let times = calls.of("flaky");
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    // 40, 80, 160, 320 ms after each failure: each wait longer than the one before.
    for i in 0..3 {
        assert!(gaps[i + 1] > gaps[i], "growing: {gaps:?}");
    }
    assert!(gaps[3] >= Duration::from_millis(320), "{gaps:?}");
    // The success reset it: the failure after it waits the base delay again.
    assert!(gaps[5] < gaps[3], "reset after a success: {gaps:?}");
    assert!(gaps[6] > gaps[5], "growing again: {gaps:?}");
    assert_eq!(metrics.reconcile_errors("configmaps"), 7);
    assert_eq!(metrics.reconciles("configmaps", "requeue_after"), 1);
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

#[tokio::test]
async fn requeue_after_comes_back_and_a_timeout_is_an_error() {
    let (_fake, client) = setup();
    create(&client, "periodic").await;
    create(&client, "slow").await;
    let calls = Arc::new(Calls::default());
    let metrics = Metrics::new();
    let options = ControllerOptions {
        concurrency: 2,
        timeout: Some(Duration::from_millis(100)),
        backoff: Backoff {
            base: Duration::from_secs(30),
            ..Backoff::default()
        },
        ..ControllerOptions::default()
    };
    let c = calls.clone();
    let (stop, task, factory) = start(&client, options, &metrics, move |cm, _| {
        let c = c.clone();
        async move {
            c.record(&cm.name_any());
            if cm.name_any() == "slow" {
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
            Ok(Action::RequeueAfter(Duration::from_millis(300)))
        }
        .boxed()
    });
    wait_for("three periodic reconciles", || {
        calls.of("periodic").len() >= 3
    })
    .await;
    let times = calls.of("periodic");
    assert!(
        times[1] - times[0] >= Duration::from_millis(300),
        "{times:?}"
    );
    wait_for("the slow one timed out", || {
        metrics.reconcile_errors("configmaps") == 1
    })
    .await;
    // Cancelled after 100 ms, then backed off (30 s): not run again meanwhile.
    assert_eq!(calls.of("slow").len(), 1);
    let text = metrics.encode();
    assert!(
        text.contains(
            "controller_runtime_reconcile_total{controller=\"configmaps\",result=\"error\"} 1"
        ),
        "{text}"
    );
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

#[tokio::test]
async fn an_object_that_is_gone_is_not_a_failure() {
    let (_fake, client) = setup();
    create(&client, "gone").await;
    let metrics = Metrics::new();
    let calls = Arc::new(Calls::default());
    let c = calls.clone();
    let api = Api::<ConfigMap>::namespaced(client.clone(), "a");
    let (stop, task, factory) = start(
        &client,
        ControllerOptions::default(),
        &metrics,
        move |cm, _| {
            let (c, api) = (c.clone(), api.clone());
            async move {
                c.record(&cm.name_any());
                // What a reconcile meets when the object went meanwhile.
                api.get("not-there").await?;
                Ok(Action::Done)
            }
            .boxed()
        },
    );
    wait_for("reconciled", || {
        metrics.reconciles("configmaps", "success") == 1
    })
    .await;
    assert_eq!(metrics.reconcile_errors("configmaps"), 0);
    assert_eq!(calls.of("gone").len(), 1);
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

#[tokio::test]
async fn shutdown_lets_reconciles_in_flight_finish_and_takes_no_more() {
    let (_fake, client) = setup();
    for name in ["first", "second"] {
        create(&client, name).await;
    }
    let finished = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(Calls::default());
    let (f, s) = (finished.clone(), started.clone());
    let (stop, task, factory) = start(
        &client,
        ControllerOptions::default(),
        &Metrics::new(),
        move |cm, _| {
            let (f, s) = (f.clone(), s.clone());
            async move {
                s.record(&cm.name_any());
                tokio::time::sleep(Duration::from_millis(300)).await;
                f.fetch_add(1, Ordering::SeqCst);
                Ok(Action::Done)
            }
            .boxed()
        },
    );
    wait_for("a reconcile started", || !started.names().is_empty()).await;
    let _ = stop.send(());
    task.await.unwrap();
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the one in flight finished"
    );
    assert_eq!(started.names().len(), 1, "the waiting one was not started");
    factory.shutdown().await;
}

#[tokio::test]
async fn a_standby_fills_its_cache_and_reconciles_the_moment_it_leads() {
    let (fake, client) = setup();
    for i in 0..5 {
        create(&client, &format!("cm{i}")).await;
    }
    let (leading_tx, leading) = tokio::sync::watch::channel(false);
    let calls = Arc::new(Calls::default());
    let options = ControllerOptions {
        leading: Some(leading),
        ..ControllerOptions::default()
    };
    let c = calls.clone();
    let (stop, task, factory) = start(&client, options, &Metrics::new(), move |cm, _| {
        let c = c.clone();
        async move {
            c.record(&cm.name_any());
            Ok(Action::Done)
        }
        .boxed()
    });
    let synced = factory.wait_for_cache_sync(Duration::from_secs(10)).await;
    assert!(synced.values().all(|ok| *ok), "{synced:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(calls.names().is_empty(), "a standby does not reconcile");
    let lists_before = fake.actions().iter().filter(|a| a.verb == "list").count();
    leading_tx.send(true).unwrap();
    wait_for("every object reconciled", || calls.names().len() == 5).await;
    let lists_after = fake.actions().iter().filter(|a| a.verb == "list").count();
    assert_eq!(
        lists_before, lists_after,
        "from the warm cache, without listing again"
    );
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

/// The restart scenario: 300 objects cached by a restarted controller (each reconcile
/// takes a moment), and one created right after its caches synced. With the lane for live
/// changes it is among the first 10% reconciled; without, it waits behind all 300.
#[tokio::test]
async fn after_a_restart_a_new_object_goes_before_the_initial_list() {
    async fn position(live_first: bool) -> usize {
        let (_fake, client) = setup();
        for i in 0..300 {
            create(&client, &format!("old{i:03}")).await;
        }
        let calls = Arc::new(Calls::default());
        let options = ControllerOptions {
            live_first,
            ..ControllerOptions::default()
        };
        let c = calls.clone();
        let (stop, task, factory) = start(&client, options, &Metrics::new(), move |cm, _| {
            let c = c.clone();
            async move {
                c.record(&cm.name_any());
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok(Action::Done)
            }
            .boxed()
        });
        factory.wait_for_cache_sync(Duration::from_secs(10)).await;
        create(&client, "new").await;
        wait_for("every object reconciled", || calls.names().len() >= 301).await;
        let names = calls.names();
        let _ = stop.send(());
        task.await.unwrap();
        factory.shutdown().await;
        names.iter().position(|n| n == "new").unwrap()
    }
    let with_lane = position(true).await;
    assert!(with_lane < 30, "among the first 10%: {with_lane}");
    let without = position(false).await;
    assert_eq!(without, 300, "last without the lane");
}

#[tokio::test]
async fn metrics_carry_controller_runtime_names_and_labels() {
    let (fake, _) = setup();
    let metrics = Metrics::new();
    let counted = tower::ServiceBuilder::new()
        .layer(metrics.rest_client().layer())
        .service(fake.clone());
    let client = Client::new(counted, "a");
    create(&client, "cm").await;
    metrics.set_leader("sample-controller", true);
    let (stop, task, factory) = start(&client, ControllerOptions::default(), &metrics, |_, _| {
        async { Ok(Action::Done) }.boxed()
    });
    wait_for("reconciled", || {
        metrics.reconciles("configmaps", "success") == 1
    })
    .await;
    let text = metrics.encode();
    for line in [
        "controller_runtime_reconcile_total{controller=\"configmaps\",result=\"success\"} 1",
        "controller_runtime_max_concurrent_reconciles{controller=\"configmaps\"} 1",
        "controller_runtime_active_workers{controller=\"configmaps\"} 0",
        "controller_runtime_reconcile_time_seconds_count{controller=\"configmaps\"} 1",
        "workqueue_adds_total{name=\"configmaps\",controller=\"configmaps\"} 1",
        "workqueue_depth{name=\"configmaps\",controller=\"configmaps\"} 0",
        "workqueue_queue_duration_seconds_count{name=\"configmaps\",controller=\"configmaps\"} 1",
        "workqueue_work_duration_seconds_count{name=\"configmaps\",controller=\"configmaps\"} 1",
        "workqueue_unfinished_work_seconds{name=\"configmaps\",controller=\"configmaps\"} 0",
        "workqueue_longest_running_processor_seconds{name=\"configmaps\",controller=\"configmaps\"} 0",
        "leader_election_master_status{name=\"sample-controller\"} 1",
        "# TYPE controller_runtime_reconcile_errors counter",
        "# TYPE workqueue_retries counter",
        "# TYPE process_resident_memory_bytes gauge",
        "rest_client_requests_total{code=\"201\",method=\"POST\",host=\"\"} 1",
        "controller_runtime_reconcile_errors_total{controller=\"configmaps\"} 0",
        "controller_runtime_reconcile_total{controller=\"configmaps\",result=\"error\"} 0",
        "workqueue_retries_total{name=\"configmaps\",controller=\"configmaps\"} 0",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    let _ = stop.send(());
    task.await.unwrap();
    factory.shutdown().await;
}

#[tokio::test]
async fn a_finalizer_is_added_first_cleans_up_on_deletion_and_is_removed_last() {
    use kube_codegen_runtime::controller::finalizer::{Event, FinalizerError, finalize};
    let (_fake, client) = setup();
    create(&client, "guarded").await;
    let api = Api::<ConfigMap>::namespaced(client.clone(), "a");
    let events: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let run = |obj: ConfigMap| {
        let events = events.clone();
        let api = api.clone();
        async move {
            finalize(
                &api,
                "example.com/cleanup",
                Arc::new(obj),
                |event| async move {
                    events.lock().unwrap().push(match event {
                        Event::Apply(_) => "apply",
                        Event::Cleanup(_) => "cleanup",
                    });
                    Ok::<_, Failed>(Action::Done)
                },
            )
            .await
        }
    };
    let stale = api.get("guarded").await.unwrap();
    run(stale.clone()).await.unwrap();
    assert!(
        events.lock().unwrap().is_empty(),
        "adding the finalizer is all the first pass does"
    );
    let fresh = api.get("guarded").await.unwrap();
    assert_eq!(fresh.finalizers(), ["example.com/cleanup"]);
    run(fresh).await.unwrap();
    assert_eq!(*events.lock().unwrap(), ["apply"]);
    // A stale copy cannot write the finalizers: the server refuses the old resourceVersion.
    let mut stale = stale;
    stale.metadata.finalizers = None;
    match run(stale).await {
        Err(FinalizerError::Patch(kube::Error::Api(status))) => assert_eq!(status.code, 409),
        other => panic!("a conflict, not {other:?}"),
    }

    api.delete("guarded", &Default::default()).await.unwrap();
    let deleting = api.get("guarded").await.unwrap();
    assert!(
        deleting.metadata.deletion_timestamp.is_some(),
        "held by the finalizer"
    );
    run(deleting).await.unwrap();
    assert_eq!(*events.lock().unwrap(), ["apply", "cleanup"]);
    assert!(
        api.get_opt("guarded").await.unwrap().is_none(),
        "gone once the finalizer is removed"
    );
    assert!(matches!(
        finalize(&api, "cleanup", Arc::new(configmap("x")), |_| async {
            Ok::<_, Failed>(Action::Done)
        })
        .await,
        Err(FinalizerError::InvalidName(_))
    ));
}

#[tokio::test]
async fn a_status_that_says_nothing_new_is_not_written() {
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
    use kube_codegen_runtime::FieldManager;
    use kube_codegen_runtime::controller::status::apply_status_if_changed;
    let (fake, client) = setup();
    let api = Api::<Deployment>::namespaced(client.clone(), "a");
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }))
    .unwrap();
    let created = api
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let manager = FieldManager::new("status-test").force();
    let status = DeploymentStatus {
        observed_generation: Some(1),
        ..DeploymentStatus::default()
    };
    let written = apply_status_if_changed(&api, &created, &status, &manager)
        .await
        .unwrap()
        .expect("a new status is written");
    assert_eq!(
        written.status.as_ref().unwrap().observed_generation,
        Some(1)
    );
    fake.clear_actions();
    let again = apply_status_if_changed(&api, &written, &status, &manager)
        .await
        .unwrap();
    assert!(again.is_none(), "nothing new: not written");
    assert!(fake.actions().is_empty(), "no request at all");
}
