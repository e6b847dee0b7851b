//! The defaults of the smaller groups the fake serves: RBAC bindings' role references and
//! subjects. (Webhook configurations' defaults live with their rules in
//! [`crate::kinds::webhook`]; Leases, Events, Ingresses and PodDisruptionBudgets have
//! none beyond the Go round trip.)

use serde_json::{Value, json};

use super::{items, object, or_empty};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `SetObjectDefaults_RoleBinding` and `SetObjectDefaults_ClusterRoleBinding`.
pub fn role_binding(obj: &mut Value) {
    or_empty(object(obj, "roleRef"), "apiGroup", json!(RBAC_GROUP));
    for subject in items(obj, "subjects") {
        let group = match subject.get("kind").and_then(Value::as_str) {
            Some("User" | "Group") => RBAC_GROUP,
            _ => continue,
        };
        or_empty(subject, "apiGroup", json!(group));
    }
}
