//! The protected groups (`k8s.io`, `kubernetes.io` and their subdomains) and the approval
//! annotation a CRD of one must carry, with the state that annotation is in.

use serde_json::Value;

use crate::field::FieldError;

/// The annotation a CRD of a protected group must carry.
pub const APPROVAL: &str = "api-approved.kubernetes.io";

/// Whether CRDs of `group` need the [`APPROVAL`] annotation: `k8s.io`, `kubernetes.io` and
/// their subdomains.
pub fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

/// What the approval annotation of a CRD says.
#[derive(PartialEq, Eq)]
pub(super) enum Approval {
    /// The group is not protected: no annotation is needed.
    NotProtected,
    /// A protected group without the annotation.
    Missing,
    /// `unapproved...`: accepted, reported as not conformant.
    Bypassed,
    /// A URL.
    Approved,
    /// Neither a URL nor `unapproved...`.
    Invalid,
}

/// The annotation's value, empty when absent.
pub(super) fn annotation(crd: &Value) -> &str {
    crd.pointer("/metadata/annotations/api-approved.kubernetes.io")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The state of `crd`'s approval annotation.
pub(super) fn approval_state(crd: &Value) -> Approval {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !is_protected_group(group) {
        return Approval::NotProtected;
    }
    let value = annotation(crd);
    if value.is_empty() {
        Approval::Missing
    } else if value.starts_with("unapproved") {
        Approval::Bypassed
    } else if value.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty() && !rest.split('/').next().unwrap_or("").is_empty()
    }) {
        Approval::Approved
    } else {
        Approval::Invalid
    }
}

/// A protected group's CRD without the annotation, or with one that is neither a URL nor
/// a reason starting with `unapproved`.
pub(super) fn validate(crd: &Value, errs: &mut Vec<FieldError>) {
    let field = format!("metadata.annotations[{APPROVAL}]");
    match approval_state(crd) {
        Approval::Missing => errs.push(FieldError::required(
            field,
            format!("protected groups must have approval annotation \"{APPROVAL}\", see https://github.com/kubernetes/enhancements/pull/1111"),
        )),
        Approval::Invalid => {
            errs.push(FieldError::invalid_str(
                field,
                annotation(crd),
                format!("protected groups must have approval annotation \"{APPROVAL}\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"),
            ));
        }
        _ => {}
    }
}

/// On an update the approval rule only fires when the annotation's state changes: drops
/// its errors from `errs` when the state of `old` and `new` is the same.
pub(super) fn unless_changed(old: &Value, new: &Value, errs: &mut Vec<FieldError>) {
    if approval_state(old) == approval_state(new) {
        errs.retain(|e| {
            !e.field
                .starts_with("metadata.annotations[api-approved.kubernetes.io]")
        });
    }
}
