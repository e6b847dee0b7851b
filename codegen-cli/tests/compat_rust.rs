//! `kube-codegen compat --input`: a crate's API types changed in every way the gate
//! classifies, each finding reported at the Rust field or marker that made it (file, line,
//! caret column), with its class, acknowledgements honoured, and no breaking finding for a
//! compatible change; a kind whose hub is marked `+kube-codegen:conversion` is compared as
//! deployed, converting through the webhook.
//!
//! The baseline is what `kube-codegen crds` writes for the crate's first API tree; the
//! tree is then changed in place and compared. The crate shares this workspace's target
//! directory, lock file and profile, so only the crate itself and the runner are compiled.

mod support;

use std::fs;
use std::process::{Command, Output};

use serde_json::Value;
use support::{TempDir, stderr, target_dir, write};

/// A user's crate, removed when dropped.
type Crate = TempDir;

fn fresh_crate(name: &str) -> Crate {
    support::api_crate(name)
}

/// Writes an API tree (relative path, text) over `src/apis`, replacing what was there.
fn api_tree(krate: &Crate, files: &[(&str, &str)]) {
    let _ = fs::remove_dir_all(krate.0.join("src/apis"));
    for (rel, text) in files {
        write(&krate.0, &format!("src/apis/{rel}"), text);
    }
}

fn cli(krate: &Crate, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(&krate.0)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(args)
        .output()
        .unwrap()
}

const APIS_MOD: &str = "pub mod shop;\npub mod tools;\n";

const WIDGET_BEFORE: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::types::{Color, Inner, Port};

/// A widget.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// +kubebuilder:validation:Maximum=10
    pub max_bound: i32,
    /// +kubebuilder:validation:Minimum=1
    pub min_bound: i32,
    pub removed: Option<String>,
    pub retyped: Option<i32>,
    pub reformatted: Option<i32>,
    pub made_required: Option<String>,
    /// +required
    pub made_optional: String,
    pub color: Option<Color>,
    /// +kubebuilder:validation:MaxLength=63
    pub name_len: Option<String>,
    pub min_len: Option<String>,
    /// +kubebuilder:validation:MaxItems=8
    pub tags: Option<Vec<String>>,
    pub items_bound: Option<Vec<String>>,
    /// +kubebuilder:validation:MinItems=2
    pub min_items: Option<Vec<String>>,
    pub patterned: Option<String>,
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub repatterned: Option<String>,
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub unpatterned: Option<String>,
    /// +listType=atomic
    pub listed: Option<Vec<String>>,
    /// +listType=map
    /// +listMapKey=name
    pub ports: Option<Vec<Port>>,
    /// +kubebuilder:pruning:PreserveUnknownFields
    pub extra: Option<Inner>,
    pub ruled: Option<String>,
    /// +kubebuilder:validation:XValidation:rule="self.size() < 10"
    pub reruled: Option<String>,
    /// +kubebuilder:default=1
    pub defaulted: Option<i32>,
    /// +kubebuilder:validation:MultipleOf=2
    pub multiple: Option<i32>,
    /// +kubebuilder:validation:Maximum=5
    pub loosened: Option<i32>,
    /// +kubebuilder:validation:Enum=a;b;c
    pub enum_marker: Option<String>,
    /// +kubebuilder:validation:Enum=a;b
    pub enum_grown: Option<String>,
    /// The old words.
    pub described: Option<String>,
    #[serde(rename = "oldName")]
    pub renamed: Option<String>,
    pub nested: Option<Inner>,
    pub acked: Option<i32>,
    pub labels: Option<std::collections::BTreeMap<String, String>>,
}

/// What a widget reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    pub ready: Option<bool>,
    pub count: Option<i32>,
}
"#;

const WIDGET_AFTER: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::types::{Color, Inner, Port};

