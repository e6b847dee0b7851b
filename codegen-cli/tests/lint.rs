//! `kube-codegen lint`: one case per rule, each with the exact message and location it prints
//! (`tests/testdata/lint/<case>.stderr`, refreshed with `UPDATE_GOLDEN=1`), silences with and
//! without a reason, and the sample controller's API tree linting clean.

use std::path::{Path, PathBuf};

mod support;

use support::{TempDir, repo, run, stderr, write};

/// A kind `Widget` whose spec has a clean `name` plus `spec`, whose status has a clean
/// `observedGeneration` plus `status`, and `extra` items after them.
fn widget(spec: &str, status: &str, extra: &str) -> String {
    format!(
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

/// +genclient
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "demo.example.com", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {{
    /// +required
    /// +kubebuilder:validation:MaxLength=63
    pub name: String,
{spec}}}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {{
    /// +optional
    pub observed_generation: Option<i64>,
{status}}}
{extra}"#
    )
}

/// Writes the tree `apis/demo/v1/widget.rs` with `text` under `dir`.
fn tree(dir: &Path, text: &str) {
    write(dir, "apis/mod.rs", "pub mod demo;\n");
    write(dir, "apis/demo/mod.rs", "pub mod v1;\n");
    write(
        dir,
        "apis/demo/v1/mod.rs",
        "//! +groupName=demo.example.com\npub mod widget;\n",
    );
    write(dir, "apis/demo/v1/widget.rs", text);
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/lint")
        .join(format!("{name}.stderr"))
}

