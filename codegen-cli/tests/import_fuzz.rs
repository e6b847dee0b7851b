//! A fuzzer for `import -> generate`: real CRDs (every CRD in this repository, the
//! examples' inputs among them) mutated with a seeded generator (validation keywords added,
//! removed or of another type, types changed, properties renamed, copied or required,
//! root properties added; kinds, groups, versions and plurals renamed to what kube-apiserver
//! accepts and Rust or `generate` may not; a second kind beside some whose Rust names would
//! meet the first's), kept only when the in-memory API server, which validates CRDs as
//! kube-apiserver 1.36 does, accepts them. For each kept case import must not panic, must
//! refuse (exit 1) only with a reason, not a write error or invalid Rust, what import
//! accepts `generate` must accept too, and what `generate` accepted `crds` must build
//! into CRDs the API server accepts (checked on the first `IMPORT_FUZZ_CRDS` such cases,
//! default 6, in one crate: `crds` compiles the types, which takes a while).
//!
//! `cargo test -p kube-codegen --test import_fuzz` runs `IMPORT_FUZZ_CASES` cases (default
//! 150) from `IMPORT_FUZZ_SEED` (default fixed); for a long run:
//! `IMPORT_FUZZ_CASES=5000 IMPORT_FUZZ_SEED=$RANDOM cargo test --release -p kube-codegen --test import_fuzz`.
//! A failing CRD is written to `codegen-cli/tests/import_fuzz/failures/` with what failed.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use serde_json::{Map, Value, json};
use support::{TempDir, repo, run, stderr, target_dir, write};

/// A small xorshift generator: the same seed gives the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every CRD in YAML files of this repository (build output and scratch directories aside).
fn corpus() -> Vec<Value> {
    let mut files = Vec::new();
    let mut stack = vec![repo()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if !matches!(name.as_ref(), "target" | ".git" | "failures") {
                    stack.push(path);
                }
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut crds = Vec::new();
    for f in files {
        let Ok(text) = fs::read_to_string(&f) else {
            continue;
        };
        if !text.contains("CustomResourceDefinition") {
            continue;
        }
        let Ok(docs) = serde_saphyr::from_multiple::<Value>(&text) else {
            continue;
        };
        for d in docs {
            let items = if d["kind"] == "List" {
                d["items"].as_array().cloned().unwrap_or_default()
            } else {
                vec![d]
            };
            crds.extend(
                items
                    .into_iter()
                    .filter(|d| d["kind"] == "CustomResourceDefinition"),
            );
        }
    }
    crds
}

/// JSON pointers of every schema below `at` (objects reached through `properties`, `items`
/// and `additionalProperties`).
fn schemas(v: &Value, at: String, out: &mut Vec<String>) {
    let Some(obj) = v.as_object() else { return };
    out.push(at.clone());
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            let key = k.replace('~', "~0").replace('/', "~1");
            schemas(p, format!("{at}/properties/{key}"), out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get(key) {
            schemas(sub, format!("{at}/{key}"), out);
        }
    }
}

const NAMES: &[&str] = &[
    "type",
    "self",
    "x-y",
    "Type",
    "camelCase",
    "snake_case",
    "URL",
    "a",
    "_",
    "2fa",
    "r#",
    "spec",
    "status",
    "metadata",
    "kind",
    "apiVersion",
    "ÿ",
    "fooBar",
    "foo_bar",
];

/// A value for `key`, usually of the kind the keyword wants, sometimes not.
fn value_for(rng: &mut Rng, key: &str) -> Value {
    let odd = [
        json!(null),
        json!("x"),
        json!(-1),
        json!(1.5),
        json!(true),
        json!([]),
        json!({}),
    ];
    if rng.below(6) == 0 {
        return rng.pick(&odd).clone();
    }
    match key {
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            json!(rng.below(5))
        }
        "minimum" | "maximum" | "multipleOf" => json!(rng.below(10) as i64 - 2),
        "exclusiveMinimum"
        | "exclusiveMaximum"
        | "nullable"
        | "uniqueItems"
        | "x-kubernetes-preserve-unknown-fields"
        | "x-kubernetes-int-or-string"
        | "x-kubernetes-embedded-resource" => json!(rng.below(2) == 0),
        "pattern" => rng
            .pick(&[json!("^a+$"), json!("[a-z]"), json!("(")])
            .clone(),
        "format" => rng
            .pick(&[
                json!("int32"),
                json!("date-time"),
                json!("byte"),
                json!("quantity"),
                json!(""),
            ])
            .clone(),
        "enum" => rng
            .pick(&[
                json!(["a", "b"]),
                json!([1, 2]),
                json!([true]),
                json!(["A-b", "a b"]),
            ])
            .clone(),
        "default" => rng
            .pick(&[json!("a"), json!(1), json!({}), json!([]), json!(false)])
            .clone(),
        "type" => rng
            .pick(&[
                json!("string"),
                json!("integer"),
                json!("number"),
                json!("boolean"),
                json!("object"),
                json!("array"),
            ])
            .clone(),
        "x-kubernetes-list-type" => rng
            .pick(&[json!("atomic"), json!("set"), json!("map")])
            .clone(),
        "x-kubernetes-map-type" => rng.pick(&[json!("atomic"), json!("granular")]).clone(),
        "x-kubernetes-list-map-keys" => rng
            .pick(&[json!(["name"]), json!(["type", "name"])])
            .clone(),
        "x-kubernetes-validations" => rng
            .pick(&[
                json!([{"rule": "self == self"}]),
                json!([{"rule": "has(self.name)", "message": "m"}]),
                json!([{"rule": "self.size() > 0", "fieldPath": ".name"}]),
            ])
            .clone(),
        "required" => json!([rng.pick(NAMES)]),
        "items" | "additionalProperties" => json!({"type": "string"}),
        "description" => json!("+kubebuilder:x a described field"),
        _ => json!(null),
    }
}