/// A widget.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced, status = "WidgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// +kubebuilder:validation:Maximum=5
    pub max_bound: i32,
    /// +kubebuilder:validation:Minimum=3
    pub min_bound: i32,
    pub retyped: Option<String>,
    pub reformatted: Option<i64>,
    pub made_required: String,
    pub made_optional: Option<String>,
    pub color: Option<Color>,
    /// +kubebuilder:validation:MaxLength=32
    pub name_len: Option<String>,
    /// +kubebuilder:validation:MinLength=1
    pub min_len: Option<String>,
    /// +kubebuilder:validation:MaxItems=4
    pub tags: Option<Vec<String>>,
    /// +kubebuilder:validation:items:MaxLength=20
    pub items_bound: Option<Vec<String>>,
    pub min_items: Option<Vec<String>>,
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub patterned: Option<String>,
    /// +kubebuilder:validation:Pattern=`^[a-z0-9]+$`
    pub repatterned: Option<String>,
    pub unpatterned: Option<String>,
    /// +listType=set
    pub listed: Option<Vec<String>>,
    /// +listType=map
    /// +listMapKey=port
    pub ports: Option<Vec<Port>>,
    pub extra: Option<Inner>,
    /// +kubebuilder:validation:XValidation:rule="self.size() < 10"
    pub ruled: Option<String>,
    /// +kubebuilder:validation:XValidation:rule="self.size() < 5"
    pub reruled: Option<String>,
    /// +kubebuilder:default=2
    pub defaulted: Option<i32>,
    /// +kubebuilder:validation:MultipleOf=3
    pub multiple: Option<i32>,
    /// +kubebuilder:validation:Maximum=50
    pub loosened: Option<i32>,
    /// +kubebuilder:validation:Enum=a;b
    pub enum_marker: Option<String>,
    /// +kubebuilder:validation:Enum=a;b;c
    pub enum_grown: Option<String>,
    /// The new words.
    pub described: Option<String>,
    #[serde(rename = "newName")]
    pub renamed: Option<String>,
    pub nested: Option<Inner>,
    /// +kube-codegen:compat:acknowledge="no release ever set it"
    pub acked: Option<String>,
    pub labels: Option<std::collections::BTreeMap<String, i32>>,
    pub added: Option<String>,
}

/// What a widget reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    pub ready: Option<bool>,
}
"#;

const TYPES_BEFORE: &str = r#"use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A color.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Color {
    Red,
    Blue,
    Green,
}

/// A port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Port {
    pub name: String,
    pub port: i32,
}

/// Something nested.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Inner {
    pub kept: Option<String>,
    pub gone: Option<String>,
}
"#;

const TYPES_AFTER: &str = r#"use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A color.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Color {
    Red,
    Blue,
}

/// A port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Port {
    pub name: String,
    pub port: i32,
}

/// Something nested.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Inner {
    pub kept: Option<String>,
}
"#;

/// Kinds whose CRD as a whole changes: scope, plural, kind.
const OTHERS_BEFORE: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A gadget.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gadget", namespaced)]
pub struct GadgetSpec {
    pub size: Option<i32>,
}

/// A gizmo.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gizmo", plural = "gizmos", namespaced)]
pub struct GizmoSpec {
    pub size: Option<i32>,
}

/// A doodad.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Doodad", plural = "doodads", namespaced)]
pub struct DoodadSpec {
    pub size: Option<i32>,
}
"#;

const OTHERS_AFTER: &str = r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A gadget.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gadget")]
pub struct GadgetSpec {
    pub size: Option<i32>,
}

/// A gizmo.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gizmo", plural = "gizmoes", namespaced)]
pub struct GizmoSpec {
    pub size: Option<i32>,
}

/// A doodad.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Doohickey", plural = "doodads", namespaced)]
pub struct DoodadSpec {
    pub size: Option<i32>,
}
"#;

fn tool(group: &str) -> String {
    format!(
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

/// A tool.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "{group}", version = "v1", kind = "Tool", namespaced)]
pub struct ToolSpec {{
    pub size: Option<i32>,
}}
"#
    )
}

/// A kind served in v1 only at first, in v1 and v2 after.
fn thing(version: &str, storage: bool) -> String {
    let storage = if storage {
        "/// +kubebuilder:storageversion\n"
    } else {
        ""
    };
    format!(
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

/// A thing.
{storage}#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "{version}", kind = "Thing", namespaced)]
pub struct ThingSpec {{
    pub size: Option<i32>,
}}
"#
    )
}

