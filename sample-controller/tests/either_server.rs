//! The sample's main promise on either server, with `fake_apiserver::TestEnv`: in process by
//! default, and unchanged against a cluster with `KUBE_TEST_KUBECONFIG=<kubeconfig>`.

use std::time::{Duration, Instant};

use fake_apiserver::TestEnv;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use sample_controller::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::run::{self, Options, shutdown_signal};
use tokio::sync::oneshot;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foo_gets_its_deployment_on_either_server() {
    let env = TestEnv::start().await.expect("a test environment");
    for crd in sample_controller::generated::crds().unwrap() {
        env.apply(crd)
            .await
            .expect("the generated CRDs are accepted");
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let options = Options {
        namespace: Some(env.namespace().to_owned()),
        shutdown_deadline: Duration::from_secs(5),
        ..Options::default()
    };
    let task = tokio::spawn(run::run(
        env.client(),
        options,
        shutdown_signal(async move {
            let _ = stopped.await;
        }),
    ));
    let foos: Api<Foo> = Api::default_namespaced(env.client());
    let foo = Foo::new(
        "example",
        FooSpec {
            deployment_name: "example-web".into(),
            replicas: Some(2),
        },
    );
    foos.create(&PostParams::default(), &foo).await.unwrap();
    let deployments: Api<Deployment> = Api::default_namespaced(env.client());
    let deadline = Instant::now() + Duration::from_secs(30);
    let deployment = loop {
        if let Ok(d) = deployments.get("example-web").await {
            break d;
        }
        assert!(Instant::now() < deadline, "no Deployment within 30s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(deployment.spec.replicas, Some(2));
    let owner = &deployment.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Foo", "example")
    );
    if let Some(fake) = env.fake() {
        // The fake's own view: what the controller wrote.
        let wrote = fake.writes().iter().any(|w| {
            w.resource == "deployments" && w.namespace.as_deref() == Some(env.namespace())
        });
        assert!(wrote, "the controller wrote the Deployment");
    }
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    env.cleanup().await.unwrap();
}
