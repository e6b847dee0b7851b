//! The round trip: the CRDs in `crds/` -> `kube-codegen import` -> the CRDs the imported
//! types build (each version's `crd_with_markers()`, merged as `kube-codegen crds` would for
//! kinds it owns) -> the same schemas. The imported kinds are consumed, so the crate's
//! `crds()` leaves them out; that is checked here too.
//!
//! "The same" is semantic: property order, `required` order, number spelling (`1` and
//! `1.0`) and whitespace in descriptions aside. What kube's `CustomResource` derive writes
//! at the root of every CRD (a `title`, no `apiVersion`/`kind`/`metadata` properties) is
//! left out of the comparison; every other difference must be in [`EXCEPTIONS`], which is
//! exactly what the import reports as not carried over.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

/// Each difference the round trip is allowed, as `<crd> <version> <path>: <what>`; the
/// test fails on a difference not listed and on a listed one that no longer happens.
const EXCEPTIONS: &[&str] = &[
    // Map values of type `Quantity` without a description get the type's own (a description
    // is a doc comment, which map values and list items do not have).
    "batchruns.batch.example.com v1 /properties/spec/properties/resources/additionalProperties/description: extra ((text))",
    // Items of type `IntOrString` without a description get the type's own, likewise.
    "batchruns.batch.example.com v1 /properties/spec/properties/retryOn/items/description: extra ((text))",
];

fn inputs() -> Vec<Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/crds");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("crds/")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML");
        for d in docs {
            if d.get("kind").and_then(Value::as_str) == Some("List") {
                out.extend(d["items"].as_array().cloned().unwrap_or_default());
            } else if !d.is_null() {
                out.push(d);
            }
        }
    }
    out
}

/// The CRD each imported kind builds, by name: every version's `crd_with_markers()`, several
/// merged around the storage version.
fn built() -> BTreeMap<String, CustomResourceDefinition> {
    use imported_apis::apis::*;
    let one = |crd: Result<CustomResourceDefinition, kube_codegen_runtime::crd::CrdError>| {
        crd.expect("the imported types build valid CRDs")
    };
    let widgets = kube_codegen_runtime::crd::merge(
        vec![
            one(shop::v1alpha1::Widget::crd_with_markers()),
            one(shop::v1beta1::Widget::crd_with_markers()),
            one(shop::v1::Widget::crd_with_markers()),
        ],
        "v1",
    );
    [
        one(batch::v1::BatchRun::crd_with_markers()),
        one(batch::v1::Blob::crd_with_markers()),
        one(certs::v1::Certificate::crd_with_markers()),
        one(certs::v1::ClusterIssuer::crd_with_markers()),
        one(monitoring::v1::ServiceMonitor::crd_with_markers()),
        one(monitoring::v1alpha1::AlertRoute::crd_with_markers()),
        one(net::v1::Route::crd_with_markers()),
        one(ops::v1::BackupSchedule::crd_with_markers()),
        one(ops::v1beta1::Dashboard::crd_with_markers()),
        one(platform::v1::Tenant::crd_with_markers()),
        one(testing::v1::Probe::crd_with_markers()),
        one(velero::v1::Backup::crd_with_markers()),
        one(velero::v1::Restore::crd_with_markers()),
        one(widgets),
    ]
    .into_iter()
    .map(|crd| (crd.metadata.name.clone().unwrap_or_default(), crd))
    .collect()
}

