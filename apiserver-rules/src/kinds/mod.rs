//! Validation of built-in kinds past their metadata, as kube-apiserver 1.36's strategies do
//! it: one file per kind (family), each a function from the new object (and the old one on
//! an update) to field errors in the real server's words and order. Objects reach these
//! functions as their v1 JSON; where the real server validates after defaulting, the
//! defaults are applied to a copy first (see [`deployment`]).
//!
//! Map keys come in sorted order; the real server walks Go maps in random order, so only
//! the order between blocks is the same.

mod autoscaling;
pub mod configmap;
pub mod deployment;
mod discovery;
mod misc;
mod networking;
pub mod pod;
mod rbac;
mod scheduling;
pub mod secret;
mod selector;
mod service;
mod volume;
pub mod webhook;
mod workloads;

use serde_json::Value;

use crate::field::FieldError;

/// The errors of a create (`old` is `None`) or an update of a built-in object, beyond its
/// metadata; empty for kinds without rules here.
pub fn validate(
    api_version: &str,
    kind: &str,
    new: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if old.is_none()
        && let Some(g) = new.pointer("/metadata/generation").and_then(Value::as_i64)
        && g < 0
        && kind != "Deployment"
    {
        errors.push(FieldError::invalid(
            "metadata.generation",
            &Value::from(g),
            "must be greater than or equal to 0",
        ));
    }
    match (api_version, kind) {
        ("v1", "ConfigMap") => configmap::validate(new, old, &mut errors),
        ("v1", "Secret") => secret::validate(new, old, &mut errors),
        ("apps/v1", "Deployment") => deployment::validate(new, &mut errors),
        ("apps/v1", "ReplicaSet") => workloads::replica_set(new, &mut errors),
        ("apps/v1", "StatefulSet") => workloads::stateful_set(new, &mut errors),
        ("apps/v1", "DaemonSet") => workloads::daemon_set(new, &mut errors),
        ("batch/v1", "Job") => workloads::job(new, &mut errors),
        ("v1", "Pod") if old.is_none() => workloads::pod(new, &mut errors),
        ("v1", "Service") => service::validate(new, &mut errors),
        ("rbac.authorization.k8s.io/v1", "Role") => rbac::role(new, true, &mut errors),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            rbac::role(new, false, &mut errors);
            rbac::aggregation(new, &mut errors);
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            rbac::binding(new, old, true, &mut errors)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            rbac::binding(new, old, false, &mut errors)
        }
        ("v1", "PersistentVolumeClaim") => volume::persistent_volume_claim(new, &mut errors),
        ("networking.k8s.io/v1", "NetworkPolicy") => networking::network_policy(new, &mut errors),
        ("networking.k8s.io/v1", "Ingress") => networking::ingress(new, &mut errors),
        ("networking.k8s.io/v1", "IngressClass") => networking::ingress_class(new, &mut errors),
        ("autoscaling/v2", "HorizontalPodAutoscaler") => {
            autoscaling::horizontal_pod_autoscaler(new, &mut errors)
        }
        ("policy/v1", "PodDisruptionBudget") => scheduling::pod_disruption_budget(new, &mut errors),
        ("discovery.k8s.io/v1", "EndpointSlice") => {
            discovery::endpoint_slice(new, old, &mut errors)
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => {
            scheduling::priority_class(new, old, &mut errors)
        }
        ("coordination.k8s.io/v1", "Lease") => misc::lease(new, &mut errors),
        ("events.k8s.io/v1", "Event") if old.is_none() => misc::event(new, &mut errors),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            webhook::validate(new, true, &mut errors)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            webhook::validate(new, false, &mut errors)
        }
        _ => {}
    }
    errors
}

/// A body the real server cannot decode into the kind's Go type, as the text after
/// `<Kind> in version "v1" cannot be handled as a <Kind>: ` (a 400).
pub fn decode_error(api_version: &str, kind: &str, obj: &Value) -> Option<String> {
    match (api_version, kind) {
        ("v1", "Secret") => secret::decode_error(obj, "data"),
        ("v1", "ConfigMap") => secret::decode_error(obj, "binaryData"),
        _ => None,
    }
}

/// `path[key]`, as Go's field paths print a map key.
pub(crate) fn key(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

/// The entries of an object field, sorted by key.
pub(crate) fn entries<'a>(obj: &'a Value, field: &str) -> Vec<(&'a String, &'a Value)> {
    obj.get(field)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}
