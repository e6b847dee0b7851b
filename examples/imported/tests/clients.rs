//! The generated clients of imported kinds against the fake API server: the CRDs built from
//! the imported types are accepted, objects round-trip through typed clients, apply
//! configurations and informers, and the server enforces the validation the markers kept.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use imported_apis::apis::certs::v1::certificate::{
    CertificateSpecIssuerRef, CertificateSpecPrivateKey, CertificateSpecPrivateKeyAlgorithm,
    CertificateStatusConditionsStatus,
};
use imported_apis::apis::certs::v1::{Certificate, CertificateSpec};
use imported_apis::apis::platform::v1::tenant::{TenantSpecOwners, TenantSpecOwnersKind};
use imported_apis::apis::platform::v1::{Tenant, TenantFields, TenantSpec};
use imported_apis::generated::certs::v1::{
    CertificateApplyConfiguration, CertificateStatusApplyConfiguration,
    CertificateStatusConditionsApplyConfiguration, extract_certificate_status,
};
use imported_apis::generated::{Clientset, InformerFactoryExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, PostParams};
use kube::core::Selector;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::{FieldManager, SharedInformerFactory};

/// A fake API server with every imported CRD installed, as `crds()` builds them.
async fn server() -> (FakeApiServer, Client) {
    let fake = FakeApiServer::new();
    let client = Client::new(fake.clone(), "default");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in imported_apis::generated::crds().expect("valid CRDs") {
        let name = crd.metadata.name.clone().unwrap_or_default();
        crds.create(&PostParams::default(), &crd)
            .await
            .unwrap_or_else(|e| panic!("the API server refused the CRD `{name}`: {e}"));
    }
    (fake, client)
}

fn certificate(name: &str) -> Certificate {
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
    cert.metadata.namespace = Some("default".into());
    cert
}

#[tokio::test]
async fn typed_clients_of_imported_kinds_create_read_and_apply_status() {
    let (_fake, client) = server().await;
    let clients = Clientset::new(client, FieldManager::new("cert-controller").force());
    let certs = clients.certs_v1().certificates("default");
    let created = certs
        .create(&certificate("web"), &PostParams::default())
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
        .apply_status(&CertificateApplyConfiguration::new("web", "default").with_status(status))
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
}

#[tokio::test]
async fn the_server_enforces_the_validation_the_markers_kept() {
    let (_fake, client) = server().await;
    let clients = Clientset::new(client, FieldManager::new("test"));
    let certs = clients.certs_v1().certificates("default");
    // `secretName` has `+kubebuilder:validation:MinLength=1`.
    let mut bad = certificate("bad");
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
    let mut small = certificate("small");
    small.spec.private_key.as_mut().unwrap().size = Some(128);
    assert!(certs.create(&small, &PostParams::default()).await.is_err());
}

#[tokio::test]
async fn cluster_scoped_imported_kinds_have_cluster_clients_and_informers() {
    let (_fake, client) = server().await;
    let clients = Clientset::new(client.clone(), FieldManager::new("test"));
    let tenants = clients.platform_v1().tenants();
    for name in ["team-a", "team-b"] {
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
        let tenant = Tenant::new(name, TenantFields { spec: Some(spec) });
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
    let a = raw.get("team-a").await.unwrap();
    assert_eq!(a.data["spec"]["network-policy"], "deny-all");
    assert_eq!(a.data["spec"]["X-Forwarded-For"], true);

    let factory = SharedInformerFactory::new(client);
    let informer = factory.platform().v1().tenants();
    factory.start();
    assert!(
        factory
            .wait_for_cache_sync(Duration::from_secs(5))
            .await
            .values()
            .all(|s| *s)
    );
    let names: Vec<String> = informer
        .lister()
        .list(&Selector::default())
        .iter()
        .map(|t| t.name_any())
        .collect();
    assert_eq!(names, ["team-a", "team-b"]);
    assert_eq!(
        tenants
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        2
    );
    factory.shutdown().await;
}

#[tokio::test]
async fn every_served_version_of_a_multi_version_kind_has_a_client() {
    let (_fake, client) = server().await;
    let clients = Clientset::new(client, FieldManager::new("test"));
    let v1 = clients.shop_v1().widgets("default");
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
    widget.metadata.namespace = Some("default".into());
    v1.create(&widget, &PostParams::default())
        .await
        .expect("create v1");
    // The same object read through the deprecated, still served v1beta1.
    let beta = clients.shop_v1beta1().widgets("default");
    let read = beta.get("w").await.expect("get v1beta1");
    assert_eq!(read.metadata.name.as_deref(), Some("w"));
    // Scale subresource from `#[kube(scale(...))]`.
    let scale = v1.get_scale("w").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
}
