//! Every CRD this project emits passes the checks kube-apiserver 1.36 makes when a CRD is
//! created (`apiserver-rules`, the rules the fake API server applies): the `crds()` of each
//! golden case, and the YAML files checked in for the sample and the markers case.

use fake_apiserver::rules::crd::review_create;
use serde_json::Value;

fn assert_accepted(what: &str, crd: &Value) {
    let review = review_create(crd);
    let errors: Vec<String> = review.errors.iter().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

#[test]
fn every_generated_crds_function_builds_crds_the_api_server_accepts() {
    let cases = [
        ("all_verbs", codegen_tests::all_verbs_generated::crds()),
        ("filters", codegen_tests::filters_generated::crds()),
        ("groups", codegen_tests::groups_generated::crds()),
        ("methods", codegen_tests::methods_generated::crds()),
        ("builtins", codegen_tests::builtins_generated::crds()),
        ("markers", codegen_tests::markers_generated::crds()),
    ];
    let mut checked = 0;
    for (case, crds) in cases {
        for crd in crds.unwrap_or_else(|e| panic!("{case}: {e}")) {
            let name = crd.metadata.name.clone().unwrap_or_default();
            assert_accepted(
                &format!("{case}/{name}"),
                &serde_json::to_value(&crd).unwrap(),
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} CRDs");
}

#[test]
fn every_checked_in_crd_file_is_accepted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("tests/golden/markers/crds.yaml")];
    for entry in std::fs::read_dir(root.join("sample-controller/artifacts/crds")).unwrap() {
        let path = entry.unwrap().path();
        // The CRD files; `Kustomization` beside them lists them for kustomize.
        if path.extension().is_some_and(|e| e == "yaml") {
            files.push(path);
        }
    }
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for doc in text.split("\n---\n").map(|d| d.trim_start_matches("---\n")) {
            if doc
                .lines()
                .all(|l| l.trim().is_empty() || l.starts_with('#'))
            {
                continue;
            }
            let crd: Value = serde_saphyr::from_str(doc).unwrap();
            assert_accepted(&file.display().to_string(), &crd);
            checked += 1;
        }
    }
    assert_eq!(checked, 4, "two in the markers case, Foo and Icecream");
}

mod unsigned {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Unsigned and small integers, which schemars writes with formats the server warns on.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Counter", namespaced)]
    pub struct CounterSpec {
        pub count: u32,
        pub big: u64,
        pub small: u8,
        pub signed: i16,
    }
}

#[test]
fn unsigned_integers_get_formats_the_api_server_knows() {
    let crd = kube_codegen_runtime::crd::build::<unsigned::Counter>(&[]).unwrap();
    let crd = serde_json::to_value(&crd).unwrap();
    let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(props["count"]["format"], "int32");
    assert_eq!(
        props["count"]["minimum"].as_f64(),
        Some(0.0),
        "schemars' bound stays"
    );
    assert_eq!(props["big"]["format"], "int64");
    assert_eq!(props["small"]["format"], "int32");
    assert_eq!(props["signed"]["format"], "int32");
    let review = review_create(&crd);
    assert!(review.warnings.is_empty(), "{:?}", review.warnings);
}