/// The API tree: the Widget (schema changes), Gadget, Gizmo and Doodad (changes to their
/// CRDs as a whole), Thing (a new version after), and Tool in a group of its own.
fn tree(after: bool) -> Vec<(String, String)> {
    let pick = |before: &str, now: &str| if after { now } else { before }.to_owned();
    let tool_group = pick("tools.example.com", "tooling.example.com");
    let mut files = vec![
        ("mod.rs".into(), APIS_MOD.into()),
        ("shop/mod.rs".into(), pick("pub mod v1;\n", "pub mod v1;\npub mod v2;\n")),
        (
            "shop/v1/mod.rs".into(),
            "//! +groupName=shop.example.com\npub mod widget;\npub mod types;\npub mod others;\npub mod thing;\n".into(),
        ),
        ("shop/v1/widget.rs".into(), pick(WIDGET_BEFORE, WIDGET_AFTER)),
        ("shop/v1/types.rs".into(), pick(TYPES_BEFORE, TYPES_AFTER)),
        ("shop/v1/others.rs".into(), pick(OTHERS_BEFORE, OTHERS_AFTER)),
        ("shop/v1/thing.rs".into(), thing("v1", after)),
        ("tools/mod.rs".into(), "pub mod v1;\n".into()),
        (
            "tools/v1/mod.rs".into(),
            format!("//! +groupName={tool_group}\npub mod tool;\n"),
        ),
        ("tools/v1/tool.rs".into(), tool(&tool_group)),
    ];
    if after {
        files.push((
            "shop/v2/mod.rs".into(),
            "//! +groupName=shop.example.com\npub mod thing;\n".into(),
        ));
        files.push(("shop/v2/thing.rs".into(), thing("v2", false)));
    }
    files
}

/// One expected finding: what it is, its CRD, version, path, change id, class, and where it
/// is shown: the file (below `src/apis`), a text that picks the line, and the text the caret
/// starts under on that line.
struct Row {
    what: &'static str,
    crd: &'static str,
    version: Option<&'static str>,
    path: &'static str,
    change: &'static str,
    class: &'static str,
    file: &'static str,
    line: &'static str,
    caret: &'static str,
}

const WIDGETS: &str = "widgets.shop.example.com";
const W: &str = "shop/v1/widget.rs";

const fn widget(
    what: &'static str,
    path: &'static str,
    change: &'static str,
    class: &'static str,
    line: &'static str,
    caret: &'static str,
) -> Row {
    Row {
        what,
        crd: WIDGETS,
        version: Some("v1"),
        path,
        change,
        class,
        file: W,
        line,
        caret,
    }
}

