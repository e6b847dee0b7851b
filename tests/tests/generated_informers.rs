//! The generated informers and listers, from the derive and from the CLI tree, on the fake
//! API server: typed listers in the reconcile path, as Go's sample-controller has them.

use std::time::Duration;

use codegen_tests::builtins_generated::InformerFactoryExt as _;
use codegen_tests::{Foo, FooInformer, FooSpec};
use fake_apiserver::FakeApiServer;
use kube::core::Selector;
use kube::{Client, ResourceExt};
use kube_codegen_runtime::SharedInformerFactory;
use serde_json::json;

#[tokio::test]
async fn derive_informer_and_listers_read_the_cache() {
    let fake = FakeApiServer::new();
    fake.seed(Foo::crd_with_markers().unwrap()).unwrap();
    for (ns, name) in [("default", "a"), ("default", "b"), ("kube-system", "c")] {
        let mut foo = Foo::new(
            name,
            FooSpec {
                deployment_name: name.into(),
                replicas: 1,
            },
        );
        foo.metadata.namespace = Some(ns.into());
        fake.seed(&foo).unwrap();
    }
    let factory = SharedInformerFactory::new(Client::new(fake.clone(), "default"));
    let foos = FooInformer::new(&factory);
    factory.start();
    assert!(
        factory
            .wait_for_cache_sync(Duration::from_secs(5))
            .await
            .values()
            .all(|s| *s)
    );
    let lister = foos.lister();
    assert_eq!(lister.list(&Selector::default()).len(), 3);
    let in_default: Vec<String> = lister
        .foos("default")
        .list(&Selector::default())
        .iter()
        .map(|f| f.name_any())
        .collect();
    assert_eq!(in_default, ["a", "b"]);
    assert_eq!(
        lister
            .foos("kube-system")
            .get("c")
            .unwrap()
            .spec
            .deployment_name,
        "c"
    );
    assert!(lister.foos("default").get("c").is_err());
    assert!(
        FooInformer::new(&factory).informer().has_synced(),
        "the same informer from the factory"
    );
    factory.shutdown().await;
}

#[tokio::test]
async fn cli_factory_accessors_cover_built_in_kinds() {
    let fake = FakeApiServer::new();
    fake.seed(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}))
    .unwrap();
    fake.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}))
        .unwrap();
    let factory = SharedInformerFactory::new(Client::new(fake.clone(), "default"));
    let deployments = factory.apps().v1().deployments();
    let nodes = factory.core().v1().nodes();
    factory.start();
    let synced = factory.wait_for_cache_sync(Duration::from_secs(5)).await;
    assert!(synced.values().all(|s| *s), "{synced:?}");
    assert_eq!(
        deployments
            .lister()
            .deployments("default")
            .get("web")
            .unwrap()
            .name_any(),
        "web"
    );
    assert_eq!(nodes.lister().get("node-1").unwrap().name_any(), "node-1");
    factory.shutdown().await;
}

mod wired_like_go {
    //! Go's sample-controller wiring: one factory for the custom and built-in kinds, typed
    //! listers in the reconcile path, `Controller` fed by the factory's shared streams.

    use std::sync::Arc;
    use std::time::Duration;

    use codegen_tests::builtins_generated::InformerFactoryExt as _;
    use codegen_tests::builtins_generated::apps::v1::DeploymentLister;
    use codegen_tests::{Foo, FooInformer, FooLister, FooSpec};
    use fake_apiserver::FakeApiServer;
    use futures::StreamExt;
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::{Api, PostParams};
    use kube::runtime::controller::{Action, Controller};
    use kube::{Client, Resource, ResourceExt};
    use kube_codegen_runtime::SharedInformerFactory;
    use serde_json::json;

    struct Ctx {
        client: Client,
        foos: FooLister,
        deployments: DeploymentLister,
    }

    async fn reconcile(foo: Arc<Foo>, ctx: Arc<Ctx>) -> Result<Action, kube::Error> {
        let ns = foo.namespace().unwrap_or_default();
        // Listers, not API reads: the cache has the answer.
        let Ok(foo) = ctx.foos.foos(&ns).get(&foo.name_any()) else {
            return Ok(Action::await_change());
        };
        if ctx
            .deployments
            .deployments(&ns)
            .get(&foo.spec.deployment_name)
            .is_err()
        {
            let mut d: Deployment = serde_json::from_value(json!({
                "metadata": {"name": foo.spec.deployment_name},
                "spec": {"replicas": foo.spec.replicas, "selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "x"}},
                                      "spec": {"containers": [{"name": "x", "image": "nginx"}]}}}
            }))
            .unwrap();
            d.metadata.owner_references = Some(vec![foo.controller_owner_ref(&()).unwrap()]);
            Api::<Deployment>::namespaced(ctx.client.clone(), &ns)
                .create(&PostParams::default(), &d)
                .await?;
        }
        Ok(Action::await_change())
    }

    #[tokio::test]
    async fn a_controller_wired_like_the_go_sample() {
        let fake = FakeApiServer::new();
        fake.seed(Foo::crd_with_markers().unwrap()).unwrap();
        let client = Client::new(fake.clone(), "default");

        let factory = SharedInformerFactory::new(client.clone());
        let foos = FooInformer::new(&factory);
        let deployments = factory.apps().v1().deployments();
        let ctx = Arc::new(Ctx {
            client: client.clone(),
            foos: foos.lister(),
            deployments: deployments.lister(),
        });
        let controller =
            Controller::for_shared_stream(foos.informer().subscribe(), foos.informer().store())
                .owns_shared_stream(deployments.informer().subscribe())
                .run(
                    reconcile,
                    |_, _, _| Action::requeue(Duration::from_secs(1)),
                    ctx,
                )
                .for_each(|_| async {});
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(5)).await;
        let task = tokio::spawn(controller);

        let foo = Foo::new(
            "example",
            FooSpec {
                deployment_name: "example-web".into(),
                replicas: 2,
            },
        );
        Api::<Foo>::namespaced(client, "default")
            .create(&PostParams::default(), &foo)
            .await
            .unwrap();
        for _ in 0..200 {
            if fake
                .get("apps/v1", "Deployment", Some("default"), "example-web")
                .is_some()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let d = fake
            .get("apps/v1", "Deployment", Some("default"), "example-web")
            .expect("the controller created it");
        assert_eq!(d["metadata"]["ownerReferences"][0]["kind"], "Foo");
        task.abort();
        factory.shutdown().await;
    }
}
