//! The webhook server of `kube-codegen-runtime` (feature `webhook`) over real TLS on
//! loopback: typed defaulting and validation, certificates replaced on disk, malformed and
//! oversized bodies, health, and shutdown; what it refuses (media type, review type, another
//! kind), and clients that stall or flood it. Timeouts under test are short and the bounds
//! waited for generous: the tests tell a closed connection from an open one, not how fast.

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

/// A directory of this test process under the temporary directory, made empty, and removed
/// when dropped (also when the test fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "kube-codegen-webhook-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A copy of the serving certificate `which` (`a` or `b`) in a fresh directory.
fn cert_dir(name: &str, which: &str) -> Scratch {
    let dir = Scratch::new(name);
    std::fs::create_dir_all(&*dir).unwrap();
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
    let dir = Scratch::new("empty");
    std::fs::create_dir_all(&*dir).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = hooks()
        .serve_on(listener, &*dir, std::future::pending())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tls.crt"), "{err}");
}

#[tokio::test]
async fn development_certificates_are_served_and_verify_against_their_ca() {
    let dir = Scratch::new("dev");
    let ca =
        kube_codegen_runtime::webhook::dev::certificate(&dir, &["127.0.0.1".to_owned()]).unwrap();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(hooks().serve_on(listener, dir.to_path_buf(), async {
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
    let mut knob_review: Value =
        serde_json::from_slice(&review("CREATE", Some(raw.clone()), None)).unwrap();
    knob_review["request"]["kind"]["kind"] = json!("Knob");
    let (code, body) = call(
        server.addr,
        "POST",
        "/knob",
        &serde_json::to_vec(&knob_review).unwrap(),
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

/// Deadlines short enough for tests; what is asserted is that connections close, within
/// bounds far longer than these.
fn impatient(server: WebhookServer) -> WebhookServer {
    server
        .handshake_timeout(Duration::from_millis(300))
        .header_timeout(Duration::from_millis(300))
        .body_timeout(Duration::from_millis(300))
        .idle_timeout(Duration::from_millis(300))
}

/// Far longer than any deadline under test.
const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_slowloris_head_is_closed_while_it_still_trickles() {
    let dir = cert_dir("slowloris", "a");
    let server = start(&dir, impatient(hooks())).await;
    let (_, tls) = https::connect(server.addr, &test_ca()).await.unwrap();
    let (mut reader, mut writer) = tokio::io::split(tls);
    // One byte every 50 ms of a head that never ends: 200 bytes would take 10 s.
    let trickle = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let head = format!(
            "POST {} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ",
            validate_path::<Foo>()
        );
        let bytes = head.into_bytes().into_iter().chain(std::iter::repeat(b'a'));
        for byte in bytes.take(200) {
            if writer.write_all(&[byte]).await.is_err() || writer.flush().await.is_err() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    });
    assert!(
        https::closed(&mut reader, WITHIN).await,
        "a head trickling past its deadline is closed"
    );
    if trickle.is_finished() {
        assert!(
            trickle.await.unwrap(),
            "closed before the whole head was sent"
        );
    } else {
        trickle.abort();
    }
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn idle_connections_are_closed_before_and_between_requests() {
    let dir = cert_dir("idle", "a");
    let server = start(&dir, impatient(hooks())).await;
    // A TCP connection that never starts TLS.
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    assert!(
        https::closed(&mut tcp, WITHIN).await,
        "no handshake: closed"
    );
    // A handshake and no request.
    let (_, mut tls) = https::connect(server.addr, &test_ca()).await.unwrap();
    assert!(https::closed(&mut tls, WITHIN).await, "no request: closed");
    // A request answered, then nothing.
    let (_, mut tls) = https::connect(server.addr, &test_ca()).await.unwrap();
    let body = review("CREATE", Some(foo("a", "web", 1)), None);
    let (code, _) = https::exchange(&mut tls, &validate_path::<Foo>(), &body)
        .await
        .expect("an answer");
    assert_eq!(code, 200);
    assert!(
        https::closed(&mut tls, WITHIN).await,
        "idle after a request: closed"
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_body_shorter_than_its_length_gets_408_and_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = cert_dir("short-body", "a");
    let server = start(&dir, impatient(hooks())).await;
    let (_, mut tls) = https::connect(server.addr, &test_ca()).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{{\"apiVersion\"",
        validate_path::<Foo>()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(WITHIN, tls.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "closed after the refusal");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_head_over_16_kib_gets_431() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = cert_dir("large-head", "a");
    let server = start(&dir, hooks()).await;
    let (_, mut tls) = https::connect(server.addr, &test_ca()).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-large: {}\r\n\r\n",
        validate_path::<Foo>(),
        "a".repeat(20 << 10)
    );
    // The server may close before it has read it all.
    let _ = tls.write_all(head.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WITHIN, tls.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn connections_over_the_limit_are_closed_while_admitted_ones_are_answered() {
    let dir = cert_dir("flood", "a");
    let server = start(&dir, hooks().max_connections(4)).await;
    let mut admitted = Vec::new();
    for _ in 0..4 {
        admitted.push(https::connect(server.addr, &test_ca()).await.unwrap().1);
    }
    // The flood: each one closed as soon as it is accepted, whatever it sends.
    for _ in 0..20 {
        let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        assert!(
            https::closed(&mut tcp, WITHIN).await,
            "over the limit: closed"
        );
    }
    assert!(
        https::connect(server.addr, &test_ca()).await.is_err(),
        "no handshake over the limit"
    );
    // Those admitted keep being answered, each several times.
    let body = review("CREATE", Some(foo("a", "web", 11)), None);
    for tls in &mut admitted {
        for _ in 0..3 {
            let (code, answer) = https::exchange(tls, &validate_path::<Foo>(), &body)
                .await
                .expect("an answer on an admitted connection");
            assert_eq!(code, 200);
            assert!(response(&answer).allowed);
        }
    }
    // Once they close, new connections are admitted again.
    drop(admitted);
    let mut readmitted = false;
    for _ in 0..100 {
        if https::connect(server.addr, &test_ca()).await.is_ok() {
            readmitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(readmitted, "slots are given back when connections close");
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_does_not_wait_for_partial_requests() {
    use tokio::io::AsyncWriteExt;
    let dir = cert_dir("shutdown-partial", "a");
    // The default deadlines (10 s): only the shutdown may close these.
    let server = start(&dir, hooks()).await;
    let (_, mut partial) = https::connect(server.addr, &test_ca()).await.unwrap();
    partial
        .write_all(b"POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-le")
        .await
        .unwrap();
    let (_, mut short_body) = https::connect(server.addr, &test_ca()).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{{",
        validate_path::<Foo>()
    );
    short_body.write_all(head.as_bytes()).await.unwrap();
    let _no_tls = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (_, _idle) = https::connect(server.addr, &test_ca()).await.unwrap();
    let _ = server.stop.send(());
    let done = tokio::time::timeout(Duration::from_secs(2), server.done).await;
    assert!(done.is_ok(), "serve returned within 2 s");
    done.unwrap().unwrap().unwrap();
}

/// Answers a create after the test lets it, saying when it started.
struct Held {
    started: tokio::sync::mpsc::Sender<()>,
    release: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Validator<Foo> for Held {
    async fn validate_create(&self, _: &Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        let _ = self.started.send(()).await;
        let _ = self.release.acquire().await;
        Err(Denial::new("answered after the stop"))
    }
}

#[tokio::test]
async fn shutdown_lets_a_review_being_answered_finish() {
    let dir = cert_dir("shutdown-inflight", "a");
    let (started, mut has_started) = tokio::sync::mpsc::channel(1);
    let release = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let held = Held {
        started,
        release: release.clone(),
    };
    let server = start(
        &dir,
        WebhookServer::new().validating::<Foo, _>(validate_path::<Foo>(), held),
    )
    .await;
    let addr = server.addr;
    let call = tokio::spawn(async move {
        call(
            addr,
            "POST",
            &validate_path::<Foo>(),
            &review("CREATE", Some(foo("a", "web", 1)), None),
        )
        .await
    });
    has_started.recv().await.unwrap();
    let _ = server.stop.send(());
    // Stopping: no new connection is accepted, the review in flight still is answered.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    release.add_permits(1);
    let (code, body) = call.await.unwrap();
    assert_eq!(code, 200);
    assert_eq!(response(&body).result.message, "answered after the stop");
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn other_media_types_and_review_types_are_refused() {
    let dir = cert_dir("refusals", "a");
    let server = start(&dir, hooks()).await;
    let path = validate_path::<Foo>();
    let valid = review("CREATE", Some(foo("a", "web", 1)), None);
    let as_type = |content_type: Option<&'static str>| {
        let (path, valid) = (path.clone(), valid.clone());
        async move { https::call_as(server.addr, &test_ca(), "POST", &path, content_type, &valid).await }
    };
    let (code, body) = as_type(Some("application/yaml")).await;
    assert_eq!(
        (code, String::from_utf8_lossy(&body).as_ref()),
        (
            415,
            "webhooks take Content-Type: application/json, not Content-Type `application/yaml`"
        )
    );
    assert_eq!(as_type(None).await.0, 415);
    assert_eq!(
        as_type(Some("application/json; charset=utf-8")).await.0,
        200
    );

    let retyped = |api_version: &str, kind: &str| {
        let mut review: Value = serde_json::from_slice(&valid).unwrap();
        review["apiVersion"] = json!(api_version);
        review["kind"] = json!(kind);
        serde_json::to_vec(&review).unwrap()
    };
    let (code, body) = call(
        server.addr,
        "POST",
        &path,
        &retyped("foo/v9", "AdmissionReview"),
    )
    .await;
    assert_eq!(
        (code, String::from_utf8_lossy(&body).as_ref()),
        (
            400,
            "expected apiVersion `admission.k8s.io/v1` kind `AdmissionReview`, got apiVersion `foo/v9` kind `AdmissionReview`"
        )
    );
    let conversion = retyped("admission.k8s.io/v1", "ConversionReview");
    assert_eq!(call(server.addr, "POST", &path, &conversion).await.0, 400);

    // A uid is echoed back: a long one is refused, not copied.
    let mut long_uid: Value = serde_json::from_slice(&valid).unwrap();
    long_uid["request"]["uid"] = json!("u".repeat(129));
    let (code, body) = call(
        server.addr,
        "POST",
        &path,
        &serde_json::to_vec(&long_uid).unwrap(),
    )
    .await;
    assert_eq!(
        (code, String::from_utf8_lossy(&body).as_ref()),
        (400, "the request's uid is 129 bytes, over 128")
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}

#[tokio::test]
async fn requests_for_another_kind_are_denied_before_the_handler() {
    let dir = cert_dir("other-kind", "a");
    let server = start(&dir, hooks()).await;
    // The request's kind is another.
    let mut other: Value =
        serde_json::from_slice(&review("CREATE", Some(foo("a", "", 1)), None)).unwrap();
    other["request"]["kind"] = json!({"group": "example.com", "version": "v9", "kind": "Bar"});
    let other = serde_json::to_vec(&other).unwrap();
    for path in [mutate_path::<Foo>(), validate_path::<Foo>()] {
        let (code, body) = call(server.addr, "POST", &path, &other).await;
        assert_eq!(code, 200, "a denial is a review");
        let answer = response(&body);
        assert!(!answer.allowed && answer.patch.is_none(), "{path}");
        assert_eq!(
            (answer.result.code, answer.result.reason.as_str()),
            (400, "BadRequest")
        );
        assert_eq!(
            answer.result.message,
            "this webhook admits samplecontroller.k8s.io/v1alpha1, Kind=Foo, not example.com/v9, Kind=Bar"
        );
    }
    // The request says Foo, its object is of another group: no patch for it either.
    let mut bar = foo("a", "", 1);
    bar["apiVersion"] = json!("example.com/v1alpha1");
    let (_, body) = call(
        server.addr,
        "POST",
        &mutate_path::<Foo>(),
        &review("CREATE", Some(bar), None),
    )
    .await;
    let answer = response(&body);
    assert!(!answer.allowed && answer.patch.is_none());
    assert_eq!(
        answer.result.message,
        "the object is example.com/v1alpha1, Kind=Foo: this webhook admits samplecontroller.k8s.io/v1alpha1, Kind=Foo"
    );
    // An old object of another kind, on an update.
    let mut old = foo("a", "web", 1);
    old["kind"] = json!("Bar");
    let (_, body) = call(
        server.addr,
        "POST",
        &validate_path::<Foo>(),
        &review("UPDATE", Some(foo("a", "web", 1)), Some(old)),
    )
    .await;
    assert_eq!(
        response(&body).result.message,
        "the old object is samplecontroller.k8s.io/v1alpha1, Kind=Bar: this webhook admits samplecontroller.k8s.io/v1alpha1, Kind=Foo"
    );
    let _ = server.stop.send(());
    server.done.await.unwrap().unwrap();
}