const KEYWORDS: &[&str] = &[
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "nullable",
    "uniqueItems",
    "pattern",
    "format",
    "enum",
    "default",
    "type",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "required",
    "items",
    "additionalProperties",
    "description",
];

/// One mutation of the schema at `pointer` in `crd`.
fn mutate(rng: &mut Rng, crd: &mut Value, pointer: &str) {
    let Some(schema) = crd.pointer_mut(pointer).and_then(Value::as_object_mut) else {
        return;
    };
    match rng.below(7) {
        // A keyword added or replaced.
        0 | 1 => {
            let key = *rng.pick(KEYWORDS);
            let value = value_for(rng, key);
            schema.insert(key.to_owned(), value);
        }
        // A keyword removed.
        2 => {
            let keys: Vec<String> = schema.keys().cloned().collect();
            if !keys.is_empty() {
                let key = rng.pick(&keys).clone();
                schema.remove(&key);
            }
        }
        // A property renamed.
        3 => {
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                let keys: Vec<String> = props.keys().cloned().collect();
                if !keys.is_empty() {
                    let from = rng.pick(&keys).clone();
                    let to = (*rng.pick(NAMES)).to_owned();
                    if let Some(v) = props.remove(&from) {
                        props.insert(to, v);
                    }
                }
            }
        }
        // A property copied under another name.
        4 => {
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                let keys: Vec<String> = props.keys().cloned().collect();
                if !keys.is_empty() {
                    let from = rng.pick(&keys).clone();
                    let copy = props[&from].clone();
                    props.insert(format!("{from}{}", rng.pick(NAMES)), copy);
                }
            }
        }
        // A new property, of any type.
        5 => {
            let mut prop = Map::new();
            prop.insert("type".into(), value_for(rng, "type"));
            if rng.below(2) == 0 {
                let key = *rng.pick(KEYWORDS);
                prop.insert(key.to_owned(), value_for(rng, key));
            }
            schema
                .entry("properties")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(|p| p.insert((*rng.pick(NAMES)).to_owned(), Value::Object(prop)));
        }
        // A property made required (or the requirement dropped).
        _ => {
            let keys: Vec<String> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            if rng.below(3) == 0 || keys.is_empty() {
                schema.remove("required");
            } else {
                let key = rng.pick(&keys).clone();
                schema.insert("required".into(), json!([key]));
            }
        }
    }
}

/// Whether the in-memory API server accepts `crd` (validated as kube-apiserver does).
async fn accepted(crd: &Value) -> bool {
    let Ok(typed) = serde_json::from_value::<CustomResourceDefinition>(crd.clone()) else {
        return false;
    };
    let client = kube::Client::new(fake_apiserver::FakeApiServer::new(), "default");
    let api: Api<CustomResourceDefinition> = Api::all(client);
    api.create(&PostParams::default(), &typed).await.is_ok()
}

