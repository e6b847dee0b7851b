//! `metadata` as kube-apiserver validates it: names by the kind's rule, `generateName`,
//! labels, annotations, owner references and finalizers.

use serde_json::{Map, Value, json};

use crate::field::FieldError;
use crate::names::{NameRule, label_value, qualified_name};

/// How one kind's metadata is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaRules {
    /// The object name's format.
    pub name: NameRule,
    /// Whether finalizers without a `/` must be one of the standard ones (every built-in
    /// kind validated through the core API's rules; not Leases, PodDisruptionBudgets, core
    /// Events, CRDs or custom resources).
    pub standard_finalizers: bool,
}

impl MetaRules {
    /// The rules of custom resources: subdomain names, any qualified finalizer.
    pub const CUSTOM: MetaRules = MetaRules {
        name: NameRule::Subdomain,
        standard_finalizers: false,
    };
}

const TOTAL_ANNOTATION_SIZE: usize = 256 * 1024;
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

fn text<'a>(meta: &'a Value, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Errors in the `metadata` of an object being created (its name already generated).
pub fn validate_create(obj: &Value, rules: MetaRules) -> Vec<FieldError> {
    let empty = json!({});
    let meta = obj.get("metadata").unwrap_or(&empty);
    let mut errs = Vec::new();
    let generate = text(meta, "generateName");
    if !generate.is_empty() {
        for msg in rules.name.check(generate, true) {
            errs.push(FieldError::invalid_str(
                "metadata.generateName",
                generate,
                msg,
            ));
        }
    }
    let name = text(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in rules.name.check(name, false) {
            errs.push(FieldError::invalid_str("metadata.name", name, msg));
        }
        if rules.name == NameRule::CronJob && name.len() > 52 {
            errs.push(FieldError::invalid_str(
                "metadata.name",
                name,
                "must be no more than 52 characters",
            ));
        }
    }
    errs.extend(validate_common(meta, rules));
    errs
}

/// What an update may not change in `metadata`, checked as the real server does after
/// filling in what the client left out: `uid` (a missing one is the old one), and
/// `deletionTimestamp` and `deletionGracePeriodSeconds` (which an update cannot set or
/// remove). `creationTimestamp` is not checked: the old one silently wins.
pub fn validate_immutable(new: &Value, old: &Value) -> Vec<FieldError> {
    let at = |obj: &Value, key: &str| obj.pointer(&format!("/metadata/{key}")).cloned();
    let mut errs = Vec::new();
    let uid = at(new, "uid").filter(|u| u.as_str().is_some_and(|s| !s.is_empty()));
    if let Some(uid) = uid
        && Some(&uid) != at(old, "uid").as_ref()
    {
        errs.push(FieldError::invalid(
            "metadata.uid",
            &uid,
            "field is immutable",
        ));
    }
    if at(old, "deletionTimestamp").is_none()
        && let Some(ts) = at(new, "deletionTimestamp").filter(|v| !v.is_null())
    {
        errs.push(FieldError::invalid(
            "metadata.deletionTimestamp",
            &ts,
            "field is immutable",
        ));
    }
    let grace = at(new, "deletionGracePeriodSeconds").filter(|v| !v.is_null());
    let old_grace = at(old, "deletionGracePeriodSeconds").filter(|v| !v.is_null());
    match (grace, old_grace) {
        (Some(g), None) => errs.push(FieldError::invalid(
            "metadata.deletionGracePeriodSeconds",
            &g,
            "field is immutable",
        )),
        (Some(g), Some(o)) if g != o => errs.push(FieldError::invalid(
            "metadata.deletionGracePeriodSeconds",
            &g,
            "field is immutable",
        )),
        _ => {}
    }
    errs
}

/// Errors in the `metadata` of an update: everything a create checks but the name, which
/// cannot change.
pub fn validate_update(obj: &Value, rules: MetaRules) -> Vec<FieldError> {
    let empty = json!({});
    validate_common(obj.get("metadata").unwrap_or(&empty), rules)
}

/// Errors in `labels` (Go's `ValidateLabels`): keys are qualified names, values label
/// values; each error names `path`.
pub fn labels(labels: &Map<String, Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for msg in qualified_name(k) {
            errs.push(FieldError::invalid_str(path, k, msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in label_value(v) {
            errs.push(FieldError::invalid_str(path, v, msg));
        }
    }
    errs
}

/// Errors in `annotations` (Go's `ValidateAnnotations`): keys are qualified names in any
/// case, and keys and values together hold at most 256 KiB; each error names `path`.
pub fn annotations(annotations: &Map<String, Value>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut size = 0;
    for (k, v) in annotations {
        for msg in qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid_str(path, k, msg));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > TOTAL_ANNOTATION_SIZE {
        errs.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE));
    }
    errs
}

