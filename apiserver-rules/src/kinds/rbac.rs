//! Roles, ClusterRoles and their bindings: verbs and API groups of rules, the role a
//! binding refers to (which may not change) and its subjects.

use serde_json::{Value, json};

use crate::field::FieldError;

const RBAC: &str = "rbac.authorization.k8s.io";

pub(crate) fn role(obj: &Value, namespaced: bool, errors: &mut Vec<FieldError>) {
    for (i, rule) in obj
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("rules[{i}]");
        let list = |k: &str| rule.get(k).and_then(Value::as_array).map_or(0, Vec::len);
        if list("verbs") == 0 {
            errors.push(FieldError::required(
                format!("{p}.verbs"),
                "verbs must contain at least one value",
            ));
        }
        if list("nonResourceURLs") > 0 {
            if namespaced {
                errors.push(FieldError::invalid(
                    format!("{p}.nonResourceURLs"),
                    &rule["nonResourceURLs"],
                    "namespaced rules cannot apply to non-resource URLs",
                ));
            }
            if list("resources") > 0 || list("apiGroups") > 0 || list("resourceNames") > 0 {
                errors.push(FieldError::invalid(
                    format!("{p}.nonResourceURLs"),
                    &rule["nonResourceURLs"],
                    "rules cannot apply to both regular resources and non-resource URLs",
                ));
            }
            continue;
        }
        if list("apiGroups") == 0 {
            errors.push(FieldError::required(
                format!("{p}.apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
        if list("resources") == 0 {
            errors.push(FieldError::required(
                format!("{p}.resources"),
                "resource rules must supply at least one resource",
            ));
        }
    }
}

/// A ClusterRole's `aggregationRule`, when it has one: at least one selector.
pub(crate) fn aggregation(obj: &Value, errors: &mut Vec<FieldError>) {
    let Some(rule) = obj.get("aggregationRule").filter(|r| !r.is_null()) else {
        return;
    };
    let selectors = rule
        .get("clusterRoleSelectors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if selectors == 0 {
        errors.push(FieldError::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
}

pub(crate) fn binding(
    obj: &Value,
    old: Option<&Value>,
    namespaced: bool,
    errors: &mut Vec<FieldError>,
) {
    let empty = json!({});
    let role_ref = obj.get("roleRef").unwrap_or(&empty);
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let group = s(role_ref, "apiGroup");
    if group != RBAC {
        errors.push(FieldError::not_supported(
            "roleRef.apiGroup",
            &json!(group),
            &[RBAC],
        ));
    }
    let kind = s(role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind.as_str()) {
        errors.push(FieldError::not_supported(
            "roleRef.kind",
            &json!(kind),
            kinds,
        ));
    }
    let role_name = s(role_ref, "name");
    if role_name.is_empty() {
        errors.push(FieldError::required("roleRef.name", ""));
    } else {
        for why in crate::names::path_segment(&role_name, false) {
            errors.push(FieldError::invalid_str("roleRef.name", &role_name, why));
        }
    }
    for (i, subject) in obj
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("subjects[{i}]");
        if s(subject, "name").is_empty() {
            errors.push(FieldError::required(format!("{p}.name"), ""));
        }
        let (kind, name, group) = (
            s(subject, "kind"),
            s(subject, "name"),
            s(subject, "apiGroup"),
        );
        match kind.as_str() {
            "ServiceAccount" => {
                if !name.is_empty() {
                    for why in crate::names::dns1123_subdomain(&name) {
                        errors.push(FieldError::invalid_str(format!("{p}.name"), &name, why));
                    }
                }
                if !group.is_empty() {
                    errors.push(FieldError::not_supported(
                        format!("{p}.apiGroup"),
                        &json!(group),
                        &[""],
                    ));
                }
                // A RoleBinding's ServiceAccount without a namespace is of the binding's.
                if !namespaced && s(subject, "namespace").is_empty() {
                    errors.push(FieldError::required(format!("{p}.namespace"), ""));
                }
            }
            "User" | "Group" => {
                if group != RBAC {
                    errors.push(FieldError::not_supported(
                        format!("{p}.apiGroup"),
                        &json!(group),
                        &[RBAC],
                    ));
                }
            }
            _ => errors.push(FieldError::not_supported(
                format!("{p}.kind"),
                &json!(kind),
                &["ServiceAccount", "User", "Group"],
            )),
        }
    }
    // Last, after the object's own errors.
    if let Some(old) = old
        && old.get("roleRef") != obj.get("roleRef")
    {
        errors.push(FieldError::invalid(
            "roleRef",
            &go_role_ref(role_ref),
            "cannot change roleRef",
        ));
    }
}

/// The internal `RoleRef` struct as Go prints it.
fn go_role_ref(r: &Value) -> Value {
    let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    json!({"APIGroup": s("apiGroup"), "Kind": s("kind"), "Name": s("name")})
}
