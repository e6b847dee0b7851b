//! The generated clients of imported kinds: with the CRDs installed from their owners'
//! manifests, objects round-trip through typed clients, apply configurations and informers,
//! and the server enforces the validation the markers kept. On the fake API server, or on the
//! cluster `KUBE_TEST_KUBECONFIG` names (the runtime's `TestEnv`): each test works in a
//! namespace of its own and removes it, and the cluster-scoped objects it labelled, when it
//! ends, whether it passed or not; the CRDs stay installed, as after `kubectl apply`.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use fake_apiserver::TestEnv;
use futures::FutureExt;
use imported_apis::apis::certs::v1::certificate::{
    CertificateSpecIssuerRef, CertificateSpecPrivateKey, CertificateSpecPrivateKeyAlgorithm,
    CertificateStatusConditionsStatus,
};
use imported_apis::apis::certs::v1::{Certificate, CertificateSpec};
use imported_apis::apis::platform::v1::tenant::{TenantSpecOwners, TenantSpecOwnersKind};
use imported_apis::apis::platform::v1::{Tenant, TenantFields, TenantSpec};
use imported_apis::generated::certs::v1::{
    CertificateApplyConfiguration, CertificateSpecApplyConfiguration,
    CertificateSpecPrivateKeyApplyConfiguration, CertificateStatusApplyConfiguration,
    CertificateStatusConditionsApplyConfiguration, extract_certificate_status,
};
use imported_apis::generated::{Clientset, InformerFactoryExt};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::Selector;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{FieldManager, SharedInformerFactory};
use serde_json::json;

/// The label on the cluster-scoped objects a test creates: its namespace's name.
const TEST_LABEL: &str = "imported-apis.example.com/test";

/// Runs `body` with a client and a fresh namespace, every imported CRD installed from its
/// original manifest, then cleans up (see the module's doc).
async fn case<F, Fut>(body: F)
where
    F: FnOnce(Client, String) -> Fut,
    Fut: Future<Output = ()>,
{
    let env = TestEnv::start().await.expect("a test environment");
    // The imported kinds are consumed: their CRDs are their owners', installed from the
    // manifests they were imported from.
    env.apply_manifests(concat!(env!("CARGO_MANIFEST_DIR"), "/crds"))
        .await
        .unwrap_or_else(|e| panic!("the API server refused the imported CRDs: {e}"));
    let (client, ns) = (env.client(), env.namespace().to_owned());
    let outcome = AssertUnwindSafe(body(client.clone(), ns.clone()))
        .catch_unwind()
        .await;
    let tenants: Api<Tenant> = Api::all(client);
    let ours = ListParams::default().labels(&format!("{TEST_LABEL}={ns}"));
    let removed = tenants
        .delete_collection(&DeleteParams::default(), &ours)
        .await
        .map(drop);
    let cleaned = env.cleanup().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    removed.expect("deleting the test's tenants");
    cleaned.expect("deleting the test's namespace");
}

fn certificate(name: &str, ns: &str) -> Certificate {
    let mut cert = Certificate::new(
        name,
        CertificateSpec {
            common_name: Some("example.com".into()),
            dns_names: Some(vec!["example.com".into(), "www.example.com".into()]),
            duration: None,
            is_ca: Some(false),
            issuer_ref: CertificateSpecIssuerRef {
                group: None,
                kind: Some("ClusterIssuer".into()),
                name: "letsencrypt".into(),
            },
            // Structs whose fields are all optional derive `Default`.
            private_key: Some(CertificateSpecPrivateKey {
                algorithm: Some(CertificateSpecPrivateKeyAlgorithm::ECDSA),
                size: Some(256),
                ..Default::default()
            }),
            secret_name: format!("{name}-tls"),
            usages: None,
        },
    );
    cert.metadata.namespace = Some(ns.into());
    cert
}

#[tokio::test]
async fn typed_clients_of_imported_kinds_create_read_and_apply_status() {
    case(typed_clients_create_read_and_apply_status).await;
}

async fn typed_clients_create_read_and_apply_status(client: Client, ns: String) {
    let clients = Clientset::new(client, FieldManager::new("cert-controller").force());
    let certs = clients.certs_v1().certificates(&ns);
    let created = certs
        .create(&certificate("web", &ns), &PostParams::default())
        .await
        .expect("create");
    // The server filled the default the marker kept.
    assert_eq!(created.spec.duration.as_deref(), Some("2160h"));
    assert_eq!(
        certs.get("web").await.expect("get").spec.issuer_ref.name,
        "letsencrypt"
    );

    let condition = CertificateStatusConditionsApplyConfiguration::default()
        .with_type("Ready".to_owned())
        .with_status(CertificateStatusConditionsStatus::True)
        .with_reason("Issued".to_owned());
    let status = CertificateStatusApplyConfiguration::default().with_conditions([condition]);
    let applied = certs
        .apply_status(&CertificateApplyConfiguration::new("web", &ns).with_status(status))
        .await
        .expect("apply status");
    let conditions = applied
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(conditions.len(), 1);
    assert_eq!(
        conditions[0].status,
        CertificateStatusConditionsStatus::True
    );

    let owned = extract_certificate_status(&certs.get("web").await.unwrap(), "cert-controller")
        .expect("extract");
    let owned = serde_json::to_value(owned).unwrap();
    assert_eq!(owned["status"]["conditions"][0]["reason"], "Issued");

    // A struct of optional fields is its own apply configuration: built, written and
    // applied as one, it carries only what was set.
    let key = CertificateSpecPrivateKeyApplyConfiguration::default().with_size(384);
    assert_eq!(serde_json::to_value(&key).unwrap(), json!({"size": 384}));
    let applied = certs
        .apply(
            &CertificateApplyConfiguration::new("web", &ns)
                .with_spec(CertificateSpecApplyConfiguration::default().with_private_key(key)),
        )
        .await
        .expect("apply spec");
    let private_key = applied.spec.private_key.expect("privateKey");
    assert_eq!(private_key.size, Some(384));
    // What the create set and the apply left out stays.
    assert_eq!(
        private_key.algorithm,
        Some(CertificateSpecPrivateKeyAlgorithm::ECDSA)
    );
}

