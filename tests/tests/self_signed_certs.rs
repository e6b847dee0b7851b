//! Self-managed webhook certificates (`kube_codegen_runtime::webhook::certs`) on the fake
//! API server, through the real `kube::Client`: the Secret is created, the CA bundle lands
//! in the webhook configurations and the CRD's conversion, short-lived certificates (and
//! their CA) are rotated and served without a restart, and of two managers only one writes.
//! Every wait polls with a bounded deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube_codegen_runtime::webhook::WebhookServer;
use kube_codegen_runtime::webhook::certs::{CertConfig, SelfSignedCerts, Synced};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

const NS: &str = "default";
const CRD: &str = "gizmos.certs.example.com";

fn api(client: &kube::Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, "v1", kind);
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

fn crds(client: &kube::Client) -> Api<DynamicObject> {
    let plural = "customresourcedefinitions";
    api(
        client,
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        plural,
    )
}

fn configurations(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    api(client, "admissionregistration.k8s.io", kind, &plural)
}

const KINDS: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The operator's manifests as config/default holds them: a CRD converting through the
/// webhook Service, and both webhook configurations, none with a caBundle yet.
async fn install(client: &kube::Client) {
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object",
                "x-kubernetes-preserve-unknown-fields": true}}})
    };
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {
            "group": "certs.example.com", "scope": "Namespaced",
            "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
            "versions": [version("v1", true), version("v2", false)],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": NS, "name": "gizmo-webhook",
                    "path": "/convert"}}}},
        },
    });
    let apply = PatchParams::apply("kubectl");
    crds(client)
        .patch(CRD, &apply, &Patch::Apply(&crd))
        .await
        .unwrap();
    for kind in KINDS {
        let hook = |name: &str| {
            json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": NS, "name": "gizmo-webhook", "path": "/x"}},
                "rules": [{"apiGroups": ["certs.example.com"], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["gizmos"]}]})
        };
        let object = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "gizmo-operator"},
            "webhooks": [hook("a.certs.example.com"), hook("b.certs.example.com")],
        });
        configurations(client, kind)
            .patch("gizmo-operator", &apply, &Patch::Apply(&object))
            .await
            .unwrap();
    }
}

fn config(secret: &str, validity: u64, ca_validity: u64) -> CertConfig {
    let mut config = CertConfig::new(secret, NS, "gizmo-webhook");
    config.hosts = vec!["127.0.0.1".into()];
    config.webhook_configurations = vec!["gizmo-operator".into()];
    config.crds = vec![CRD.into()];
    config.validity = Duration::from_secs(validity);
    config.ca_validity = Duration::from_secs(ca_validity);
    config.check_every = Duration::from_millis(200);
    config
}

