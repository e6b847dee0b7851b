//! RBAC escalation prevention, as kube-apiserver's storage of Roles, ClusterRoles and their
//! bindings enforces it on every create and update (put, patch, apply): nobody grants what
//! they do not hold.
//!
//! - A Role or ClusterRole is written when the writer is in `system:masters`, holds
//!   `escalate` on it, or holds (through RBAC) every rule it grants; an `aggregationRule`
//!   (set, changed or removed) needs what cluster-admin holds.
//! - A binding is written when the writer is in `system:masters`, holds `bind` on the role
//!   it references, or holds every rule of that role in the binding's namespace; a role that
//!   does not exist is a 404 naming the binding's resource and the role
//!   (`rolebindings.rbac.authorization.k8s.io "<role>" not found`), as the real server's
//!   storage answers it.
//! - An update that changes only `ownerReferences` and `finalizers` (the garbage
//!   collector's) is not checked.
//!
//! Denials are the real server's 403: `roles.rbac.authorization.k8s.io "r" is forbidden: user
//! "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not
//! currently held:` and the missing rules, one per line ([`super::cover`]).

use serde_json::{Value, json};

use super::cover::{covers, describe_missing};
use super::rbac::{GROUP, Policy, PolicyRule, effective_rules, rules_for_writing, rules_of};
use super::types::{Attributes, User, go_quote};
use crate::error::ApiError;

/// Whether `resource` of the RBAC group is one escalation prevention guards.
pub fn guards(group: &str, resource: &str) -> bool {
    group == GROUP
        && matches!(
            resource,
            "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings"
        )
}

/// What kube-apiserver checks before it stores `obj` (replacing `old`, on an update) as
/// `resource` in `namespace` (`""` for the cluster-scoped ones), asked for by `user` at the
/// URL name `url_name` (`""` for a create). `Ok` when it may be written.
pub fn check(
    policy: &dyn Policy,
    user: &User,
    resource: &str,
    namespace: &str,
    url_name: &str,
    obj: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    if user.privileged() || old.is_some_and(|old| only_collector_fields(obj, old)) {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let forbidden = |why: String| forbidden(resource, name, &why);
    match resource {
        "roles" | "clusterroles" => {
            let escalate = Attributes {
                verb: "escalate".to_owned(),
                resource_request: true,
                api_group: GROUP.to_owned(),
                api_version: "*".to_owned(),
                resource: resource.to_owned(),
                namespace: namespace.to_owned(),
                name: url_name.to_owned(),
                ..Attributes::default()
            };
            if super::authorize(policy, user, &escalate).allowed {
                return Ok(());
            }
            confirm_no_escalation(policy, user, namespace, &rules_of(obj)).map_err(forbidden)?;
            let aggregates = |o: &Value| {
                o.pointer("/aggregationRule/clusterRoleSelectors")
                    .and_then(Value::as_array)
                    .is_some_and(|s| !s.is_empty())
            };
            if resource == "clusterroles"
                && (aggregates(obj) || old.is_some_and(aggregates))
                && confirm_no_escalation(policy, user, namespace, &full_authority()).is_err()
            {
                return Err(forbidden(
                    "must have cluster-admin privileges to use the aggregationRule".to_owned(),
                ));
            }
            Ok(())
        }
        _ => {
            let role_ref = obj.get("roleRef").cloned().unwrap_or_else(|| json!({}));
            let text = |key: &str| role_ref.get(key).and_then(Value::as_str).unwrap_or("");
            let (kind, role, group) = (text("kind"), text("name"), text("apiGroup"));
            let group = if group.is_empty() { GROUP } else { group };
            let role_resource = match kind {
                "Role" => Some("roles"),
                "ClusterRole" => Some("clusterroles"),
                _ => None,
            };
            if let Some(role_resource) = role_resource {
                let bind = Attributes {
                    verb: "bind".to_owned(),
                    resource_request: true,
                    api_group: group.to_owned(),
                    api_version: "*".to_owned(),
                    resource: role_resource.to_owned(),
                    namespace: namespace.to_owned(),
                    name: role.to_owned(),
                    ..Attributes::default()
                };
                if super::authorize(policy, user, &bind).allowed {
                    return Ok(());
                }
            }
            let rules = match (kind, role_resource) {
                (_, Some(role_resource)) => {
                    let at = if role_resource == "roles" {
                        namespace
                    } else {
                        ""
                    };
                    // kube-apiserver's storage names the binding's resource with the role's
                    // name (`rolebindings.rbac.authorization.k8s.io "<role>" not found`).
                    let found = policy
                        .object(role_resource, at, role)
                        .ok_or_else(|| ApiError::not_found(GROUP, resource, role))?;
                    effective_rules(policy, &found)
                }
                (other, None) => {
                    return Err(ApiError::custom(
                        500,
                        "",
                        &format!("unsupported role reference kind: {}", go_quote(other)),
                    ));
                }
            };
            confirm_no_escalation(policy, user, namespace, &rules).map_err(forbidden)
        }
    }
}

/// `Ok` when the RBAC rules `user` holds in `namespace` cover `rules`; else the real
/// server's words for what is missing (with the errors met reading the user's bindings).
pub fn confirm_no_escalation(
    policy: &dyn Policy,
    user: &User,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (held, errors) = rules_for_writing(policy, user, namespace);
    let (covered, missing) = covers(&held, rules);
    if covered {
        return Ok(());
    }
    let groups: Vec<String> = user.groups.iter().map(|g| go_quote(g)).collect();
    let mut message = format!(
        "user {} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(&user.name),
        groups.join(" "),
        describe_missing(&missing)
    );
    if !errors.is_empty() {
        message.push_str(&format!(
            "; resolution errors: [{}]",
            super::rbac::aggregate(&errors)
        ));
    }
    Err(message)
}

/// What cluster-admin holds: every verb on every resource, and on every path.
fn full_authority() -> Vec<PolicyRule> {
    let all = vec!["*".to_owned()];
    vec![
        PolicyRule {
            verbs: all.clone(),
            api_groups: all.clone(),
            resources: all.clone(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: all.clone(),
            non_resource_urls: all,
            ..PolicyRule::default()
        },
    ]
}

/// Whether `obj` differs from `old` only in what the garbage collector writes
/// (`ownerReferences`, `finalizers`, `selfLink`).
fn only_collector_fields(obj: &Value, old: &Value) -> bool {
    let strip = |o: &Value| {
        let mut o = o.clone();
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in [
                "ownerReferences",
                "finalizers",
                "selfLink",
                "resourceVersion",
                "managedFields",
            ] {
                meta.remove(key);
            }
        }
        o
    };
    strip(obj) == strip(old)
}

/// The 403 of a write that would escalate: `<resource>.rbac.authorization.k8s.io "<name>" is
/// forbidden: <why>` (without the name for a create by `generateName`).
fn forbidden(resource: &str, name: &str, why: &str) -> ApiError {
    if name.is_empty() {
        let mut err = ApiError::custom(
            403,
            "Forbidden",
            &format!("{resource}.{GROUP} is forbidden: {why}"),
        );
        err.details = Some(json!({"group": GROUP, "kind": resource}));
        err
    } else {
        ApiError::forbidden(GROUP, resource, name, why, Vec::new())
    }
}
