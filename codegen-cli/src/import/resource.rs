//! What a version says of its resource, beside the schema: the `#[kube(...)]` arguments
//! (names, scope, status, scale, printer columns, selectable fields) and the `+genclient`
//! and CRD-level `+kubebuilder:` markers (approval annotation, subresources, storage,
//! served, deprecation).

use serde_json::{Map, Value};

use super::emit::{VersionInput, lit, text};
use super::types::{self, Exception};
use crate::json;

/// The resource's `#[kube(...)]` arguments: names (with `root` when the kind's Rust type
/// `rust_kind` is not the kind), scope, status, scale, printer columns, selectable fields
/// and the root description.
pub(super) fn kube_attrs(
    crd: &Value,
    v: &Value,
    root: &Map<String, Value>,
    status: Option<&str>,
    rust_kind: &str,
) -> Vec<String> {
    let group = text(crd, "/spec/group");
    let kind = text(crd, "/spec/names/kind");
    let plural = text(crd, "/spec/names/plural");
    let version = text(v, "/name");
    let mut kube: Vec<String> = vec![
        format!("group = {}", lit(group)),
        format!("version = {}", lit(version)),
        format!("kind = {}", lit(kind)),
        format!("plural = {}", lit(plural)),
    ];
    if rust_kind != kind {
        kube.push(format!("root = {}", lit(rust_kind)));
    }
    let singular = text(crd, "/spec/names/singular");
    if !singular.is_empty() && singular != kind.to_lowercase() {
        kube.push(format!("singular = {}", lit(singular)));
    }
    for s in json::strings(crd.pointer("/spec/names/shortNames")) {
        kube.push(format!("shortname = {}", lit(s)));
    }
    for c in json::strings(crd.pointer("/spec/names/categories")) {
        kube.push(format!("category = {}", lit(c)));
    }
    let namespaced = text(crd, "/spec/scope") == "Namespaced";
    if namespaced {
        kube.push("namespaced".into());
    }
    if let Some(status) = status {
        kube.push(format!("status = {}", lit(status)));
    }
    // kube drops the scale subresource of a kind without status (and `generate` says so):
    // without a status struct it is not carried over (`resource_markers` notes it).
    if let Some(scale) = v
        .pointer("/subresources/scale")
        .filter(|_| status.is_some())
    {
        let mut parts = vec![
            format!(
                "spec_replicas_path = {}",
                lit(text(scale, "/specReplicasPath"))
            ),
            format!(
                "status_replicas_path = {}",
                lit(text(scale, "/statusReplicasPath"))
            ),
        ];
        let selector = text(scale, "/labelSelectorPath");
        if !selector.is_empty() {
            parts.push(format!("label_selector_path = {}", lit(selector)));
        }
        kube.push(format!("scale({})", parts.join(", ")));
    }
    if let Some(columns) = v.get("additionalPrinterColumns").and_then(Value::as_array) {
        for c in columns {
            let mut parts = vec![
                format!("name = {}", lit(text(c, "/name"))),
                format!("type_ = {}", lit(text(c, "/type"))),
                format!("json_path = {}", lit(text(c, "/jsonPath"))),
            ];
            for key in ["description", "format"] {
                let t = text(c, &format!("/{key}"));
                if !t.is_empty() {
                    parts.push(format!("{key} = {}", lit(t)));
                }
            }
            if let Some(p) = c.get("priority").and_then(Value::as_i64) {
                parts.push(format!("priority = {p}"));
            }
            kube.push(format!("printcolumn({})", parts.join(", ")));
        }
    }
    if let Some(fields) = v.get("selectableFields").and_then(Value::as_array) {
        for f in fields {
            kube.push(format!("selectable = {}", lit(text(f, "/jsonPath"))));
        }
    }
    // Without a description kube writes one of its own; an empty one writes none.
    let root_doc = types::description(root).unwrap_or_default();
    kube.push(format!("doc = {}", lit(&root_doc)));
    kube
}

/// Root properties kube's `CustomResource` writes itself that a schema may require:
/// `+kube-codegen:rootRequired` carries them (and `status`, when it is a struct).
pub(super) const ROOT_REQUIRED: &[&str] = &["apiVersion", "kind", "metadata"];

/// The resource's markers: `+genclient` and the CRD-level markers of the version (approval
/// annotation, `listKind`, the root's `required`, subresources, storage, served,
/// deprecation).
pub(super) fn resource_markers(
    input: &VersionInput<'_>,
    namespaced: bool,
    has_status: bool,
    exceptions: &mut Vec<Exception>,
) -> Vec<String> {
    let crd = input.crd;
    let v = input.version;
    let mut resource_markers = vec!["genclient".to_owned()];
    if !namespaced {
        resource_markers.push("genclient:nonNamespaced".into());
    }
    if !input.owned {
        // Someone else's API: its CRD stays theirs (no `crds`, chart, docs, lint or
        // conversion of ours).
        resource_markers.push("kube-codegen:consumed".into());
    }
    if let Some(approval) = crd
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .and_then(|a| a.get(apiserver_rules::crd::APPROVAL))
        .and_then(Value::as_str)
    {
        resource_markers.push(format!(
            "kubebuilder:metadata:annotations={}",
            types::quoted(&format!("{}={approval}", apiserver_rules::crd::APPROVAL))
        ));
    }
    let listed = text(crd, "/spec/names/listKind");
    let kind = text(crd, "/spec/names/kind");
    if !listed.is_empty() && listed != format!("{kind}List") {
        resource_markers.push(format!("kube-codegen:listKind={listed}"));
    }
    let root_required: Vec<&str> = json::strings(v.pointer("/schema/openAPIV3Schema/required"))
        .filter(|r| ROOT_REQUIRED.contains(r) || (*r == "status" && has_status))
        .collect();
    if !root_required.is_empty() {
        resource_markers.push(format!(
            "kube-codegen:rootRequired={}",
            root_required.join(";")
        ));
    }
    if v.pointer("/subresources/status").is_none() && has_status {
        // kube's `status` brings the subresource; this version has the field without it.
        resource_markers.push("kube-codegen:noStatusSubresource".into());
    }
    if v.pointer("/subresources/status").is_some() {
        if has_status {
            resource_markers.push("kubebuilder:subresource:status".into());
        } else {
            exceptions.push(Exception {
                path: "status".into(),
                what: "the status subresource needs a status struct, which this schema does not give; left out".into(),
            });
        }
    }
    if v.pointer("/subresources/scale").is_some() && !has_status {
        exceptions.push(Exception {
            path: "status".into(),
            what: "the scale subresource needs a status struct (kube drops it otherwise), which this schema does not give; left out".into(),
        });
    }
    if input.versions > 1 && v.get("storage").and_then(Value::as_bool) == Some(true) {
        resource_markers.push("kubebuilder:storageversion".into());
    }
    if v.get("served").and_then(Value::as_bool) == Some(false) {
        resource_markers.push("kubebuilder:unservedversion".into());
    }
    if v.get("deprecated").and_then(Value::as_bool) == Some(true) {
        let warning = text(v, "/deprecationWarning");
        if warning.is_empty() {
            resource_markers.push("kubebuilder:deprecatedversion".into());
        } else {
            resource_markers.push(format!(
                "kubebuilder:deprecatedversion:warning={}",
                types::quoted(warning)
            ));
        }
    }

    resource_markers
}