const fn crd(
    what: &'static str,
    crd: &'static str,
    path: &'static str,
    change: &'static str,
    file: &'static str,
    line: &'static str,
    caret: &'static str,
) -> Row {
    Row {
        what,
        crd,
        version: None,
        path,
        change,
        class: "breaking",
        file,
        line,
        caret,
    }
}

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // Tightening or breaking, at the marker that sets the changed keyword.
    widget("maximum lowered", "spec.maxBound", "bound-tightened", "tightening", "Maximum=5", "5"),
    widget("minimum raised", "spec.minBound", "bound-tightened", "tightening", "Minimum=3", "3"),
    widget("maxLength lowered", "spec.nameLen", "bound-tightened", "tightening", "MaxLength=32", "32"),
    widget("minLength added", "spec.minLen", "bound-tightened", "tightening", "MinLength=1", "1"),
    widget("maxItems lowered", "spec.tags", "bound-tightened", "tightening", "MaxItems=4", "4"),
    widget("items bounded", "spec.itemsBound[*]", "bound-tightened", "tightening", "items:MaxLength=20", "20"),
    widget("multipleOf changed", "spec.multiple", "bound-tightened", "tightening", "MultipleOf=3", "3"),
    widget("pattern added", "spec.patterned", "pattern-changed", "tightening", "Pattern=`^[a-z]+$`", "`"),
    widget("pattern changed", "spec.repatterned", "pattern-changed", "tightening", "Pattern=`^[a-z0-9]+$`", "`"),
    widget("enum value removed (marker)", "spec.enumMarker", "enum-value-removed", "tightening", "Enum=a;b\n", "a;b"),
    widget("list type changed", "spec.listed", "list-type-changed", "breaking", "+listType=set", "set"),
    widget("list map keys changed", "spec.ports", "list-type-changed", "breaking", "+listMapKey=port", "port"),
    widget("CEL rule added", "spec.ruled", "cel-rule-added", "tightening", "size() < 10", "rule="),
    widget("CEL rule changed", "spec.reruled", "cel-rule-changed", "tightening", "size() < 5", "rule="),
    widget("default changed", "spec.defaulted", "default-changed", "breaking", "default=2", "2"),
    // Tightening or breaking, at the field's type.
    widget("type changed", "spec.retyped", "type-changed", "breaking", "pub retyped:", "Option<String>"),
    widget("made required", "spec.madeRequired", "field-required", "tightening", "pub made_required:", "String"),
    widget("null refused", "spec.madeRequired", "nullable-removed", "tightening", "pub made_required:", "String"),
    widget("enum value removed (Rust enum)", "spec.color", "enum-value-removed", "tightening", "pub color:", "Option<Color>"),
    widget("map value type changed", "spec.labels[*]", "type-changed", "breaking", "pub labels:", "Option<"),
    // Breaking, at the field, or the struct a field left.
    widget("preserve-unknown-fields removed", "spec.extra", "preserve-unknown-removed", "breaking", "pub extra:", "extra"),
    widget("field removed", "spec.removed", "field-removed", "breaking", "pub struct WidgetSpec", "WidgetSpec"),
    widget("field renamed (old name)", "spec.oldName", "field-removed", "breaking", "pub struct WidgetSpec", "WidgetSpec"),
    widget("status field removed", "status.count", "field-removed", "breaking", "pub struct WidgetStatus", "WidgetStatus"),
    Row { file: "shop/v1/types.rs", ..widget("nested field removed", "spec.nested.gone", "field-removed", "breaking", "pub struct Inner", "Inner") },
    Row { file: "shop/v1/types.rs", ..widget("nested field removed, second use", "spec.extra.gone", "field-removed", "breaking", "pub struct Inner", "Inner") },
    // Breaking, acknowledged at the field.
    widget("acknowledged type change", "spec.acked", "type-changed", "breaking", "pub acked:", "Option<String>"),
    // Breaking changes to the CRD as a whole, at the `#[kube(...)]` key.
    crd("scope changed", "gadgets.shop.example.com", "spec.scope", "scope-changed", "shop/v1/others.rs", "kind = \"Gadget\"", "kube("),
    crd("plural changed", "gizmos.shop.example.com", "spec.names.plural", "plural-changed", "shop/v1/others.rs", "kind = \"Gizmo\"", "\"gizmoes\""),
    crd("kind changed", "doodads.shop.example.com", "spec.names.kind", "kind-changed", "shop/v1/others.rs", "plural = \"doodads\"", "\"Doohickey\""),
    crd("group changed", "tools.tools.example.com", "spec.group", "group-changed", "tools/v1/tool.rs", "#[kube(", "\"tooling.example.com\""),
    // Compatible.
    widget("maximum raised", "spec.loosened", "validation-loosened", "compatible", "Maximum=50", "50"),
    widget("enum value added", "spec.enumGrown", "enum-value-added", "compatible", "Enum=a;b;c", "a;b;c"),
    widget("no longer required", "spec.madeOptional", "validation-loosened", "compatible", "pub made_optional:", "made_optional"),
    widget("null accepted", "spec.madeOptional", "nullable-added", "compatible", "pub made_optional:", "Option<String>"),
    widget("minItems removed", "spec.minItems", "validation-loosened", "compatible", "pub min_items:", "min_items"),
    widget("pattern removed", "spec.unpatterned", "validation-loosened", "compatible", "pub unpatterned:", "unpatterned"),
    widget("format int32 to int64 (int64 checks what the type does)", "spec.reformatted", "validation-loosened", "compatible", "pub reformatted:", "reformatted"),
    widget("optional field added", "spec.added", "field-added", "compatible", "pub added:", "added"),
    widget("field renamed (new name)", "spec.newName", "field-added", "compatible", "pub renamed:", "renamed"),
    Row {
        what: "version added",
        crd: "things.shop.example.com",
        version: Some("v2"),
        path: "",
        change: "version-added",
        class: "compatible",
        file: "shop/v2/thing.rs",
        line: "pub struct ThingSpec",
        caret: "ThingSpec",
    },
];

/// The 1-based line of `needle` in `text` and the column of `caret` on it.
fn line_and_column(text: &str, needle: &str, caret: &str) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("no `{needle}` in\n{text}"));
    let line = text[..at].matches('\n').count() + 1;
    let line_text = text.lines().nth(line - 1).unwrap();
    let column = line_text
        .find(caret)
        .unwrap_or_else(|| panic!("no `{caret}` on `{line_text}`"));
    (line, line_text[..column].chars().count() + 1)
}

