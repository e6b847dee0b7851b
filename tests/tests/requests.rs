//! Request shapes of the generated clients: method, path, query and body, through the real
//! `kube::Client` over a recording transport (no cluster).

use std::sync::{Arc, Mutex};

use codegen_tests::{
    Cluster, ClusterClient, Foo, FooApplyConfiguration, FooClient, FooSpec,
    FooSpecApplyConfiguration, FooStatus, FooStatusApplyConfiguration,
};
use http::{Request, Response};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kube::client::Body;
use kube_codegen_runtime::FieldManager;
use kube_codegen_runtime::client::scope::{AllNamespaces, Namespaced};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: String,
    content_type: Option<String>,
    body: Option<Value>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// A client whose transport records each request and answers with a plausible object.
fn recording_client() -> (kube::Client, Log) {
    let log: Log = Arc::default();
    let seen = log.clone();
    let service = tower::service_fn(move |req: Request<Body>| {
        let seen = seen.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = body.collect_bytes().await?;
            let path = parts.uri.path().to_owned();
            let method = parts.method.to_string();
            seen.lock().unwrap().push(Seen {
                method: method.clone(),
                path: path.clone(),
                query: parts.uri.query().unwrap_or("").to_owned(),
                content_type: parts
                    .headers
                    .get("content-type")
                    .map(|v| v.to_str().unwrap().to_owned()),
                body: serde_json::from_slice(&bytes).ok(),
            });
            Ok::<_, kube::Error>(Response::new(Body::from(answer(&method, &path))))
        }
    });
    (kube::Client::new(service, "default"), log)
}

/// A response body that deserializes for whatever the request asked for.
fn answer(method: &str, path: &str) -> Vec<u8> {
    let last = path.rsplit('/').next().unwrap_or("");
    let value = if path.ends_with("/scale") {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "f"}, "spec": {"replicas": 3}})
    } else if path.ends_with("/summary") {
        json!({"apiVersion": "v1", "kind": "Status", "status": "Success", "message": "ok"})
    } else if method == "DELETE" {
        json!({"apiVersion": "v1", "kind": "Status", "status": "Success"})
    } else if method == "GET" && (last == "foos" || last == "clusters") {
        json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "7"}, "items": []})
    } else if path.contains("/clusters") {
        json!({"apiVersion": "example.com/v1", "kind": "Cluster", "metadata": {"name": "c1"}, "spec": {"region": "eu"}})
    } else {
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": "f", "namespace": "ns1"},
            "spec": {"deploymentName": "d", "replicas": 1}
        })
    };
    serde_json::to_vec(&value).unwrap()
}

fn foo(name: &str) -> Foo {
    let mut foo = Foo::new(
        name,
        FooSpec {
            deployment_name: "d".into(),
            replicas: 2,
        },
    );
    foo.metadata.namespace = Some("ns1".into());
    foo
}

/// The query's parameters, ignoring their order and empty pieces.
fn params(query: &str) -> std::collections::BTreeSet<&str> {
    query.split('&').filter(|p| !p.is_empty()).collect()
}

fn take(log: &Log) -> Seen {
    let mut log = log.lock().unwrap();
    assert_eq!(log.len(), 1, "expected exactly one request, saw {log:?}");
    log.remove(0)
}

const FOOS: &str = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns1/foos";

#[tokio::test]
async fn namespaced_verbs_hit_the_namespace() {
    let (client, log) = recording_client();
    let foos: FooClient<Namespaced> =
        FooClient::new(client, "ns1", FieldManager::new("foo-controller"));
    let pp = PostParams::default();

    foos.create(&foo("f"), &pp).await.unwrap();
    let seen = take(&log);
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", FOOS));
    assert_eq!(
        seen.body.unwrap()["spec"],
        json!({"deploymentName": "d", "replicas": 2})
    );

    foos.update(&foo("f"), &pp).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PUT", &*format!("{FOOS}/f"))
    );

    foos.update_status(&foo("f"), &pp).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PUT", &*format!("{FOOS}/f/status"))
    );

    foos.get("f").await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", &*format!("{FOOS}/f"))
    );

    assert!(foos.get_opt("f").await.unwrap().is_some());
    assert_eq!(take(&log).path, format!("{FOOS}/f"));

    foos.delete("f", &DeleteParams::foreground()).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("DELETE", &*format!("{FOOS}/f"))
    );
    assert_eq!(seen.body.unwrap()["propagationPolicy"], "Foreground");

    foos.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("app=x"),
    )
    .await
    .unwrap();
    let seen = take(&log);
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("DELETE", FOOS));
    assert_eq!(params(&seen.query), params("labelSelector=app%3Dx"));

    foos.list(&ListParams::default().labels("app=x").limit(5))
        .await
        .unwrap();
    let seen = take(&log);
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", FOOS));
    assert_eq!(params(&seen.query), params("labelSelector=app%3Dx&limit=5"));

    let patch = Patch::Merge(json!({"spec": {"replicas": 3}}));
    foos.patch("f", &PatchParams::default(), &patch)
        .await
        .unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f"))
    );
    assert_eq!(
        seen.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(seen.body.unwrap(), json!({"spec": {"replicas": 3}}));
}

#[tokio::test]
async fn watch_streams_from_a_resource_version() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("m"));
    // The recorder answers with one object rather than a watch stream; only the request matters.
    let _ = foos.watch(&WatchParams::default().timeout(30), "5").await;
    let seen = take(&log);
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", FOOS));
    let query = params(&seen.query);
    for expected in ["watch=true", "resourceVersion=5", "timeoutSeconds=30"] {
        assert!(
            query.contains(expected),
            "{expected} missing from {query:?}"
        );
    }
}