/// Moves `crd` into a group of its own (`f<case>.<group>`), so that the cases `crds`
/// builds together neither share a CRD name nor a module.
fn own_group(crd: &mut Value, case: usize) {
    let group = format!("f{case}.{}", crd["spec"]["group"].as_str().unwrap_or(""));
    let plural = crd["spec"]["names"]["plural"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    crd["metadata"]["name"] = Value::from(format!("{plural}.{group}"));
    crd["spec"]["group"] = Value::from(group);
}

/// Kinds kube-apiserver accepts that are not plain Rust type names, or whose snake case is
/// not a module `generate` can write, or that the files import writes use for a type.
const KINDS: &[&str] = &[
    "Self",
    "type",
    "gadget",
    "String",
    "Super",
    "Crate",
    "my-kind",
    "Time",
    "Option",
    "Applyconfigurations",
    "FOOBar",
];

/// First labels of groups that are not module or accessor names `generate` takes as they
/// are, or that its output already uses.
const LABELS: &[&str] = &[
    "fn",
    "self",
    "super",
    "type",
    "client",
    "crds",
    "informers",
    "start",
    "1x",
    "a-b",
];

/// Versions kube-apiserver accepts, of the form `generate` reads or not.
const VERSIONS: &[&str] = &["type", "latest", "v1", "v2beta1", "v1alpha2"];

/// One CRD-level rename: the kind, a first label before the group, the first version or the
/// plural (with a `-`, which kube-apiserver accepts and accessors cannot take).
fn rename(rng: &mut Rng, crd: &mut Value) {
    match rng.below(4) {
        0 => crd["spec"]["names"]["kind"] = Value::from(*rng.pick(KINDS)),
        1 => {
            let group = format!(
                "{}.{}",
                rng.pick(LABELS),
                crd["spec"]["group"].as_str().unwrap_or("")
            );
            crd["spec"]["group"] = Value::from(group);
        }
        2 => {
            if let Some(v) = crd["spec"]["versions"].get_mut(0) {
                v["name"] = Value::from(*rng.pick(VERSIONS));
            }
        }
        _ => {
            let plural = format!(
                "{}-x",
                crd["spec"]["names"]["plural"].as_str().unwrap_or("")
            );
            crd["spec"]["names"]["plural"] = Value::from(plural);
        }
    }
    let name = format!(
        "{}.{}",
        crd["spec"]["names"]["plural"].as_str().unwrap_or(""),
        crd["spec"]["group"].as_str().unwrap_or("")
    );
    crd["metadata"]["name"] = Value::from(name);
}

/// A second CRD in the group and version of `crd` whose kind would share a Rust name with
/// its kind: `<Kind>Spec`, `<Kind>Status` or `<Kind>Fields` (import names its own types
/// apart), or the kind with another casing (`FooBar`, `FOOBar`: one file; refused).
fn neighbour(rng: &mut Rng, crd: &Value) -> Value {
    let mut other = crd.clone();
    let kind = crd["spec"]["names"]["kind"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let kind = match rng.below(4) {
        0 => format!("{kind}Spec"),
        1 => format!("{kind}Status"),
        2 => format!("{kind}Fields"),
        _ => {
            let mut chars = kind.chars();
            let first: String = chars.by_ref().take(2).collect();
            format!("{}{}", first.to_uppercase(), chars.as_str())
        }
    };
    let plural = format!("{}x", crd["spec"]["names"]["plural"].as_str().unwrap_or(""));
    other["spec"]["names"] = serde_json::json!({"kind": kind, "plural": plural});
    other["metadata"]["name"] = Value::from(format!(
        "{plural}.{}",
        crd["spec"]["group"].as_str().unwrap_or("")
    ));
    other
}

/// Imports `cases` (which `generate` accepted) into one crate at `dir` and runs `crds` on
/// it: it must write every CRD, and the API server must accept each. The failures, written
/// as [`failure`] does.
async fn crds_accepts(dir: &Path, cases: &[(usize, Value)]) -> Vec<PathBuf> {
    if cases.is_empty() {
        return Vec::new();
    }
    write(
        dir,
        "Cargo.toml",
        &support::manifest("import-fuzz-crds", &["schemars"]),
    );
    fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    write(
        dir,
        "src/lib.rs",
        "//! The fuzzer's cases.
#[rustfmt::skip]
pub mod apis;
",
    );
    for (case, crd) in cases {
        write(dir, &format!("crds/case-{case}.json"), &crd.to_string());
    }
    let all = |what: &str, output: &str| -> Vec<PathBuf> {
        cases
            .iter()
            .filter(|(case, _)| output.is_empty() || output.contains(&format!("/f{case}/")))
            .map(|(case, crd)| failure(*case, what, crd, output))
            .collect()
    };
    let import = run(
        dir,
        &[
            "import", "--input", "crds", "--output", "src/apis", "--owned",
        ],
    );
    if !import.status.success() {
        return all("import refused the cases together", &stderr(&import));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(["crds", "--input", "src/apis", "--output", "config/crd"])
        .output()
        .unwrap();
    if !out.status.success() {
        let err = stderr(&out);
        let named = all("crds refused what generate accepted", &err);
        return if named.is_empty() {
            all(&format!("crds refused what generate accepted: {err}"), "")
        } else {
            named
        };
    }
    let mut failures = Vec::new();
    for (case, crd) in cases {
        let name = crd["metadata"]["name"].as_str().unwrap_or("");
        let group = crd["spec"]["group"].as_str().unwrap_or("");
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or("");
        let file = dir.join(format!("config/crd/{group}_{plural}.yaml"));
        let built = fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_saphyr::from_str::<Value>(&t).ok());
        match built {
            Some(built) if accepted(&built).await => {}
            Some(built) => failures.push(failure(
                *case,
                &format!("the API server refused the CRD `crds` built for {name}"),
                crd,
                &serde_saphyr::to_string(&built).unwrap_or_default(),
            )),
            None => failures.push(failure(
                *case,
                &format!("`crds` wrote no {}", file.display()),
                crd,
                &stderr(&out),
            )),
        }
    }
    failures
}

fn failure(case: usize, what: &str, crd: &Value, output: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/import_fuzz/failures");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("case-{case}.yaml"));
    let mut text = format!("# {what}\n");
    for line in output.lines().take(40) {
        text.push_str(&format!("# {line}\n"));
    }
    text.push_str(&serde_saphyr::to_string(crd).unwrap());
    fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn what_import_accepts_generate_accepts() {
    let cases: usize = std::env::var("IMPORT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let seed: u64 = std::env::var("IMPORT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1e55);
    let corpus = corpus();
    assert!(corpus.len() >= 20, "the corpus: {} CRDs", corpus.len());
    let mut rng = Rng(seed | 1);
    let tmp = TempDir::new("import-fuzz");
    let crds_cases: usize = std::env::var("IMPORT_FUZZ_CRDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let (mut kept, mut imported, mut failures) = (0, 0, Vec::new());
    // Cases with a renamed kind, group, version or plural, and with a neighbour: imported,
    // refused.
    let (mut odd_names, mut odd_refused) = (0, 0);
    let mut for_crds = Vec::new();
    for case in 0..cases {
        let mut crd = rng.pick(&corpus).clone();
        let mut pointers = Vec::new();
        let versions = crd["spec"]["versions"].as_array().map_or(0, Vec::len);
        for v in 0..versions {
            schemas(
                &crd["spec"]["versions"][v]["schema"]["openAPIV3Schema"],
                format!("/spec/versions/{v}/schema/openAPIV3Schema"),
                &mut pointers,
            );
        }
        for _ in 0..=rng.below(3) {
            let pointer = rng.pick(&pointers).clone();
            mutate(&mut rng, &mut crd, &pointer);
        }
        own_group(&mut crd, case);
        // Names kube-apiserver accepts and `generate` might not: import maps them to names
        // it takes, or refuses them with a reason.
        let renamed = rng.below(4) == 0;
        if renamed {
            rename(&mut rng, &mut crd);
        }
        if !accepted(&crd).await {
            continue;
        }
        // Another kind beside it whose Rust names would meet its own.
        let second = (rng.below(8) == 0).then(|| neighbour(&mut rng, &crd));
        let second = match second {
            Some(other) if accepted(&other).await => Some(other),
            _ => None,
        };
        kept += 1;
        let odd = renamed || second.is_some();
        let dir = tmp.0.join(format!("case-{case}"));
        fs::create_dir_all(dir.join("crds")).unwrap();
        fs::write(dir.join("crds/crd.json"), crd.to_string()).unwrap();
        if let Some(other) = &second {
            fs::write(dir.join("crds/other.json"), other.to_string()).unwrap();
        }
        let import = run(&dir, &["import", "--input", "crds", "--output", "apis"]);
        match import.status.code() {
            Some(0) => {}
            // A refusal says why; a write error or an invalid file is import's bug.
            Some(1) => {
                odd_refused += usize::from(odd);
                let err = stderr(&import);
                if err.contains("(a bug)") || err.contains("cannot write") {
                    failures.push(failure(
                        case,
                        "import failed instead of refusing",
                        &crd,
                        &err,
                    ));
                }
                continue;
            }
            _ => {
                failures.push(failure(
                    case,
                    "import did not exit cleanly",
                    &crd,
                    &stderr(&import),
                ));
                continue;
            }
        }
        imported += 1;
        odd_names += usize::from(odd);
        let generate = run(
            &dir,
            &["generate", "--input", "apis", "--output", "generated"],
        );
        if !generate.status.success() {
            failures.push(failure(
                case,
                "generate refused what import wrote",
                &crd,
                &stderr(&generate),
            ));
        } else if for_crds.len() < crds_cases && second.is_none() && !renamed {
            for_crds.push((case, crd));
        }
        let _ = fs::remove_dir_all(&dir);
    }
    failures.extend(crds_accepts(&tmp.0.join("crate"), &for_crds).await);
    eprintln!(
        "import fuzz: {cases} cases from seed {seed}: {kept} accepted by the API server, {imported} imported ({odd_names} with odd names or a neighbour; {odd_refused} such refused), {} through `crds`, {} failures",
        for_crds.len(),
        failures.len()
    );
    assert!(kept > cases / 4, "too few cases kept: {kept} of {cases}");
    assert!(
        failures.is_empty(),
        "{} failures, written to:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