fn write_tree(krate: &Crate, after: bool) {
    let files = tree(after);
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    api_tree(krate, &files);
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_change_in_the_rust_types_is_classified_and_shown_at_its_field_or_marker() {
    assert!(ROWS.len() >= 30, "the table covers at least 30 changes");
    let krate = fresh_crate("compat-rust");
    write_tree(&krate, false);
    let out = cli(
        &krate,
        &["crds", "--input", "src/apis", "--output", "baseline"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    write_tree(&krate, true);
    let json = cli(
        &krate,
        &[
            "compat",
            "--baseline",
            "baseline",
            "--input",
            "src/apis",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.status.code(), Some(1), "{}", stderr(&json));
    let findings: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let mut findings = findings.as_array().unwrap().clone();
    let mut failures = Vec::new();
    for row in ROWS {
        let found = findings.iter().position(|f| {
            f["crd"] == row.crd
                && f["version"].as_str() == row.version
                && f["path"] == row.path
                && f["change"] == row.change
        });
        let Some(index) = found else {
            failures.push(format!(
                "{}: no `{}` finding at {}",
                row.what, row.change, row.path
            ));
            continue;
        };
        let f = findings.remove(index);
        let text = fs::read_to_string(krate.0.join("src/apis").join(row.file)).unwrap();
        let (line, column) = line_and_column(&text, row.line, row.caret);
        let want_file = format!("src/apis/{}", row.file);
        let got = (
            f["class"].as_str(),
            f["file"].as_str(),
            f["line"].as_u64(),
            f["column"].as_u64(),
        );
        let want = (
            Some(row.class),
            Some(want_file.as_str()),
            Some(line as u64),
            Some(column as u64),
        );
        if got != want {
            failures.push(format!("{}: got {got:?}, want {want:?}", row.what));
        }
        let acknowledged = f["acknowledged"].as_str();
        let want_ack = (row.path == "spec.acked").then_some("no release ever set it");
        if acknowledged != want_ack {
            failures.push(format!(
                "{}: acknowledged {acknowledged:?}, want {want_ack:?}",
                row.what
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing else: in particular, no breaking finding for a compatible change.
    assert!(findings.is_empty(), "unexpected findings: {findings:#?}");

    // The text report: rustc's layout, as `generate` shows a bad marker.
    let text = cli(
        &krate,
        &["compat", "--baseline", "baseline", "--input", "src/apis"],
    );
    assert_eq!(text.status.code(), Some(1));
    let report = stdout(&text);
    assert!(
        report.contains(
            "tightening: widgets.shop.example.com v1: spec.maxBound: maximum changed from 10 to 5: new objects, and writes that change spec.maxBound, must pass; stored objects stay readable, and writable while it is left unchanged (validation ratcheting, Kubernetes 1.30 and later) [bound-tightened]\n  --> src/apis/shop/v1/widget.rs:12:41\n   |\n12 |     /// +kubebuilder:validation:Maximum=5\n   |                                         ^\n"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "acknowledged breaking: widgets.shop.example.com v1: spec.acked: type changed from integer to string: stored values of the old type no longer fit, and clients of one type fail on the other [type-changed]\n  --> src/apis/shop/v1/widget.rs:61:16\n   |\n61 |     pub acked: Option<String>,\n   |                ^^^^^^^^^^^^^^\n  = note: acknowledged at src/apis/shop/v1/widget.rs:60:42: no release ever set it\n"
        ),
        "{report}"
    );
    let breaking = ROWS.iter().filter(|r| r.class == "breaking").count() - 1;
    let tightening = ROWS.iter().filter(|r| r.class == "tightening").count();
    assert!(
        stderr(&text).contains(&format!(
            "error: {} changes, {breaking} breaking, {tightening} tightening (1 more acknowledged)",
            ROWS.len()
        )),
        "{}",
        stderr(&text)
    );

    // Against a baseline of the changed tree: an acknowledged change alone passes, and an
    // acknowledgement that covers nothing is pointed out.
    let out = cli(
        &krate,
        &["crds", "--input", "src/apis", "--output", "baseline"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let widget = fs::read_to_string(krate.0.join("src/apis").join(W)).unwrap();
    write(
        &krate.0,
        &format!("src/apis/{W}"),
        &widget
            .replace("pub acked: Option<String>", "pub acked: Option<bool>")
            .replace(
                "pub added: Option<String>",
                "/// +kube-codegen:compat:acknowledge=\"left from the last release\"\n    pub added: Option<String>",
            ),
    );
    let out = cli(
        &krate,
        &["compat", "--baseline", "baseline", "--input", "src/apis"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.starts_with("acknowledged breaking: widgets.shop.example.com v1: spec.acked: type changed from string to boolean: stored values of the old type no longer fit, and clients of one type fail on the other [type-changed]\n"), "{report}");
    assert!(
        report.contains("warning: widgets.shop.example.com v1: `+kube-codegen:compat:acknowledge` acknowledges no breaking or tightening change against this baseline; remove it once the baseline has the change\n  --> src/apis/shop/v1/widget.rs:63:42\n"),
        "{report}"
    );
    assert!(
        stderr(&out).contains("1 change, 0 breaking, 0 tightening (1 more acknowledged)"),
        "{}",
        stderr(&out)
    );
}

/// A kind in two versions whose fields differ: `hub` is the storage version, marked
/// `+kube-codegen:conversion` when `convert`.
fn gear(version: &str, hub: bool, convert: bool) -> String {
    let mut markers = String::new();
    if hub {
        markers.push_str("/// +kubebuilder:storageversion\n");
    }
    if convert {
        markers.push_str("/// +kube-codegen:conversion\n");
    }
    let field = if version == "v1" { "size" } else { "count" };
    format!(
        r#"use kube::CustomResource;
use schemars::JsonSchema;
use serde::{{Deserialize, Serialize}};

/// A gear.
{markers}#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "gears.example.com", version = "{version}", kind = "Gear", namespaced)]
pub struct GearSpec {{
    pub {field}: Option<i32>,
}}
"#
    )
}

/// The gears tree: v1 alone, or v1 and v2 with v2 the storage version (the hub), marked
/// `+kube-codegen:conversion` when `convert`.
fn gears(after: bool, convert: bool) -> Vec<(String, String)> {
    let mut files = vec![
        ("mod.rs".to_owned(), "pub mod gears;\n".to_owned()),
        (
            "gears/v1/mod.rs".to_owned(),
            "//! +groupName=gears.example.com\npub mod gear;\n".to_owned(),
        ),
        ("gears/v1/gear.rs".to_owned(), gear("v1", false, false)),
    ];
    if after {
        files.push((
            "gears/mod.rs".to_owned(),
            "pub mod v1;\npub mod v2;\n".to_owned(),
        ));
        files.push((
            "gears/v2/mod.rs".to_owned(),
            "//! +groupName=gears.example.com\npub mod gear;\n".to_owned(),
        ));
        files.push(("gears/v2/gear.rs".to_owned(), gear("v2", true, convert)));
    } else {
        files.push(("gears/mod.rs".to_owned(), "pub mod v1;\n".to_owned()));
    }
    files
}

/// `(change, class)` of each finding of a JSON report, sorted.
fn changes(out: &Output) -> Vec<(String, String)> {
    let list: Value = serde_json::from_str(&stdout(out)).unwrap();
    let mut list: Vec<(String, String)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["change"].as_str().unwrap().to_owned(),
                f["class"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    list.sort();
    list
}

/// The storage version moved to a version with other fields: with the hub marked
/// `+kube-codegen:conversion`, the crate serves the conversion webhook, which the deployed
/// CRD converts through (`crds --kustomize` patches it in beside the CRD files, which name no
/// Service), so the move is compatible; without it, objects stored as v1 would be read as v2
/// unchanged, which is breaking.
#[test]
fn a_conversion_hub_is_compared_as_converting_through_the_webhook() {
    let krate = fresh_crate("compat-conversion");
    let write_gears = |after: bool, convert: bool| {
        let files = gears(after, convert);
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        api_tree(&krate, &files);
    };
    write_gears(false, false);
    let out = cli(
        &krate,
        &["crds", "--input", "src/apis", "--output", "baseline"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let compat = || {
        cli(
            &krate,
            &[
                "compat",
                "--baseline",
                "baseline",
                "--input",
                "src/apis",
                "--format",
                "json",
            ],
        )
    };

    write_gears(true, true);
    let out = compat();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let compatible = |change: &str| (change.to_owned(), "compatible".to_owned());
    assert_eq!(
        changes(&out),
        [
            compatible("storage-version-changed"),
            compatible("version-added")
        ]
    );

    write_gears(true, false);
    let out = compat();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        changes(&out),
        [
            (
                "storage-changed-without-conversion".to_owned(),
                "breaking".to_owned()
            ),
            compatible("version-added"),
        ]
    );
}