#[tokio::test]
async fn apply_sends_exactly_the_fields_the_configuration_sets() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("foo-controller"));
    let config = FooApplyConfiguration::new("f", "ns1")
        .with_labels([("app", "web")])
        .with_spec(FooSpecApplyConfiguration::default().with_replicas(3));
    foos.apply(&config).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f"))
    );
    assert_eq!(
        seen.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(params(&seen.query), params("fieldManager=foo-controller"));
    // No `deploymentName`, no status, no empty collections: only what was set.
    assert_eq!(
        seen.body.unwrap(),
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "f", "namespace": "ns1", "labels": {"app": "web"}},
            "spec": {"replicas": 3}
        })
    );

    // A forcing manager adds `force=true`; a configuration built from `Default` gets the
    // kind's apiVersion and kind.
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("foo-controller").force());
    let bare = FooApplyConfiguration {
        metadata: Some(kube::api::ObjectMeta {
            name: Some("f".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    foos.apply(&bare).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        params(&seen.query),
        params("fieldManager=foo-controller&force=true")
    );
    assert_eq!(
        seen.body.unwrap(),
        json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "f"}})
    );
}

#[tokio::test]
async fn apply_status_sends_the_status_configuration_to_the_status_subresource() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("foo-controller").force());
    let config = FooApplyConfiguration::new("f", "ns1")
        .with_status(FooStatusApplyConfiguration::default().with_available_replicas(0));
    foos.apply_status(&config).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f/status"))
    );
    assert_eq!(
        seen.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        params(&seen.query),
        params("fieldManager=foo-controller&force=true")
    );
    // A zero that was set is sent: set and unset differ, unlike in the typed status.
    assert_eq!(
        seen.body.unwrap(),
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "f", "namespace": "ns1"},
            "status": {"availableReplicas": 0}
        })
    );
}

#[tokio::test]
async fn apply_object_uses_the_field_manager_and_drops_managed_fields() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("foo-controller").force());
    let mut obj = foo("f");
    obj.metadata.managed_fields = Some(vec![Default::default()]);

    foos.apply_object(&obj).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f"))
    );
    assert_eq!(
        seen.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        params(&seen.query),
        params("fieldManager=foo-controller&force=true")
    );
    let body = seen.body.unwrap();
    assert_eq!(body["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(body["kind"], "Foo");
    assert!(body["metadata"].get("managedFields").is_none(), "{body}");
}

#[tokio::test]
async fn apply_status_object_sends_only_the_status() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("foo-controller"));
    foos.apply_status_object(
        "f",
        &FooStatus {
            available_replicas: 2,
        },
    )
    .await
    .unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f/status"))
    );
    assert_eq!(params(&seen.query), params("fieldManager=foo-controller"));
    assert_eq!(
        seen.body.unwrap(),
        json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "Foo",
            "metadata": {"name": "f"},
            "status": {"availableReplicas": 2}
        })
    );
}

#[tokio::test]
async fn scale_methods_use_the_scale_subresource() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("m"));
    let scale = foos.get_scale("f").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", &*format!("{FOOS}/f/scale"))
    );

    let patch = Patch::Merge(json!({"spec": {"replicas": 4}}));
    foos.patch_scale("f", &PatchParams::default(), &patch)
        .await
        .unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("PATCH", &*format!("{FOOS}/f/scale"))
    );
}

#[tokio::test]
async fn all_namespaces_lists_without_a_namespace() {
    let (client, log) = recording_client();
    let all: FooClient<AllNamespaces> = FooClient::all(client, FieldManager::new("m"));
    all.list(&ListParams::default()).await.unwrap();
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", "/apis/samplecontroller.k8s.io/v1alpha1/foos")
    );
}

#[tokio::test]
async fn cluster_scoped_paths_have_no_namespace() {
    let (client, log) = recording_client();
    let clusters = ClusterClient::new(client, FieldManager::new("m"));
    let c: Cluster = clusters.get("c1").await.unwrap();
    assert_eq!(c.spec.region, "eu");
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", "/apis/example.com/v1/clusters/c1")
    );

    clusters.list(&ListParams::default()).await.unwrap();
    assert_eq!(take(&log).path, "/apis/example.com/v1/clusters");
}

#[tokio::test]
async fn extension_methods_reach_their_subresource_with_their_own_types() {
    let (client, log) = recording_client();
    let clusters = ClusterClient::new(client, FieldManager::new("m"));
    let status = clusters.get_summary("c1").await.unwrap();
    assert_eq!(status.message.as_deref(), Some("ok"));
    let seen = take(&log);
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("GET", "/apis/example.com/v1/clusters/c1/summary")
    );
}

#[tokio::test]
async fn update_without_a_name_fails_before_sending() {
    let (client, log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("m"));
    let mut nameless = foo("f");
    nameless.metadata.name = None;
    let err = foos
        .update(&nameless, &PostParams::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("metadata.name"), "{err}");
    let err = foos.apply_object(&nameless).await.unwrap_err();
    assert!(err.to_string().contains("metadata.name"), "{err}");
    let err = foos
        .apply(&FooApplyConfiguration::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("metadata.name"), "{err}");
    assert!(log.lock().unwrap().is_empty(), "nothing may be sent");
}

#[test]
fn the_escape_hatch_is_the_kube_api_of_the_namespace() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let (client, _log) = recording_client();
    let foos = FooClient::new(client, "ns1", FieldManager::new("m"));
    assert_eq!(foos.api().resource_url(), FOOS);
    assert_eq!(foos.field_manager().name(), "m");
}
