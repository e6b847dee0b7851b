//! `kube-codegen crds` on a fresh crate outside this workspace, as a user runs it: CRD YAML
//! for its own types with markers on the spec, the status and nested structs; `--verify`;
//! a CRD the API server would refuse reported at the marker, with nothing written; and a
//! crate that does not build.
//!
//! The crate depends on this repository's crates by path and shares this workspace's target
//! directory, lock file and profile, so only the crate itself and the runner are compiled.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// This repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The target directory the tests were built in (`<target>/debug/kube-codegen`).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

struct Crate(PathBuf);

impl Drop for Crate {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A new crate named `name` with `warehouse.rs` as its only API type file.
fn fresh_crate(name: &str, warehouse: &str) -> Crate {
    let dir = std::env::temp_dir().join(format!("kube-codegen-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let runtime = repo().join("codegen-runtime");
    // The same dependency features and dev profile as this workspace, so that the shared
    // target directory already holds the dependencies.
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[dependencies]
kube = {{ version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "derive", "runtime", "unstable-runtime"] }}
k8s-openapi = {{ version = "0.29.0", default-features = false, features = ["std", "latest"] }}
kube-codegen-runtime = {{ path = {runtime:?} }}
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[workspace]

[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
"#
    );
    write(&dir, "Cargo.toml", &manifest);
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    write(
        &dir,
        "src/lib.rs",
        "//! A user's API crate.\npub mod apis;\n",
    );
    write(&dir, "src/apis/mod.rs", "pub mod stock;\n");
    write(&dir, "src/apis/stock/mod.rs", "pub mod v1;\n");
    write(
        &dir,
        "src/apis/stock/v1/mod.rs",
        "//! +groupName=stock.example.com\npub mod warehouse;\npub mod types;\n",
    );
    write(&dir, "src/apis/stock/v1/warehouse.rs", warehouse);
    write(&dir, "src/apis/stock/v1/types.rs", TYPES);
    Crate(dir)
}

/// The spec; its nested struct lives in `types.rs`, another file of the version.
const WAREHOUSE: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::types::Bin;

/// A warehouse.
///
/// +kubebuilder:resource:shortName=wh
/// +kubebuilder:printcolumn:name=City,type=string,JSONPath=.spec.city
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "stock.example.com", version = "v1", kind = "Warehouse", namespaced, status = "WarehouseStatus")]
pub struct WarehouseSpec {
    /// +kubebuilder:validation:MinLength=2
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub city: String,
    /// +listType=map
    /// +listMapKey=code
    /// +optional
    #[serde(default)]
    pub bins: Vec<Bin>,
}

/// What the warehouse holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct WarehouseStatus {
    /// +kubebuilder:validation:Minimum=0
    pub items: Option<i64>,
}
"#;

const TYPES: &str = r#"use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One storage bin.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Bin {
    /// +kubebuilder:validation:MaxLength=3
    pub code: String,
    /// +kubebuilder:validation:Maximum=100
    pub capacity: Option<i32>,
}
"#;