/// Lints `text` as the tree's one kind; checks the exit code and the output against the
/// case's golden file.
fn case(name: &str, text: &str, code: i32) {
    let dir = TempDir::new(name);
    tree(&dir.0, text);
    let out = run(&dir.0, &["lint", "--input", "apis"]);
    let got = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{name}:\n{got}");
    let path = golden(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(
        got,
        want,
        "{name}: the output differs from {}",
        path.display()
    );
}

const CONDITION: &str = "k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition";

/// Each rule, on one field: its message, `file:line:col` and caret.
#[test]
fn each_rule_reports_its_message_at_the_field() {
    let cases: &[(&str, String)] = &[
        (
            "conditions",
            widget(
                "",
                &format!(
                    "    /// +optional\n    /// +kubebuilder:validation:MaxItems=8\n    #[serde(default)]\n    pub conditions: Vec<{CONDITION}>,\n"
                ),
                "",
            ),
        ),
        (
            "conditions-fields",
            widget(
                "",
                "    /// +optional\n    /// +listType=map\n    /// +listMapKey=type\n    /// +kubebuilder:validation:MaxItems=8\n    #[serde(default)]\n    pub conditions: Vec<WidgetCondition>,\n",
                "\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct WidgetCondition {\n    /// +required\n    /// +kubebuilder:validation:MaxLength=316\n    #[serde(rename = \"type\")]\n    pub type_: String,\n    /// +required\n    /// +kubebuilder:validation:Enum=True;False;Unknown\n    pub status: String,\n}\n",
            ),
        ),
        (
            "optional-or-required",
            widget(
                "    /// +kubebuilder:validation:Minimum=1\n    pub replicas: i32,\n",
                "",
                "",
            ),
        ),
        (
            "optional-fields",
            widget(
                "    /// +optional\n    #[serde(default)]\n    pub replicas: i32,\n",
                "",
                "",
            ),
        ),
        (
            "required-fields",
            widget(
                "    /// +required\n    pub replicas: Option<i32>,\n",
                "",
                "",
            ),
        ),
        (
            "integers",
            widget("    /// +required\n    pub replicas: u32,\n", "", ""),
        ),
        (
            "no-floats",
            widget("    /// +optional\n    pub ratio: Option<f64>,\n", "", ""),
        ),
        (
            "max-length",
            widget(
                "    /// +optional\n    pub note: Option<String>,\n    /// +optional\n    /// +kubebuilder:validation:MaxItems=4\n    #[serde(default)]\n    pub tags: Vec<String>,\n",
                "",
                "",
            ),
        ),
        (
            "string-enums",
            widget(
                "    /// +required\n    pub mode: Mode,\n",
                "",
                "\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode {\n    Fixed(i32),\n    Ratio(i32),\n}\n",
            ),
        ),
        (
            "status-optional",
            widget("", "    pub ready_replicas: i32,\n", ""),
        ),
        (
            "no-bools",
            widget("    /// +optional\n    pub paused: Option<bool>,\n", "", ""),
        ),
        (
            "no-maps",
            widget(
                "    /// +optional\n    pub limits: Option<std::collections::BTreeMap<String, i32>>,\n    /// +optional\n    /// +kubebuilder:validation:MaxItems=4\n    #[serde(default)]\n    pub groups: Vec<std::collections::BTreeMap<String, Port>>,\n    /// +optional\n    pub selector: Option<std::collections::BTreeMap<String, String>>,\n",
                "",
                "\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Port {\n    /// +required\n    pub number: i32,\n}\n",
            ),
        ),
        (
            "no-durations",
            widget(
                "    /// +optional\n    pub timeout: Option<std::time::Duration>,\n",
                "",
                "",
            ),
        ),
        (
            "json-names",
            widget(
                "    /// +optional\n    #[serde(rename = \"max_surge\")]\n    pub max_surge: Option<i32>,\n",
                "",
                "",
            ),
        ),
        (
            "no-flatten",
            widget(
                "    #[serde(flatten)]\n    pub extra: Extra,\n",
                "",
                "\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Extra {\n    /// +optional\n    pub size: Option<i32>,\n}\n",
            ),
        ),
    ];
    for (name, text) in cases {
        case(name, text, 1);
    }
}

/// A kind that follows every rule lints clean, exit 0.
#[test]
fn a_clean_kind_lints_clean() {
    let dir = TempDir::new("clean");
    tree(&dir.0, &widget("", "", ""));
    let out = run(&dir.0, &["lint", "--input", "apis"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "kube-codegen: lint clean: 1 kind version\n");
}

/// A silence with a reason, on the field or on its struct, silences and is counted.
#[test]
fn a_silence_with_a_reason_silences_its_rule_only() {
    let dir = TempDir::new("silenced");
    let spec = "    /// +optional\n    /// +kube-codegen:lint:ignore=no-bools mirrors a Go API's field\n    pub paused: Option<bool>,\n";
    tree(&dir.0, &widget(spec, "", ""));
    let out = run(&dir.0, &["lint", "--input", "apis"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "kube-codegen: lint clean: 1 kind version, 1 silenced\n"
    );

    // A line comment, as Go writes markers, works too; another rule is not silenced.
    let spec = "    // +kube-codegen:lint:ignore=integers a port number\n    /// +optional\n    pub paused: Option<bool>,\n";
    tree(&dir.0, &widget(spec, "", ""));
    let out = run(&dir.0, &["lint", "--input", "apis"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("error[no-bools]"), "{}", stderr(&out));

    // On the struct: every field of it.
    let text = widget("", "    pub ready_replicas: i32,\n    pub up_to_date_replicas: i32,\n", "")
        .replace(
            "pub struct WidgetStatus",
            "/// +kube-codegen:lint:ignore=status-optional the controller always writes both\npub struct WidgetStatus",
        );
    tree(&dir.0, &text);
    let out = run(&dir.0, &["lint", "--input", "apis"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 silenced"), "{}", stderr(&out));
}

/// A silence without a reason, or naming no rule, is a mistake in the input: exit 2, at the
/// marker, and nothing is silenced by it.
#[test]
fn a_silence_without_a_reason_is_an_error() {
    case(
        "silence-without-reason",
        &widget(
            "    /// +optional\n    /// +kube-codegen:lint:ignore=no-bools\n    pub paused: Option<bool>,\n",
            "",
            "",
        ),
        2,
    );
    case(
        "silence-unknown-rule",
        &widget(
            "    /// +optional\n    /// +kube-codegen:lint:ignore=no-bool a reason\n    pub paused: Option<bool>,\n",
            "",
            "",
        ),
        2,
    );
}

/// Input that is not a tree is bad input (exit 2), as for `compat`.
#[test]
fn an_unreadable_tree_exits_2() {
    let dir = TempDir::new("missing");
    let out = run(&dir.0, &["lint", "--input", "no-such-dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot read `no-such-dir`"),
        "{}",
        stderr(&out)
    );
}

/// The sample controller's API types lint clean (their silences give reasons).
#[test]
fn the_sample_controllers_api_tree_lints_clean() {
    let input = repo().join("sample-controller/src/apis");
    let out = run(&repo(), &["lint", "--input", input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lint clean: 3 kind versions"),
        "{}",
        stderr(&out)
    );
}

/// `--rules` lists every rule with what it asks for.
#[test]
fn the_rules_are_listed() {
    let dir = TempDir::new("rules");
    let out = run(&dir.0, &["lint", "--rules"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    for id in [
        "conditions",
        "optional-or-required",
        "optional-fields",
        "required-fields",
        "integers",
        "no-floats",
        "max-length",
        "string-enums",
        "status-optional",
        "no-bools",
        "no-maps",
        "no-durations",
        "json-names",
        "no-flatten",
    ] {
        assert!(
            listed.lines().any(|l| l.starts_with(id)),
            "{id} in\n{listed}"
        );
    }
}