/// Polls `check` every 50ms until it gives `Some`, for at most `secs` seconds.
async fn eventually<T, F: Future<Output = Option<T>>>(
    secs: u64,
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {secs}s: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn secret_data(client: &kube::Client, name: &str) -> Option<(String, String)> {
    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get_opt(name)
        .await
        .unwrap()?;
    let data = secret.data?;
    let text = |k: &str| String::from_utf8(data.get(k)?.0.clone()).ok();
    Some((text("ca.crt")?, text("tls.crt")?))
}

/// The caBundles the API server would use, decoded: each webhook's, and the CRD's.
async fn bundles(client: &kube::Client) -> Vec<String> {
    let decode = |v: &Value| {
        let text = v.as_str().unwrap_or_default();
        String::from_utf8(apiserver_rules::base64::base64_decode(text).unwrap_or_default()).unwrap()
    };
    let mut found = Vec::new();
    for kind in KINDS {
        let object = configurations(client, kind)
            .get("gizmo-operator")
            .await
            .unwrap();
        let object = serde_json::to_value(object).unwrap();
        for hook in object["webhooks"].as_array().unwrap() {
            found.push(decode(&hook["clientConfig"]["caBundle"]));
        }
    }
    let crd = serde_json::to_value(crds(client).get(CRD).await.unwrap()).unwrap();
    found.push(decode(
        &crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
    ));
    found
}

/// What a caller trusting `bundle` sees of the server at `addr` (as `hook.default.svc`):
/// the presented certificate's serial, notAfter and issuer; `Err` when it does not verify.
async fn presented(
    addr: std::net::SocketAddr,
    bundle: &str,
) -> Result<(String, i64, Vec<u8>), String> {
    let mut roots = rustls::RootCertStore::empty();
    for der in CertificateDer::pem_slice_iter(bundle.as_bytes()) {
        roots
            .add(der.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("gizmo-webhook.default.svc").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    let (_, cert) = x509_parser::parse_x509_certificate(&leaf).unwrap();
    Ok((
        cert.raw_serial_as_string(),
        cert.validity().not_after.timestamp(),
        cert.issuer().as_raw().to_vec(),
    ))
}

fn ca_subjects(bundle: &str) -> Vec<Vec<u8>> {
    CertificateDer::pem_slice_iter(bundle.as_bytes())
        .map(|der| {
            let der = der.unwrap();
            let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
            cert.subject().as_raw().to_vec()
        })
        .collect()
}

async fn serve(certs: &SelfSignedCerts) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = certs.served();
    tokio::spawn(WebhookServer::new().serve_with(listener, served, std::future::pending()));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_certificate_is_stored_injected_rotated_and_served_without_a_restart() {
    let fake = fake_apiserver::FakeApiServer::new();
    let client = kube::Client::new(fake, NS);
    install(&client).await;
    // A 4-second serving certificate under a 12-second CA: both rotate within the test.
    let certs = SelfSignedCerts::new(client.clone(), config("gizmo-cert", 4, 12)).unwrap();
    tokio::spawn(certs.clone().run(std::future::pending()));
    certs.ready(Duration::from_secs(20)).await.unwrap();

    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get("gizmo-cert")
        .await
        .unwrap();
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    let keys: Vec<&str> = secret
        .data
        .as_ref()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["ca.crt", "ca.key", "tls.crt", "tls.key"]);
    let (first_ca, _) = secret_data(&client, "gizmo-cert").await.unwrap();
    let first_ca_subject = ca_subjects(&first_ca).remove(0);

    // The CA bundle lands in every webhook of both configurations and in the conversion.
    eventually(
        20,
        "the caBundle in the configurations and the CRD",
        || async {
            let found = bundles(&client).await;
            (found.len() == 5
                && found
                    .iter()
                    .all(|b| ca_subjects(b).contains(&first_ca_subject)))
            .then_some(())
        },
    )
    .await;

    let addr = serve(&certs).await;
    let first = presented(addr, &first_ca).await.unwrap();
    assert_eq!(first.2, first_ca_subject);

    // The serving certificate is renewed (a new serial, a later notAfter) and served by the
    // same server, to a caller trusting the Secret's CA bundle of the moment.
    let renewed = eventually(30, "a renewed certificate served", || async {
        let (bundle, _) = secret_data(&client, "gizmo-cert").await?;
        let now = presented(addr, &bundle).await.ok()?;
        (now.0 != first.0 && now.1 > first.1).then_some(now)
    })
    .await;
    assert_ne!(renewed.0, first.0);

    // The CA rotates with an overlap: the new CA joins every caBundle beside the old one,
    // and the certificate served is always signed by a CA the caBundles hold.
    let mut saw_both = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    loop {
        // Read the bundles first, then connect: what is served must verify against them.
        let found = bundles(&client).await;
        let cas = ca_subjects(&found[0]);
        saw_both |= cas.len() == 2 && cas.contains(&first_ca_subject);
        let now = presented(addr, &found[0]).await.unwrap_or_else(|e| {
            panic!("the served certificate must verify against the caBundle: {e}")
        });
        if now.2 != first_ca_subject {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no certificate of a second CA served within 40s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        saw_both,
        "the old and the new CA were never in the caBundle together"
    );
}

#[tokio::test]
async fn only_the_leader_writes_and_a_second_writer_adopts_the_stored_secret() {
    let fake = fake_apiserver::FakeApiServer::new();
    let client = kube::Client::new(fake, NS);
    install(&client).await;

    // A follower alone writes nothing and serves nothing.
    let (_, not_leading) = tokio::sync::watch::channel(false);
    let mut follower_config = config("shared-cert", 3600, 36000);
    follower_config.field_manager = "follower".into();
    let follower = SelfSignedCerts::new(client.clone(), follower_config)
        .unwrap()
        .leader(not_leading.clone());
    assert_eq!(follower.sync().await.unwrap(), Synced::default());
    assert!(secret_data(&client, "shared-cert").await.is_none());
    let waited = follower
        .ready(Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(waited.to_string().contains("was not written"), "{waited}");

    // The leader writes; the follower serves the same certificate.
    let (_, leading) = tokio::sync::watch::channel(true);
    let leader = SelfSignedCerts::new(client.clone(), config("shared-cert", 3600, 36000))
        .unwrap()
        .leader(leading);
    assert_eq!(leader.sync().await.unwrap().written, Some("created"));
    let follower_synced = follower.sync().await.unwrap();
    assert!(follower_synced.reloaded && follower_synced.patched.is_empty());
    assert_eq!(
        leader.served().certificate(),
        follower.served().certificate()
    );
    let secret = Api::<Secret>::namespaced(client.clone(), NS)
        .get("shared-cert")
        .await
        .unwrap();
    let managers: Vec<_> = secret
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, ["shared-cert"], "only the leader wrote");

    // Two writers at once (a lease handed over mid-pass): each write carries what it read,
    // so one creates and the other adopts; both then serve the stored certificate.
    let a = SelfSignedCerts::new(client.clone(), config("raced-cert", 3600, 36000)).unwrap();
    let b = SelfSignedCerts::new(client.clone(), config("raced-cert", 3600, 36000)).unwrap();
    let (ra, rb) = tokio::join!(a.sync(), b.sync());
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let created = [&ra, &rb]
        .iter()
        .filter(|r| r.written == Some("created"))
        .count();
    assert_eq!(created, 1, "{ra:?} {rb:?}");
    for certs in [&a, &b] {
        let again = certs.sync().await.unwrap();
        assert_eq!(again.written, None, "{again:?}");
    }
    let (_, stored) = secret_data(&client, "raced-cert").await.unwrap();
    assert_eq!(a.served().certificate().as_deref(), Some(stored.as_str()));
    assert_eq!(b.served().certificate().as_deref(), Some(stored.as_str()));
}

/// A client of `fake` that, before sending the first request of `method` on Secrets,
/// lets `other` make a whole pass: another writer gets in between this one's read and its
/// write, every time the test runs.
fn interrupted_by(
    fake: &fake_apiserver::FakeApiServer,
    method: http::Method,
    other: SelfSignedCerts,
) -> kube::Client {
    let fake = fake.clone();
    let other = Arc::new(std::sync::Mutex::new(Some(other)));
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let (fake, other) = (fake.clone(), Arc::clone(&other));
        let method = method.clone();
        async move {
            let on_secrets = req.uri().path().contains("/secrets");
            let other = (on_secrets && req.method() == method)
                .then(|| other.lock().unwrap().take())
                .flatten();
            if let Some(other) = other {
                let synced = other.sync().await.unwrap();
                assert!(synced.written.is_some(), "{synced:?}");
            }
            tower::ServiceExt::oneshot(fake, req).await
        }
    });
    kube::Client::new(service, NS)
}

#[tokio::test]
async fn a_write_over_a_changed_secret_loses_and_the_next_pass_adopts() {
    let fake = fake_apiserver::FakeApiServer::new();
    let client = kube::Client::new(fake.clone(), NS);
    install(&client).await;

    // The create race: the other writer creates the Secret between this one's read (none)
    // and its create, which fails (AlreadyExists); the next pass adopts the stored one.
    let other = SelfSignedCerts::new(client.clone(), config("won-cert", 3, 3600)).unwrap();
    let this = SelfSignedCerts::new(
        interrupted_by(&fake, http::Method::POST, other.clone()),
        config("won-cert", 3, 3600),
    )
    .unwrap();
    let lost = this.sync().await.unwrap();
    assert!(lost.conflict && lost.written.is_none(), "{lost:?}");
    let adopted = this.sync().await.unwrap();
    assert_eq!(adopted.written, None, "{adopted:?}");
    let (_, stored) = secret_data(&client, "won-cert").await.unwrap();
    assert_eq!(
        this.served().certificate().as_deref(),
        Some(stored.as_str())
    );
    assert_eq!(other.served().certificate(), this.served().certificate());

    // The replace race: both see the 3-second certificate due; the other renews it between
    // this one's read and its replace, whose stale resourceVersion gets a 409.
    let other = SelfSignedCerts::new(client.clone(), config("stale-cert", 3, 3600)).unwrap();
    let this = SelfSignedCerts::new(
        interrupted_by(&fake, http::Method::PUT, other.clone()),
        config("stale-cert", 3, 3600),
    )
    .unwrap();
    assert_eq!(this.sync().await.unwrap().written, Some("created"));
    let first = secret_data(&client, "stale-cert").await.unwrap().1;
    // Due once a third of its 3.3 seconds remain (bounded: the lifetime is fixed).
    let due = eventually(10, "the certificate due", || async {
        let synced = this.sync().await.unwrap();
        (synced.written.is_some() || synced.conflict).then_some(synced)
    })
    .await;
    assert!(due.conflict && due.written.is_none(), "{due:?}");
    let renewed = secret_data(&client, "stale-cert").await.unwrap().1;
    assert_ne!(renewed, first, "the other writer renewed it");
    let adopted = this.sync().await.unwrap();
    assert_eq!(adopted.written, None, "{adopted:?}");
    assert_eq!(
        this.served().certificate().as_deref(),
        Some(renewed.as_str())
    );
}
