//! The defaults of the smaller groups the fake serves: RBAC bindings' role references and
//! subjects, NetworkPolicies, IngressClasses, HorizontalPodAutoscalers (`autoscaling/v2`),
//! EndpointSlices and PriorityClasses. (Webhook configurations' defaults live with their
//! rules in [`crate::kinds::webhook`]; Leases, Events, Ingresses and PodDisruptionBudgets
//! have none beyond the Go round trip.)

use serde_json::{Value, json};

use super::{at, items, object, or_empty, or_nil};

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

/// `SetObjectDefaults_NetworkPolicy`: the policy types a policy implies (`Ingress`, and
/// `Egress` when it has egress rules) and every rule port's protocol.
pub fn network_policy(obj: &mut Value) {
    let spec = object(obj, "spec");
    let has = |key: &str| {
        spec.get(key)
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
    };
    if !has("policyTypes") {
        let types = if has("egress") {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec["policyTypes"] = types;
    }
    for direction in ["ingress", "egress"] {
        for rule in items(spec, direction) {
            for port in items(rule, "ports") {
                or_nil(port, "protocol", json!("TCP"));
            }
        }
    }
}

/// `SetObjectDefaults_IngressClass`: parameters are cluster-scoped unless they say not.
pub fn ingress_class(obj: &mut Value) {
    if let Some(parameters) = at(obj, "/spec/parameters") {
        or_nil(parameters, "scope", json!("Cluster"));
    }
}

/// `SetObjectDefaults_HorizontalPodAutoscaler` (`autoscaling/v2`): one replica at least,
/// 80% average CPU utilization when no metric is named, and a behavior's unset scaling
/// rules filled from the controller's defaults.
pub fn horizontal_pod_autoscaler(obj: &mut Value) {
    let spec = object(obj, "spec");
    or_nil(spec, "minReplicas", json!(1));
    if spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    let Some(behavior) = at(spec, "/behavior") else {
        return;
    };
    let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    let down = json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    for (key, defaults) in [("scaleUp", up), ("scaleDown", down)] {
        let rules = object(behavior, key);
        for (field, value) in defaults.as_object().into_iter().flatten() {
            or_nil(rules, field, value.clone());
        }
    }
}

/// `SetObjectDefaults_EndpointSlice`: every port's name (empty) and protocol (TCP).
pub fn endpoint_slice(obj: &mut Value) {
    for port in items(obj, "ports") {
        or_nil(port, "name", json!(""));
        or_nil(port, "protocol", json!("TCP"));
    }
}

/// `SetObjectDefaults_PriorityClass`: a priority class preempts lower ones unless it says
/// `Never`.
pub fn priority_class(obj: &mut Value) {
    or_nil(obj, "preemptionPolicy", json!("PreemptLowerPriority"));
}
