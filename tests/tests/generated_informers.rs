//! The generated informers and listers, from the derive and from the CLI tree, on the fake
//! API server: typed listers in the reconcile path, as Go's sample-controller has them.

use std::time::Duration;

use codegen_tests::builtins_generated::InformerFactoryExt as _;
use codegen_tests::{Foo, FooInformer, FooSpec};
use fake_apiserver::FakeApiServer;
use kube::core::Selector;
use kube::{Client, CustomResourceExt, ResourceExt};
use kube_codegen_runtime::SharedInformerFactory;
use serde_json::json;

#[tokio::test]
async fn derive_informer_and_listers_read_the_cache() {
    let fake = FakeApiServer::new();
    fake.seed(Foo::crd()).unwrap();
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
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}}}}))
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
