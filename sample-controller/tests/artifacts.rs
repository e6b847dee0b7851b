//! The YAML a user applies: accepted by an API server, and what the controller converges on.

use fake_apiserver::FakeApiServer;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn crds_examples_and_deploy_manifests_are_accepted() {
    let fake = FakeApiServer::new();
    let crds = std::process::Command::new(env!("CARGO_BIN_EXE_sample-controller"))
        .arg("--print-crds")
        .output()
        .unwrap();
    assert!(crds.status.success());
    let created = fake
        .seed_yaml(&String::from_utf8(crds.stdout).unwrap())
        .unwrap();
    assert_eq!(created.len(), 2);
    for example in [
        "artifacts/examples/example-foo.yaml",
        "artifacts/examples/example-icecream.yaml",
    ] {
        let mut docs = fake.seed_yaml(&read(example)).unwrap();
        assert_eq!(docs.len(), 1, "{example}");
        assert!(
            docs.remove(0)["metadata"]["uid"].is_string(),
            "{example} stored"
        );
    }
    for manifest in [
        "artifacts/deploy/rbac.yaml",
        "artifacts/deploy/deployment.yaml",
    ] {
        assert!(
            !fake.seed_yaml(&read(manifest)).unwrap().is_empty(),
            "{manifest}"
        );
    }
    let d = fake
        .get(
            "apps/v1",
            "Deployment",
            Some("default"),
            "sample-controller",
        )
        .unwrap();
    let security = &d["spec"]["template"]["spec"]["containers"][0]["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
}

#[test]
fn invalid_replicas_are_rejected_by_the_crd_schema() {
    let fake = FakeApiServer::new();
    fake.seed_yaml(
        &String::from_utf8(
            std::process::Command::new(env!("CARGO_BIN_EXE_sample-controller"))
                .arg("--print-crds")
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap(),
    )
    .unwrap();
    let err = fake
        .seed_yaml("apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: big, namespace: default}\nspec: {deploymentName: big, replicas: 11}\n")
        .unwrap_err();
    assert_eq!(err.code, 422);
    assert!(err.message.contains("spec.replicas"), "{}", err.message);
}
