//! The webhook server called by a real kube-apiserver: a Foo created with an empty
//! `deploymentName` is defaulted by the mutating webhook, one with a name the validating
//! webhook refuses is denied with the webhook's message.
//!
//! Ignored by default (the fake API server does not call webhooks yet); run it against a
//! cluster whose API server reaches 127.0.0.1 (the one of `../shared/tools/real-apiserver`):
//!
//! ```text
//! KUBE_CONTRACT_KUBECONFIG=path/to/kubeconfig cargo test -p codegen-tests --test webhook_cluster -- --ignored
//! ```
//!
//! The webhooks only see namespaces labelled for this run, and everything the test creates
//! is removed afterwards, so it can run on a cluster in use.

use std::path::Path;
use std::time::{Duration, Instant};

use codegen_tests::{Foo, FooSpec};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use kube_codegen_runtime::webhook::{
    Defaulter, Denial, Request, Validator, Warnings, WebhookServer, mutate_path, validate_path,
};
use serde_json::json;

struct FooHooks;

impl Defaulter<Foo> for FooHooks {
    async fn default(&self, foo: &mut Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        if foo.spec.deployment_name.is_empty() {
            foo.spec.deployment_name = foo.name_any();
        }
        Ok(Warnings::new())
    }
}

impl Validator<Foo> for FooHooks {
    async fn validate_create(&self, foo: &Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        if foo.spec.deployment_name.starts_with("taken-") {
            return Err(Denial::new(format!(
                "spec.deploymentName: Deployment {} belongs to another Foo",
                foo.spec.deployment_name
            )));
        }
        Ok(Warnings::new())
    }
}

fn webhook_configuration(run: &str, port: u16, mutating: bool) -> serde_json::Value {
    let ca =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/webhook-certs/ca.crt"))
            .unwrap();
    let (kind, prefix, path) = if mutating {
        ("MutatingWebhookConfiguration", "m", mutate_path::<Foo>())
    } else {
        (
            "ValidatingWebhookConfiguration",
            "v",
            validate_path::<Foo>(),
        )
    };
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": format!("kube-codegen-test-{run}")},
        "webhooks": [{
            "name": format!("{prefix}foo-{run}.kube-codegen.example.com"),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "timeoutSeconds": 5,
            "clientConfig": {
                "url": format!("https://127.0.0.1:{port}{path}"),
                "caBundle": apiserver_rules::base64::base64_encode(&ca),
            },
            "namespaceSelector": {"matchLabels": {"kube-codegen-webhook-test": run}},
            "rules": [{
                "apiGroups": ["samplecontroller.k8s.io"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["foos"],
            }],
        }],
    })
}

#[tokio::test]
#[ignore = "needs KUBE_CONTRACT_KUBECONFIG: a cluster whose API server can call 127.0.0.1"]
async fn the_api_server_calls_the_typed_webhooks() {
    let path = std::env::var("KUBE_CONTRACT_KUBECONFIG").expect("KUBE_CONTRACT_KUBECONFIG");
    let kubeconfig = kube::config::Kubeconfig::read_from(path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let run = format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );

    // The Foo CRD: the one installed, or ours for the duration of the test.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd_name = Foo::crd().name_any();
    let installed_here = crds.get_opt(&crd_name).await.unwrap().is_none();
    if installed_here {
        crds.create(&PostParams::default(), &Foo::crd())
            .await
            .unwrap();
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let certs = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/webhook-certs/a");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        WebhookServer::new()
            .defaulting::<Foo, _>(mutate_path::<Foo>(), FooHooks)
            .validating::<Foo, _>(validate_path::<Foo>(), FooHooks)
            .serve_on(listener, certs, async {
                let _ = stopped.await;
            }),
    );
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = format!("webhook-{run}");
    let pp = PostParams::default();
    mutating
        .create(
            &pp,
            &serde_json::from_value(webhook_configuration(&run, port, true)).unwrap(),
        )
        .await
        .unwrap();
    validating
        .create(
            &pp,
            &serde_json::from_value(webhook_configuration(&run, port, false)).unwrap(),
        )
        .await
        .unwrap();
    namespaces
        .create(
            &pp,
            &serde_json::from_value(
                json!({"metadata": {"name": ns, "labels": {"kube-codegen-webhook-test": run}}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();

    let outcome = async {
        let foos: Api<Foo> = Api::namespaced(client.clone(), &ns);
        let foo = |name: &str, deployment: &str| {
            Foo::new(
                name,
                FooSpec {
                    deployment_name: deployment.to_owned(),
                    replicas: 1,
                },
            )
        };
        // The API server picks new configurations up within a few seconds.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut n = 0;
        let defaulted = loop {
            n += 1;
            let created = foos
                .create(&pp, &foo(&format!("probe-{n}"), ""))
                .await
                .unwrap();
            if !created.spec.deployment_name.is_empty() || Instant::now() > deadline {
                break created;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(
            defaulted.spec.deployment_name,
            defaulted.name_any(),
            "the mutating webhook was not called"
        );
        let refused = foos.create(&pp, &foo("b", "taken-web")).await.unwrap_err();
        let kube::Error::Api(status) = refused else {
            panic!("{refused:?}")
        };
        assert_eq!(status.code, 403, "{status:?}");
        assert_eq!(
            status.message,
            format!(
                "admission webhook \"vfoo-{run}.kube-codegen.example.com\" denied the request: spec.deploymentName: Deployment taken-web belongs to another Foo"
            )
        );
    };
    // A failed assertion still cleans up, then fails the test.
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(outcome));
    let result = tokio::time::timeout(Duration::from_secs(60), outcome).await;

    let dp = DeleteParams::default();
    let _ = namespaces.delete(&ns, &dp).await;
    let _ = mutating
        .delete(&format!("kube-codegen-test-{run}"), &dp)
        .await;
    let _ = validating
        .delete(&format!("kube-codegen-test-{run}"), &dp)
        .await;
    if installed_here {
        let _ = crds.delete(&crd_name, &dp).await;
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    match result {
        Ok(Ok(())) => {}
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("the webhooks did not answer within a minute"),
    }
}