#[test]
fn consumed_kinds_are_left_out_of_crds() {
    let ours = imported_apis::generated::crds().expect("CRDs");
    assert!(
        ours.is_empty(),
        "imported kinds are consumed, so `crds()` has none of them: {:?}",
        ours.iter()
            .map(|c| c.metadata.name.clone())
            .collect::<Vec<_>>()
    );
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Differences between two schemas (or any JSON), with their paths.
fn diff(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}/{k}");
                match b.get(k) {
                    None => out.push(format!("{p}: missing (want {va})")),
                    Some(vb) if k == "description" => {
                        if words(va.as_str().unwrap_or("")) != words(vb.as_str().unwrap_or("")) {
                            out.push(format!("{p}: differs"));
                        }
                    }
                    Some(vb) if k == "required" => {
                        let mut x: Vec<String> = va
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(Value::to_string)
                            .collect();
                        let mut y: Vec<String> = vb
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(Value::to_string)
                            .collect();
                        x.sort();
                        y.sort();
                        if x != y {
                            out.push(format!("{p}: want {x:?}, got {y:?}"));
                        }
                    }
                    Some(vb) => diff(&p, va, vb, out),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    let shown = if k == "description" {
                        "(text)".to_owned()
                    } else {
                        vb.to_string()
                    };
                    out.push(format!("{path}/{k}: extra ({shown})"));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}/{i}"), x, y, out);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{path}: want {a}, got {b}")),
    }
}

/// What a CRD says that the round trip must keep: names, scope, and per version its
/// flags, subresources, columns, selectable fields and schema.
fn essence(crd: &Value) -> Value {
    let mut c = crd.clone();
    let spec = &mut c["spec"];
    // Without a `listKind` the API server stores `<Kind>List`, as kube writes it.
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut)
        && !names.contains_key("listKind")
    {
        let kind = names.get("kind").and_then(Value::as_str).unwrap_or("");
        let list = Value::from(format!("{kind}List"));
        names.insert("listKind".to_owned(), list);
    }
    if let Some(versions) = spec.get_mut("versions").and_then(Value::as_array_mut) {
        versions.sort_by_key(|v| v["name"].as_str().unwrap_or("").to_owned());
        for v in versions {
            let Some(root) = v
                .pointer_mut("/schema/openAPIV3Schema")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            root.remove("title");
            if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
                for k in ["apiVersion", "kind", "metadata"] {
                    props.remove(k);
                }
            }
        }
    }
    let mut out = serde_json::json!({"spec": c["spec"]});
    if let Some(a) = crd.pointer("/metadata/annotations/api-approved.kubernetes.io") {
        out["approval"] = a.clone();
    }
    out
}

/// The differences between two CRDs, each prefixed with the CRD's name; a version's schema
/// is compared on its own, so that paths name the version.
fn crd_differences(name: &str, want: &Value, got: &Value) -> Vec<String> {
    let (mut want, mut got) = (essence(want), essence(got));
    let schemas = |crd: &mut Value| -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for v in crd["spec"]["versions"].as_array_mut().into_iter().flatten() {
            let schema = v["schema"]["openAPIV3Schema"].take();
            out.insert(v["name"].as_str().unwrap_or_default().to_owned(), schema);
        }
        out
    };
    let (want_schemas, got_schemas) = (schemas(&mut want), schemas(&mut got));
    let mut diffs = Vec::new();
    diff("", &want, &got, &mut diffs);
    for (version, schema) in &want_schemas {
        let other = got_schemas.get(version).unwrap_or(&Value::Null);
        diff(&format!(" {version} "), schema, other, &mut diffs);
    }
    diffs.into_iter().map(|d| format!("{name}{d}")).collect()
}

