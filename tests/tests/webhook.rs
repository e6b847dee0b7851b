//! The webhook server of `kube-codegen-runtime` (feature `webhook`) over real TLS on
//! loopback: typed defaulting and validation, certificates replaced on disk, malformed and
//! oversized bodies, health, and shutdown.

mod https;

use std::path::{Path, PathBuf};
use std::time::Duration;

use codegen_tests::{Foo, FooSpec};
use kube::core::DynamicObject;
use kube::core::admission::AdmissionReview;
use kube_codegen_runtime::webhook::{
    Defaulter, Denial, Request, Validator, Warnings, WebhookServer, mutate_path, validate_path,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::{Value, json};
use tokio::net::TcpListener;

fn certs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/webhook-certs")
}

/// A copy of the serving certificate `which` (`a` or `b`) in a fresh directory.
fn cert_dir(name: &str, which: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kube-codegen-webhook-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    install(&dir, which);
    dir
}

fn install(dir: &Path, which: &str) {
    for f in ["tls.crt", "tls.key"] {
        std::fs::copy(certs().join(which).join(f), dir.join(f)).unwrap();
    }
}

/// The Foo webhooks of the sample's rules: an empty `deploymentName` becomes the Foo's name;
/// a name with `_` is refused; more than 10 replicas is allowed with a warning.
struct FooHooks;

impl Defaulter<Foo> for FooHooks {
    async fn default(&self, foo: &mut Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        if foo.spec.deployment_name.is_empty() {
            foo.spec.deployment_name = foo.metadata.name.clone().unwrap_or_default();
        }
        Ok(Warnings::new())
    }
}

impl Validator<Foo> for FooHooks {
    async fn validate_create(&self, foo: &Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        if foo.spec.deployment_name.contains('_') {
            return Err(Denial::new(format!(
                "spec.deploymentName `{}` is not a Deployment name",
                foo.spec.deployment_name
            )));
        }
        Ok(if foo.spec.replicas > 10 {
            vec!["more than 10 replicas".to_owned()]
        } else {
            Warnings::new()
        })
    }

    async fn validate_update(
        &self,
        old: &Foo,
        new: &Foo,
        _: &Request<'_>,
    ) -> Result<Warnings, Denial> {
        if old.spec.deployment_name != new.spec.deployment_name {
            return Err(Denial::invalid("spec.deploymentName is immutable"));
        }
        Ok(Warnings::new())
    }
}

struct Running {
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(dir: &Path, server: WebhookServer) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let dir = dir.to_owned();
    let done = tokio::spawn(async move {
        server
            .serve_on(listener, dir, async {
                let _ = stopped.await;
            })
            .await
    });
    Running { addr, stop, done }
}

fn hooks() -> WebhookServer {
    WebhookServer::new()
        .defaulting::<Foo, _>(mutate_path::<Foo>(), FooHooks)
        .validating::<Foo, _>(validate_path::<Foo>(), FooHooks)
}

/// The CA that signed the test certificates.
fn test_ca() -> Vec<u8> {
    std::fs::read(certs().join("ca.crt")).unwrap()
}

/// One HTTP/1.1 request over TLS, trusting the test CA: the status code and body.
async fn call(addr: std::net::SocketAddr, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    https::call(addr, &test_ca(), method, path, body).await
}

fn foo(name: &str, deployment: &str, replicas: i32) -> Value {
    let mut foo = Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.to_owned(),
            replicas,
        },
    );
    foo.metadata.namespace = Some("default".to_owned());
    serde_json::to_value(foo).unwrap()
}

fn review(operation: &str, object: Option<Value>, old: Option<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"},
            "resource": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "resource": "foos"},
            "name": "a",
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "admin"},
            "object": object,
            "oldObject": old,
            "dryRun": false
        }
    }))
    .unwrap()
}

fn response(body: &[u8]) -> kube::core::admission::AdmissionResponse {
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body).unwrap();
    review.response.expect("a response")
}