#[tokio::test]
async fn the_server_enforces_the_validation_the_markers_kept() {
    case(the_markers_validation_is_enforced).await;
}

async fn the_markers_validation_is_enforced(client: Client, ns: String) {
    let clients = Clientset::new(client, FieldManager::new("test"));
    let certs = clients.certs_v1().certificates(&ns);
    // `secretName` has `+kubebuilder:validation:MinLength=1`.
    let mut bad = certificate("bad", &ns);
    bad.spec.secret_name = String::new();
    let err = certs
        .create(&bad, &PostParams::default())
        .await
        .expect_err("an empty secretName is refused");
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains("spec.secretName"),
        "{}",
        status.message
    );
    // `size` has `+kubebuilder:validation:Minimum=256`.
    let mut small = certificate("small", &ns);
    small.spec.private_key.as_mut().unwrap().size = Some(128);
    assert!(certs.create(&small, &PostParams::default()).await.is_err());
}

#[tokio::test]
async fn cluster_scoped_imported_kinds_have_cluster_clients_and_informers() {
    case(cluster_clients_and_informers).await;
}

async fn cluster_clients_and_informers(client: Client, ns: String) {
    let clients = Clientset::new(client.clone(), FieldManager::new("test"));
    let tenants = clients.platform_v1().tenants();
    // Cluster-scoped names are the cluster's to share: this test's carry its namespace.
    let names = [format!("{ns}-team-a"), format!("{ns}-team-b")];
    for name in &names {
        // The schema does not require `spec`: its properties sit at the root (`no_spec`).
        let spec = TenantSpec {
            annotations: None,
            network_policy: Some("deny-all".into()),
            owners: vec![TenantSpecOwners {
                kind: TenantSpecOwnersKind::Group,
                name: format!("{name}-admins"),
            }],
            quotas: None,
            x_forwarded_for: Some(true),
        };
        let mut tenant = Tenant::new(name, TenantFields { spec: Some(spec) });
        tenant.metadata.labels = Some([(TEST_LABEL.to_owned(), ns.clone())].into());
        tenants
            .create(&tenant, &PostParams::default())
            .await
            .expect("create");
    }
    // JSON names that are not Rust names survive the round trip.
    let raw: Api<kube::api::DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::erase::<Tenant>(&()),
    );
    let a = raw.get(&names[0]).await.unwrap();
    assert_eq!(a.data["spec"]["network-policy"], "deny-all");
    assert_eq!(a.data["spec"]["X-Forwarded-For"], true);

    let factory = SharedInformerFactory::new(client);
    let informer = factory.platform().v1().tenants();
    factory.start();
    assert!(
        factory
            .wait_for_cache_sync(Duration::from_secs(30))
            .await
            .values()
            .all(|s| *s)
    );
    let ours: Selector = [(TEST_LABEL.to_owned(), ns.clone())].into_iter().collect();
    let mut cached: Vec<String> = informer
        .lister()
        .list(&ours)
        .iter()
        .map(|t| t.name_any())
        .collect();
    cached.sort();
    assert_eq!(cached, names);
    let listed = tenants
        .list(&ListParams::default().labels(&format!("{TEST_LABEL}={ns}")))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 2);
    factory.shutdown().await;
}

#[tokio::test]
async fn every_served_version_of_a_multi_version_kind_has_a_client() {
    case(every_served_version_has_a_client).await;
}

async fn every_served_version_has_a_client(client: Client, ns: String) {
    let clients = Clientset::new(client, FieldManager::new("test"));
    let v1 = clients.shop_v1().widgets(&ns);
    let mut widget = imported_apis::apis::shop::v1::Widget::new(
        "w",
        imported_apis::apis::shop::v1::WidgetSpec {
            color: imported_apis::apis::shop::v1::widget::WidgetSpecColor::Blue,
            price: Some(9.99),
            ratio: None,
            replicas: Some(2),
            weight: None,
        },
    );
    widget.metadata.namespace = Some(ns.clone());
    v1.create(&widget, &PostParams::default())
        .await
        .expect("create v1");
    // The same object read through the deprecated, still served v1beta1.
    let beta = clients.shop_v1beta1().widgets(&ns);
    let read = beta.get("w").await.expect("get v1beta1");
    assert_eq!(read.metadata.name.as_deref(), Some("w"));
    // Scale subresource from `#[kube(scale(...))]`.
    let scale = v1.get_scale("w").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
}
