//! Foo's admission webhooks, on the in-memory API server's caches: an empty
//! `deploymentName` is defaulted to the Foo's name; a `deploymentName` that names a
//! Deployment this Foo does not control is refused; Foo v1beta1 converts to and from
//! v1alpha1 losslessly, through the conversion webhook the controller serves. (The server
//! they run in, and TLS, are tested in `tests/tests/webhook.rs`; a real kube-apiserver
//! calling them is in the book, docs/src/tutorial/webhooks.md.)

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionReview};
use kube_codegen_runtime::SharedInformerFactory;
use kube_codegen_runtime::webhook::{Defaulter, Request, Validator};
use sample_controller::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::apis::samplecontroller::v1beta1::{self, FooDeployment};
use sample_controller::generated::InformerFactoryExt;
use sample_controller::webhook::FooWebhook;
use serde_json::json;

fn request(operation: &str) -> AdmissionRequest<DynamicObject> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1",
            "kind": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "kind": "Foo"},
            "resource": {"group": "samplecontroller.k8s.io", "version": "v1alpha1", "resource": "foos"},
            "namespace": "default",
            "operation": operation,
            "userInfo": {},
        }
    }))
    .unwrap();
    review.try_into().unwrap()
}

/// A Deployment named `taken` that no Foo controls.
async fn create_taken(client: &kube::Client) {
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "taken", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "taken"}},
            "template": {
                "metadata": {"labels": {"app": "taken"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}
            }
        }
    }))
    .unwrap();
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
}

fn v1beta1_foo(name: &str, deployment: &str, replicas: i32) -> v1beta1::Foo {
    v1beta1::Foo::new(
        name,
        v1beta1::FooSpec {
            deployment: FooDeployment {
                name: deployment.into(),
                replicas: Some(replicas),
            },
            note: None,
        },
    )
}

fn foo(name: &str, deployment: &str) -> Foo {
    Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.to_owned(),
            replicas: Some(1),
        },
    )
}

#[tokio::test]
async fn foo_webhooks_default_the_name_and_refuse_a_deployment_they_do_not_own() {
    let server = FakeApiServer::new();
    let client = kube::Client::new(server.clone(), "default");
    create_taken(&client).await;
    let factory = SharedInformerFactory::builder(client).build();
    let deployments = factory.apps().v1().deployments();
    factory.start();
    assert!(
        factory
            .wait_for_cache_sync(Duration::from_secs(10))
            .await
            .values()
            .all(|ok| *ok)
    );
    let webhook = FooWebhook {
        deployments: deployments.lister(),
    };
    let create = request("CREATE");
    let req = Request { inner: &create };

    let mut defaulted = foo("web", "");
    webhook.default(&mut defaulted, &req).await.unwrap();
    assert_eq!(defaulted.spec.deployment_name, "web");
    let mut kept = foo("web", "other");
    webhook.default(&mut kept, &req).await.unwrap();
    assert_eq!(kept.spec.deployment_name, "other");

    let denial = webhook
        .validate_create(&foo("thief", "taken"), &req)
        .await
        .unwrap_err();
    assert_eq!(
        denial.message,
        "spec.deploymentName: Deployment \"taken\" already exists and is not managed by Foo \"thief\""
    );
    assert_eq!(denial.code, 403);
    assert!(
        webhook
            .validate_create(&foo("web", "free"), &req)
            .await
            .is_ok()
    );

    // An update that keeps the name is not checked again; one that moves to `taken` is.
    let update = request("UPDATE");
    let req = Request { inner: &update };
    let old = foo("thief", "taken");
    assert!(webhook.validate_update(&old, &old, &req).await.is_ok());
    assert!(
        webhook
            .validate_update(&foo("web", "free"), &foo("web", "taken"), &req)
            .await
            .is_err()
    );
    factory.shutdown().await;
}