fn validate_common(meta: &Value, rules: MetaRules) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(map) = meta.get("labels").and_then(Value::as_object) {
        errs.extend(labels(map, "metadata.labels"));
    }
    if let Some(map) = meta.get("annotations").and_then(Value::as_object) {
        errs.extend(annotations(map, "metadata.annotations"));
    }
    if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
        errs.extend(owner_references(refs));
    }
    if let Some(list) = meta.get("finalizers").and_then(Value::as_array) {
        let finalizers: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
        for f in &finalizers {
            for msg in qualified_name(f) {
                errs.push(FieldError::invalid_str("metadata.finalizers", f, msg));
            }
        }
        if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
            errs.push(FieldError::invalid(
                "metadata.finalizers",
                &json!(finalizers),
                "finalizer orphan and foregroundDeletion cannot be both set",
            ));
        }
        if rules.standard_finalizers {
            for (i, f) in finalizers.iter().enumerate() {
                if !f.contains('/') && !STANDARD_FINALIZERS.contains(f) {
                    errs.push(FieldError::invalid_str(
                        format!("metadata.finalizers[{i}]"),
                        f,
                        "name is neither a standard finalizer name nor is it fully qualified",
                    ));
                }
            }
        }
    }
    errs
}

/// The version of an `apiVersion` (`apps/v1` -> `v1`); empty when it has none or does not
/// parse (more than one `/`).
fn version_of(api_version: &str) -> &str {
    match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [v] => v,
        [_, v] => v,
        _ => "",
    }
}

fn owner_references(refs: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = "metadata.ownerReferences";
    let mut first_controller: Option<String> = None;
    for r in refs {
        let api_version = text(r, "apiVersion");
        let kind = text(r, "kind");
        if version_of(api_version).is_empty() {
            errs.push(FieldError::invalid_str(
                format!("{path}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if kind.is_empty() {
            errs.push(FieldError::invalid_str(
                format!("{path}.kind"),
                kind,
                "must not be empty",
            ));
        }
        for key in ["name", "uid"] {
            if text(r, key).is_empty() {
                errs.push(FieldError::invalid_str(
                    format!("{path}.{key}"),
                    "",
                    "must not be empty",
                ));
            }
        }
        if api_version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid(
                path,
                &owner_json(r),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let this = format!("{kind}/{}", text(r, "name"));
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    path,
                    &Value::Array(refs.iter().map(owner_json).collect()),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                    ),
                )),
                None => first_controller = Some(this),
            }
        }
    }
    errs
}

/// An owner reference with Go's field order, as the real server prints it.
fn owner_json(r: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in [
        "apiVersion",
        "kind",
        "name",
        "uid",
        "controller",
        "blockOwnerDeletion",
    ] {
        match r.get(key) {
            Some(v) => {
                out.insert(key.to_owned(), v.clone());
            }
            None if matches!(key, "apiVersion" | "kind" | "name" | "uid") => {
                out.insert(key.to_owned(), json!(""));
            }
            None => {}
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: MetaRules = MetaRules {
        name: NameRule::Subdomain,
        standard_finalizers: true,
    };

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn names_labels_annotations_owners_finalizers() {
        let obj = json!({"metadata": {"name": "Bad_Name"}});
        assert!(fields(&validate_create(&obj, CORE))[0].starts_with(
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        ));
        let obj = json!({"metadata": {}});
        assert_eq!(
            fields(&validate_create(&obj, CORE)),
            ["metadata.name: Required value: name or generateName is required"]
        );
        let obj = json!({"metadata": {"name": "ok", "labels": {"a/b/c": "x", "k": "-bad"},
            "finalizers": ["hold", "example.com/x"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": true},
                                {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "2", "controller": true}]}});
        let errs = validate_create(&obj, CORE);
        let reasons: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "metadata.labels",
                "metadata.labels",
                "metadata.ownerReferences",
                "metadata.finalizers[0]"
            ]
        );
        assert!(errs[2].detail.ends_with("for ConfigMap/a and ConfigMap/b"));
        let big = json!({"metadata": {"name": "ok", "annotations": {"a": "x".repeat(300_000)}}});
        assert_eq!(
            fields(&validate_create(&big, CORE)),
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