#[tokio::test]
async fn defaulting_answers_with_the_patch_of_what_changed() {
    let dir = cert_dir("default", "a");
    let server = start(&dir, hooks()).await;
    assert_eq!(
        mutate_path::<Foo>(),
        "/mutate-samplecontroller-k8s-io-v1alpha1-foo"
    );
    let (code, body) = call(
        server.addr,
        "POST",
        &mutate_path::<Foo>(),
        &review("CREATE", Some(foo("a", "", 1)), None),
    )
    .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    let answer = response(&body);
    assert!(answer.allowed);
    assert_eq!(answer.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    let patch: Value = serde_json::from_slice(&answer.patch.expect("a patch")).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "replace", "path": "/spec/deploymentName", "value": "a"}])
    );

    // Nothing to default: allowed, no patch.
    let (_, body) = call(
        server.addr,
        "POST",
        &mutate_path::<Foo>(),
        &review("CREATE", Some(foo("a", "web", 1)), None),
    )
    .await;
    let answer = response(&body);
    assert!(answer.allowed && answer.patch.is_none());
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn validation_refuses_with_its_message_and_warns() {
    let dir = cert_dir("validate", "a");
    let server = start(&dir, hooks()).await;
    let path = validate_path::<Foo>();
    let (_, body) = call(
        server.addr,
        "POST",
        &path,
        &review("CREATE", Some(foo("a", "no_good", 1)), None),
    )
    .await;
    let answer = response(&body);
    assert!(!answer.allowed);
    assert_eq!(
        answer.result.message,
        "spec.deploymentName `no_good` is not a Deployment name"
    );
    assert_eq!(answer.result.code, 403);

    let (_, body) = call(
        server.addr,
        "POST",
        &path,
        &review("CREATE", Some(foo("a", "web", 11)), None),
    )
    .await;
    let answer = response(&body);
    assert!(answer.allowed);
    assert_eq!(
        answer.warnings,
        Some(vec!["more than 10 replicas".to_owned()])
    );

    let update = review(
        "UPDATE",
        Some(foo("a", "other", 1)),
        Some(foo("a", "web", 1)),
    );
    let answer = response(&call(server.addr, "POST", &path, &update).await.1);
    assert!(!answer.allowed);
    assert_eq!(
        (answer.result.code, answer.result.reason.as_str()),
        (422, "Invalid")
    );

    // Deletes are allowed by default.
    let delete = review("DELETE", None, Some(foo("a", "web", 1)));
    assert!(response(&call(server.addr, "POST", &path, &delete).await.1).allowed);

    // An object of another shape is refused as invalid, not a crash.
    let odd = review(
        "CREATE",
        Some(
            json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "a"}, "spec": {"replicas": "many"}}),
        ),
        None,
    );
    let answer = response(&call(server.addr, "POST", &path, &odd).await.1);
    assert!(!answer.allowed);
    assert!(
        answer.result.message.contains("does not decode"),
        "{}",
        answer.result.message
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn malformed_oversized_unknown_and_health() {
    let dir = cert_dir("http", "a");
    let server = start(&dir, hooks().max_body(64 << 10)).await;
    let path = validate_path::<Foo>();
    assert_eq!(
        call(
            server.addr,
            "POST",
            &path,
            b"{\"kind\": \"AdmissionReview\"}"
        )
        .await
        .0,
        400
    );
    assert_eq!(call(server.addr, "POST", &path, b"not json").await.0, 400);
    assert_eq!(
        call(server.addr, "POST", &path, &vec![b' '; 65 << 10])
            .await
            .0,
        413
    );
    assert_eq!(
        call(server.addr, "POST", "/validate-nothing", b"{}")
            .await
            .0,
        404
    );
    assert_eq!(call(server.addr, "GET", &path, b"").await.0, 405);
    let (code, body) = call(server.addr, "GET", "/healthz", b"").await;
    assert_eq!((code, body.as_slice()), (200, b"ok".as_slice()));
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn certificates_replaced_on_disk_are_served_without_a_restart() {
    let dir = cert_dir("reload", "a");
    let server = start(&dir, hooks()).await;
    let pem =
        |which: &str| CertificateDer::from_pem_file(certs().join(which).join("tls.crt")).unwrap();
    assert_eq!(
        https::connect(server.addr, &test_ca()).await.unwrap().0,
        pem("a")
    );
    // A renewal: new files in place (the modification time may not move within a second,
    // the contents and length do).
    tokio::time::sleep(Duration::from_millis(20)).await;
    install(&dir, "b");
    assert_eq!(
        https::connect(server.addr, &test_ca()).await.unwrap().0,
        pem("b")
    );
    // Half-written files keep the last good certificate in use.
    std::fs::write(dir.join("tls.key"), b"-----BEGIN PRIVATE KEY-----\n").unwrap();
    assert_eq!(
        https::connect(server.addr, &test_ca()).await.unwrap().0,
        pem("b")
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_directory_without_a_certificate_is_an_error_not_a_panic() {
    let dir =
        std::env::temp_dir().join(format!("kube-codegen-webhook-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = hooks()
        .serve_on(listener, &dir, std::future::pending())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tls.crt"), "{err}");
}

#[tokio::test]
async fn development_certificates_are_served_and_verify_against_their_ca() {
    let dir = std::env::temp_dir().join(format!("kube-codegen-webhook-dev-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ca =
        kube_codegen_runtime::webhook::dev::certificate(&dir, &["127.0.0.1".to_owned()]).unwrap();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(hooks().serve_on(listener, dir.clone(), async {
        let _ = stopped.await;
    }));
    // A client that trusts only the CA just made.
    let tls = https::connect(addr, ca.as_bytes()).await;
    assert!(tls.is_ok(), "{:?}", tls.err());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("tls.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the key is readable by its owner only");
    }
    let _ = stop.send(());
    done.await.unwrap().unwrap();
}

/// A kind whose `Option` serde writes as `null`: the raw object the API server holds lacks
/// the field, the typed one has it.
#[derive(
    kube::CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Knob",
    namespaced
)]
pub struct KnobSpec {
    paused: Option<bool>,
    size: i32,
}

struct KnobDefaults;

impl Defaulter<Knob> for KnobDefaults {
    async fn default(&self, knob: &mut Knob, _: &Request<'_>) -> Result<Warnings, Denial> {
        knob.spec.paused.get_or_insert(false);
        Ok(Warnings::new())
    }
}

#[tokio::test]
async fn the_patch_applies_to_the_object_the_api_server_holds() {
    let dir = cert_dir("raw", "a");
    let server = start(
        &dir,
        WebhookServer::new().defaulting::<Knob, _>("/knob", KnobDefaults),
    )
    .await;
    // No `paused`, and a field the Rust type does not know.
    let raw = json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Knob",
        "metadata": {"name": "a", "namespace": "default"}, "spec": {"size": 1, "extra": "kept"}});
    let (code, body) = call(
        server.addr,
        "POST",
        "/knob",
        &review("CREATE", Some(raw.clone()), None),
    )
    .await;
    assert_eq!(code, 200);
    let patch: Value = serde_json::from_slice(&response(&body).patch.expect("a patch")).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/spec/paused", "value": false}])
    );
    // Applied to the raw object, it gives what the defaulter meant and keeps the rest.
    let mut applied = raw;
    let ops: json_patch::Patch = serde_json::from_value(patch).unwrap();
    json_patch::patch(&mut applied, &ops).unwrap();
    assert_eq!(
        applied["spec"],
        json!({"size": 1, "extra": "kept", "paused": false})
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}
