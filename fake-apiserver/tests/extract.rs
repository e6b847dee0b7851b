//! Reading back what a manager applied (client-go's `Extract*`) from objects whose
//! `managedFields` a real kube-apiserver 1.36.2 wrote (`tests/fixtures/real-apiserver`).

use fake_apiserver::ssa::{extract, schema::Ty};
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/real-apiserver/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn extract_returns_exactly_what_each_manager_applied() {
    let web = fixture("real-deployment-two-managers.json");
    let ty = Ty::of("apps/v1", "Deployment", None, false);
    assert_eq!(
        extract(&web, "manager-b", "", ty),
        json!({"apiVersion":"apps/v1","kind":"Deployment",
            "metadata":{"name":"web","namespace":"mf","annotations":{"owner-b":"yes"}},
            "spec":{"template":{"spec":{"containers":[
                {"name":"nginx","env":[{"name":"EXTRA","value":"1"}]},
                {"name":"sidecar","image":"busybox:1.36"}]}}}})
    );
    assert_eq!(
        extract(&web, "manager-a", "", ty),
        json!({"apiVersion":"apps/v1","kind":"Deployment",
            "metadata":{"name":"web","namespace":"mf","labels":{"app":"web"}},
            "spec":{"selector":{"matchLabels":{"app":"web"}},
                "template":{"metadata":{"labels":{"app":"web"}},
                    "spec":{"containers":[{"name":"nginx","image":"nginx:1.27",
                        "env":[{"name":"MODE","value":"prod"}],
                        "ports":[{"containerPort":80,"protocol":"TCP"}]}]}}}})
    );
    // kubectl scale is an update, not an apply: nothing applied.
    assert_eq!(
        extract(&web, "kubectl", "", ty),
        json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"mf"}})
    );
}

#[test]
fn extract_reads_sets_status_entries_and_the_empty_map_quirk() {
    let foo = fixture("real-foo-spec-and-status-managers.json");
    let ty = Ty::Deduced;
    assert_eq!(
        extract(&foo, "status-writer", "status", ty),
        json!({"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo",
            "metadata":{"name":"f1","namespace":"mf"},"status":{"availableReplicas":1}})
    );
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "deploymentName": {"type": "string"}, "replicas": {"type": "integer"}}}}});
    let a = extract(&foo, "manager-a", "", Ty::CrdRoot(&schema));
    assert_eq!(
        a["metadata"]["finalizers"],
        json!(["example.com/a", "example.com/b"])
    );
    assert_eq!(a["spec"], json!({"deploymentName": "f1", "replicas": 1}));
    // manager-b owns `data` as an empty map applied, over a map that is not empty: nothing.
    let shared = fixture("real-configmap-co-owned-after-b-drops-k.json");
    let b = extract(
        &shared,
        "manager-b",
        "",
        Ty::of("v1", "ConfigMap", None, false),
    );
    assert!(b.get("data").is_none(), "{b}");
}
