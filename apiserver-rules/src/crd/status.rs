//! `status.storedVersions`: what a created CRD starts with (its storage version), what an
//! update must keep in `spec.versions`, and the status the fake answers a created CRD with.

use serde_json::{Value, json};

use super::approval::{Approval, annotation, approval_state, is_protected_group};
use super::versions::storage_versions;
use crate::field::FieldError;

/// `status.storedVersions` as `PrepareForCreate` leaves them: the first storage version,
/// which must be the only one.
pub(super) fn stored_on_create(versions: &[Value], errs: &mut Vec<FieldError>) {
    match storage_versions(versions).as_slice() {
        [] => errs.push(FieldError::invalid(
            "status.storedVersions",
            &Value::Null,
            "must have at least one stored version",
        )),
        [first, rest @ ..] => {
            for other in rest {
                errs.push(FieldError::invalid(
                    "status.storedVersions",
                    &json!([first]),
                    format!("must have the storage version {other}"),
                ));
            }
        }
    }
}

/// The versions objects may be stored in after an update: the old CRD's
/// `status.storedVersions` and the new storage version (the update strategy adds it), each
/// of which must stay in `spec.versions` until a storage migration removes it from the list.
pub(super) fn stored_version_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut stored: Vec<String> = old
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let versions: Vec<&Value> = new
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if let Some(storage) = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
    {
        let storage = name(storage);
        if !stored.contains(&storage) {
            stored.push(storage);
        }
    }
    let names: Vec<String> = versions.iter().map(|v| name(v)).collect();
    stored
        .iter()
        .enumerate()
        .filter(|(_, v)| !names.contains(v))
        .map(|(i, v)| {
            FieldError::invalid_str(
                format!("status.storedVersions[{i}]"),
                v,
                format!(
                    "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
                ),
            )
        })
        .collect()
}

/// The status a created CRD is answered with: the first storage version stored, names
/// and conditions set (the fake establishes a CRD at once).
pub fn established_status(crd: &Value, time: &str) -> Value {
    let stored: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage") == Some(&json!(true)))
                .take(1)
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    let cond = |t: &str, reason: &str, msg: &str| json!({"type": t, "status": "True", "lastTransitionTime": time, "reason": reason, "message": msg});
    let mut conditions = vec![
        cond("NamesAccepted", "NoConflicts", "no conflicts found"),
        cond(
            "Established",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        ),
    ];
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if is_protected_group(group) {
        let value = annotation(crd);
        let (status, reason, message) = match approval_state(crd) {
            Approval::Approved => ("True", "ApprovedAnnotation", format!("approved in {value}")),
            _ => (
                "False",
                "UnapprovedAnnotation",
                format!("not approved: \"{value}\""),
            ),
        };
        conditions.push(
            json!({"type": "KubernetesAPIApprovalPolicyConformant", "status": status,
            "lastTransitionTime": time, "reason": reason, "message": message}),
        );
    }
    let mut accepted = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    if let Some(a) = accepted.as_object_mut() {
        a.retain(|_, v| !v.is_null());
    }
    json!({"conditions": conditions, "acceptedNames": accepted, "storedVersions": stored})
}