/// Fails unless `found` is exactly [`EXCEPTIONS`].
fn assert_only_the_listed_differences(found: &[String]) {
    let unexpected: Vec<&String> = found
        .iter()
        .filter(|d| !EXCEPTIONS.contains(&d.as_str()))
        .collect();
    let gone: Vec<&&str> = EXCEPTIONS
        .iter()
        .filter(|e| !found.iter().any(|d| d == *e))
        .collect();
    assert!(
        unexpected.is_empty() && gone.is_empty(),
        "differences not listed:\n{}\nlisted but gone:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter().map(|s| **s).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn imported_types_give_back_the_schemas_they_were_imported_from() {
    let built: BTreeMap<String, Value> = built()
        .into_iter()
        .map(|(name, crd)| (name, serde_json::to_value(&crd).expect("JSON")))
        .collect();
    let inputs = inputs();
    assert!(
        inputs.len() >= 12,
        "at least a dozen CRDs: {}",
        inputs.len()
    );
    let mut found = Vec::new();
    for input in &inputs {
        let name = input["metadata"]["name"].as_str().unwrap_or_default();
        let Some(output) = built.get(name) else {
            panic!(
                "no CRD `{name}` among the imported kinds: {:?}",
                built.keys()
            );
        };
        found.extend(crd_differences(name, input, output));
    }
    assert_only_the_listed_differences(&found);
}

/// The same comparison as the API server stores them: each input CRD applied, read back,
/// then the CRD built from the imported types applied over it and read back. The server's
/// defaults and normalization are on both sides, so only the listed differences remain.
/// Runs on the fake, or on the cluster of `KUBE_CONTRACT_KUBECONFIG` (it creates and then
/// deletes these 14 cluster-scoped CRDs, whose names are fixed by their groups).
#[tokio::test]
async fn the_api_server_stores_the_same_schemas_from_the_imported_types() {
    use kube::api::{Api, DeleteParams, Patch, PatchParams};

    let client = match std::env::var("KUBE_CONTRACT_KUBECONFIG") {
        Ok(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("kubeconfig");
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .expect("config");
            kube::Client::try_from(config).expect("client")
        }
        Err(_) => kube::Client::new(fake_apiserver::FakeApiServer::new(), "default"),
    };
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let apply = PatchParams::apply("imported-round-trip").force();
    let built = built();
    let inputs = inputs();
    let mut found = Vec::new();
    let result = async {
        for input in &inputs {
            let name = input["metadata"]["name"].as_str().unwrap_or_default();
            let stored = |crd: CustomResourceDefinition| serde_json::to_value(crd).expect("JSON");
            let before = stored(
                api.patch(name, &apply, &Patch::Apply(input))
                    .await
                    .map_err(|e| format!("input `{name}`: {e}"))?,
            );
            let after = stored(
                api.patch(name, &apply, &Patch::Apply(&built[name]))
                    .await
                    .map_err(|e| format!("built `{name}`: {e}"))?,
            );
            found.extend(crd_differences(name, &before, &after));
        }
        Ok::<(), String>(())
    }
    .await;
    for input in &inputs {
        let name = input["metadata"]["name"].as_str().unwrap_or_default();
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
    result.expect("the API server accepted every CRD");
    assert_only_the_listed_differences(&found);
}

/// What issue 39 asked to carry as written, said outright: subresources as each version has
/// them (none, scale alone, status and scale), `listKind`, `metadata` in the root's
/// `required`, and preserve-unknown-fields on a list whose items carry it too.
#[test]
fn subresources_names_and_root_facts_are_carried_as_written() {
    let built: BTreeMap<String, Value> = built()
        .into_iter()
        .map(|(name, crd)| (name, serde_json::to_value(&crd).expect("JSON")))
        .collect();
    let inputs = inputs();
    let input = |name: &str| {
        inputs
            .iter()
            .find(|c| c["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no input {name}"))
    };
    for name in [
        "backups.velero.example.com",
        "restores.velero.example.com",
        "widgets.shop.example.com",
    ] {
        let (want, got) = (input(name), &built[name]);
        let version = |crd: &Value| {
            crd["spec"]["versions"]
                .as_array()
                .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(
            version(want).get("subresources"),
            version(got).get("subresources"),
            "{name}"
        );
    }
    let backups = &built["backups.velero.example.com"];
    assert_eq!(backups["spec"]["names"]["listKind"], "BackupCollection");
    let root = &backups["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let mut required: Vec<&str> = root["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["metadata", "spec"]);
    let hooks = &root["properties"]["spec"]["properties"]["hooks"];
    assert_eq!(hooks["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(hooks["items"]["x-kubernetes-preserve-unknown-fields"], true);
    // Karpenter's value validations on a list, kept as written.
    let values =
        &root["properties"]["spec"]["properties"]["requirements"]["items"]["properties"]["values"];
    assert_eq!(values["maxLength"], 63);
    assert_eq!(values["type"], "array");
}