#[test]
fn foo_converts_to_v1beta1_and_back_losslessly() {
    let conversions = sample_controller::generated::conversion::conversions();
    let [(path, conversion)] = conversions.as_slice() else {
        panic!("one kind converts: {conversions:?}")
    };
    assert_eq!(path, "/convert-samplecontroller-k8s-io-foo");
    assert_eq!(
        conversion.api_versions(),
        [
            "samplecontroller.k8s.io/v1alpha1",
            "samplecontroller.k8s.io/v1beta1"
        ]
    );
    let mut with_status = foo("full", "full-deployment");
    with_status.spec.replicas = Some(3);
    with_status.metadata.labels = Some([("app".to_owned(), "x".to_owned())].into());
    with_status.status = Some(
        sample_controller::apis::samplecontroller::v1alpha1::FooStatus {
            available_replicas: 2,
        },
    );
    for hub in [foo("bare", ""), with_status] {
        conversion.assert_lossless(&hub);
    }
    let mut noted = v1beta1_foo("noted", "noted", 2);
    noted.spec.note = Some("kept in an annotation of v1alpha1".into());
    noted.metadata.annotations = Some([("mine".to_owned(), "too".to_owned())].into());
    conversion.assert_lossless(&noted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_calls_the_foo_webhooks_the_controller_installs() {
    let cert_dir = std::env::temp_dir().join(format!("sample-webhooks-{}", std::process::id()));
    the_fake_calls_the_installed_webhooks(Some(cert_dir.clone())).await;
    let _ = std::fs::remove_dir_all(&cert_dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_calls_the_foo_webhooks_with_the_self_managed_certificate() {
    the_fake_calls_the_installed_webhooks(None).await;
}

/// Development mode on the fake, with the certificate in `cert_dir` or (`None`)
/// self-managed: the fake calls the admission and conversion webhooks it installed.
async fn the_fake_calls_the_installed_webhooks(cert_dir: Option<std::path::PathBuf>) {
    use sample_controller::run::{self, Options, WebhookOptions, shutdown_signal};

    let fake = FakeApiServer::new();
    for crd in sample_controller::generated::crds().unwrap() {
        fake.seed(crd).unwrap();
    }
    let client = kube::Client::new(fake.clone(), "default");
    create_taken(&client).await;
    let self_managed = cert_dir.is_none();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(run::run(
        client.clone(),
        Options {
            webhooks: Some(WebhookOptions {
                addr: "127.0.0.1:0".parse().unwrap(),
                cert_dir: cert_dir.clone(),
                install: true,
            }),
            shutdown_deadline: Duration::from_secs(5),
            ..Options::default()
        },
        shutdown_signal(async move {
            let _ = stopped.await;
        }),
    ));
    let configurations = || {
        fake.list(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            None,
        )
        .len()
            + fake
                .list(
                    "admissionregistration.k8s.io/v1",
                    "MutatingWebhookConfiguration",
                    None,
                )
                .len()
    };
    let started = std::time::Instant::now();
    while configurations() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no webhook configurations installed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if self_managed {
        // The CA the configurations and Foo's conversion carry is the Secret's.
        let secret = fake
            .get("v1", "Secret", Some("default"), run::WEBHOOK_CERT_SECRET)
            .unwrap();
        assert_eq!(secret["type"], "kubernetes.io/tls");
        let ca = secret["data"]["ca.crt"].clone();
        let validating = fake
            .get(
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                None,
                "sample-controller",
            )
            .unwrap();
        assert_eq!(validating["webhooks"][0]["clientConfig"]["caBundle"], ca);
        let crd = fake
            .get(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                "foos.samplecontroller.k8s.io",
            )
            .unwrap();
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"],
            ca
        );
    }

    let foos: Api<Foo> = Api::default_namespaced(client.clone());
    let pp = PostParams::default();
    let created = foos.create(&pp, &foo("web", "")).await.unwrap();
    assert_eq!(
        created.spec.deployment_name, "web",
        "defaulted by the mutating webhook"
    );
    let refused = foos.create(&pp, &foo("thief", "taken")).await.unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        "admission webhook \"vfoo.samplecontroller.k8s.io\" denied the request: spec.deploymentName: Deployment \"taken\" already exists and is not managed by Foo \"thief\""
    );

    // Foo v1beta1 through the generated client: the fake converts through the conversion
    // webhook the controller serves and installed, and the admission webhooks (registered
    // for v1alpha1) see the object converted.
    let clientset = sample_controller::generated::Clientset::new(
        client.clone(),
        kube_codegen_runtime::FieldManager::new("webhook-test"),
    );
    let beta = clientset.samplecontroller_v1beta1().foos("default");
    let nested = beta
        .create(&v1beta1_foo("nested", "", 2), &pp)
        .await
        .unwrap();
    assert_eq!(
        nested.spec.deployment,
        FooDeployment {
            name: "nested".into(),
            replicas: Some(2)
        },
        "defaulted by the v1alpha1 mutating webhook, converted back"
    );
    assert_eq!(
        foos.get("nested").await.unwrap().spec.deployment_name,
        "nested"
    );
    // v1beta1's note has no place in v1alpha1: kept in an annotation of the stored object,
    // and the Foo reads back as v1beta1 unchanged after a read as v1alpha1.
    let mut noted = v1beta1_foo("noted", "noted", 1);
    noted.spec.note = Some("v1alpha1 has no place for this".into());
    let written = beta.create(&noted, &pp).await.unwrap();
    assert_eq!(written.spec, noted.spec);
    let flat = foos.get("noted").await.unwrap();
    assert_eq!(
        flat.metadata.annotations.as_ref().unwrap()["samplecontroller.k8s.io/conversion-v1beta1"],
        r#"{"note":"v1alpha1 has no place for this"}"#
    );
    let again = beta.get("noted").await.unwrap();
    assert_eq!(again.spec, noted.spec);
    assert_eq!(again.metadata.annotations, None);
    let web = beta.get("web").await.unwrap();
    assert_eq!(web.spec.deployment.name, "web");
    let mut names: Vec<String> = beta
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|f| f.spec.deployment.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["nested", "noted", "web"]);
    let refused = beta
        .create(&v1beta1_foo("thief2", "taken", 1), &pp)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(status.code, 403, "{}", status.message);

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), controller)
        .await
        .expect("stops in time")
        .unwrap()
        .unwrap();
    assert_eq!(configurations(), 0, "removed at shutdown");
    let crd = fake
        .get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "foos.samplecontroller.k8s.io",
        )
        .unwrap();
    assert_eq!(
        crd["spec"]["conversion"]["strategy"], "None",
        "the conversion put back at shutdown"
    );
}