fn crds(krate: &Crate, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(&krate.0)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(["crds", "--input", "src/apis", "--output", "config/crd"])
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_fresh_crate_gets_its_crds_with_the_markers_of_spec_status_and_nested_structs() {
    let krate = fresh_crate("crds-fresh", WAREHOUSE);
    let out = crds(&krate, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file = krate.0.join("config/crd/stock.example.com_warehouses.yaml");
    let yaml = fs::read_to_string(&file).unwrap();
    assert!(
        yaml.starts_with("# Code generated by kube-codegen. DO NOT EDIT.\n# Regenerate with: kube-codegen crds --input src/apis --output config/crd\n"),
        "{yaml}"
    );
    let crd: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["properties"]["city"]["pattern"], "^[a-z]+$");
    assert_eq!(
        spec["properties"]["bins"]["x-kubernetes-list-map-keys"],
        serde_json::json!(["code"])
    );
    let bin = &spec["properties"]["bins"]["items"]["properties"];
    assert_eq!(bin["code"]["maxLength"], 3);
    assert_eq!(bin["capacity"]["maximum"], 100.0);
    assert_eq!(
        schema["properties"]["status"]["properties"]["items"]["minimum"],
        0.0
    );
    assert_eq!(
        crd["spec"]["names"]["shortNames"],
        serde_json::json!(["wh"])
    );
    // Marker lines are instructions, not documentation.
    assert!(!yaml.contains("+kubebuilder"), "{yaml}");

    let verified = crds(&krate, &["--verify"]);
    assert!(verified.status.success(), "{}", stderr(&verified));
    fs::write(&file, yaml.replace("maxLength: 3", "maxLength: 4")).unwrap();
    let drifted = crds(&krate, &["--verify"]);
    assert!(!drifted.status.success());
    assert!(
        stderr(&drifted).contains("drifted: config/crd/stock.example.com_warehouses.yaml"),
        "{}",
        stderr(&drifted)
    );
}

#[test]
fn a_crd_the_api_server_would_refuse_is_shown_at_the_marker_and_nothing_is_written() {
    // A default that breaks the field's pattern: only the built schema can tell.
    let bad = WAREHOUSE.replace(
        "    pub city: String,",
        "    /// +kubebuilder:default=Paris\n    #[serde(default)]\n    pub city: String,",
    );
    let krate = fresh_crate("crds-refused", &bad);
    let out = crds(&krate, &[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    // kube-apiserver 1.36's words (with its two spaces), at the default's value.
    assert!(
        err.contains("error: CRD warehouses.stock.example.com: spec.validation.openAPIV3Schema.properties[spec].properties[city].default: Invalid value: \"Paris\":  in body should match '^[a-z]+$'\n  --> src/apis/stock/v1/warehouse.rs:16:30\n"),
        "{err}"
    );
    assert!(err.contains("error: no CRD written: 1 error"), "{err}");
    assert!(!krate.0.join("config/crd").exists());
}

#[test]
fn a_rule_too_expensive_for_its_bounds_is_refused_with_the_api_servers_estimate() {
    // A rule over every item of a list without maxItems, whose strings have no maxLength.
    let costly = WAREHOUSE.replace(
        "    pub city: String,",
        "    pub city: String,\n    /// +kubebuilder:validation:XValidation:rule=\"self.all(t, t.matches('^[a-z]+$'))\"\n    #[serde(default)]\n    pub tags: Vec<String>,",
    );
    let krate = fresh_crate("crds-costly", &costly);
    let out = crds(&krate, &[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x"),
        "{err}"
    );
    // At the rule's marker.
    assert!(
        err.contains("  --> src/apis/stock/v1/warehouse.rs:17:9\n"),
        "{err}"
    );
    assert!(!krate.0.join("config/crd").exists());
}

#[test]
fn a_crate_that_does_not_build_is_a_clear_error() {
    let krate = fresh_crate(
        "crds-broken",
        &WAREHOUSE.replace("pub city: String,", "pub city: Strin,"),
    );
    let out = crds(&krate, &[]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("error: could not build or run the CRDs of `crds-broken`"),
        "{err}"
    );
    assert!(!krate.0.join("config/crd").exists());
}

#[test]
fn versions_with_different_schemas_convert_through_the_webhook_service_given() {
    // v1 (stored) as WAREHOUSE; v2 names the city `town`.
    let stored = WAREHOUSE.replace(
        "/// +kubebuilder:resource:shortName=wh",
        "/// +kubebuilder:resource:shortName=wh\n/// +kubebuilder:storageversion",
    );
    let krate = fresh_crate("crds-conversion", &stored);
    write(
        &krate.0,
        "src/apis/stock/mod.rs",
        "pub mod v1;\npub mod v2;\n",
    );
    write(
        &krate.0,
        "src/apis/stock/v2/mod.rs",
        "//! +groupName=stock.example.com\npub mod warehouse;\n",
    );
    write(
        &krate.0,
        "src/apis/stock/v2/warehouse.rs",
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A warehouse, v2.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "stock.example.com", version = "v2", kind = "Warehouse", namespaced)]
pub struct WarehouseSpec {
    pub town: String,
}
"#,
    );
    let out = crds(&krate, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: warehouses.stock.example.com: the versions of Warehouse have different schemas, but without a conversion webhook kube-apiserver only rewrites `apiVersion`"),
        "{}",
        stderr(&out)
    );
    let file = krate.0.join("config/crd/stock.example.com_warehouses.yaml");
    let crd: serde_json::Value =
        serde_saphyr::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        crd["spec"]
            .get("conversion")
            .is_none_or(|c| c["strategy"] == "None"),
        "{crd}"
    );

    let out = crds(
        &krate,
        &[
            "--conversion-service",
            "ops/stock-webhooks:8443",
            "--cert-manager-certificate",
            "ops/stock-serving",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let yaml = fs::read_to_string(&file).unwrap();
    assert!(
        yaml.contains("--conversion-service ops/stock-webhooks:8443 --cert-manager-certificate ops/stock-serving"),
        "the header reproduces the command: {yaml}"
    );
    let crd: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(
        crd["spec"]["conversion"],
        serde_json::json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "ops", "name": "stock-webhooks",
                "path": "/convert-stock-example-com-warehouse", "port": 8443}}}})
    );
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "ops/stock-serving"
    );
    let bad = crds(&krate, &["--conversion-service", "stock-webhooks"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("`--conversion-service stock-webhooks` is `NAMESPACE/NAME[:PORT]`"),
        "{}",
        stderr(&bad)
    );
}
