//! What a CRD is called: `spec.group` and `spec.scope`, the names in `spec.names`
//! (plural, singular, kind, listKind, short names, categories), and `metadata.name`, which
//! must be `<plural>.<group>`.

use serde_json::{Value, json};

use super::{dns1035, text};
use crate::field::FieldError;

/// `spec.group` (a DNS subdomain with at least one dot) and `spec.scope`.
pub(super) fn group_and_scope(spec: &Value, errs: &mut Vec<FieldError>) {
    let group = text(spec, "group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let msgs = crate::names::dns1123_subdomain(group);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid_str("spec.group", group, msgs.join(",")));
        } else if !group.contains('.') {
            errs.push(FieldError::invalid_str(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(spec, "scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            &json!(other),
            &["Cluster", "Namespaced"],
        )),
    }
}

/// `metadata.name` must be `<spec.names.plural>.<spec.group>`.
pub fn name_errors(crd: &Value) -> Vec<FieldError> {
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() || name == format!("{plural}.{group}") {
        Vec::new()
    } else {
        vec![FieldError::invalid_str(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        )]
    }
}

/// The names at `at` (`spec.names`): all four required, DNS-1035 labels (kinds in mixed
/// case), and a list kind other than the kind.
pub(super) fn names(n: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let get = |k: &str| text(n, k);
    for key in ["plural", "singular", "kind", "listKind"] {
        if get(key).is_empty() {
            errs.push(FieldError::required(format!("{at}.{key}"), ""));
        }
    }
    for key in ["plural", "singular"] {
        let v = get(key);
        if !v.is_empty()
            && let Some(msg) = dns1035(v)
        {
            errs.push(FieldError::invalid_str(format!("{at}.{key}"), v, msg));
        }
    }
    for key in ["kind", "listKind"] {
        let v = get(key);
        if !v.is_empty()
            && let Some(msg) = dns1035(&v.to_lowercase())
        {
            errs.push(FieldError::invalid_str(
                format!("{at}.{key}"),
                v,
                format!("may have mixed case, but should otherwise match: {msg}"),
            ));
        }
    }
    for key in ["shortNames", "categories"] {
        if let Some(list) = n.get(key).and_then(Value::as_array) {
            for (i, s) in list.iter().enumerate() {
                let s = s.as_str().unwrap_or("");
                if let Some(msg) = dns1035(s) {
                    errs.push(FieldError::invalid_str(format!("{at}.{key}[{i}]"), s, msg));
                }
            }
        }
    }
    if !get("kind").is_empty() && get("kind") == get("listKind") {
        errs.push(FieldError::invalid_str(
            format!("{at}.listKind"),
            get("listKind"),
            "kind and listKind may not be the same",
        ));
    }
}
