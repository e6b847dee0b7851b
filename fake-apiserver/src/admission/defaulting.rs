//! Defaulting: the values kube-apiserver's decoder gives a built-in object that the client
//! left out, stored with it (and, on a create, owned by its creator). Custom resources are
//! defaulted by their schema, in [`validation`](super::validation).

use serde_json::{Value, json};

use crate::resource::ResourceType;
use crate::rules::kinds;

/// The defaults the real server's decoder gives a built-in object, stored with it (and, on
/// a create, owned by its creator): a Secret's `type`, a Deployment's spec and pod template.
pub(crate) fn default_builtin(rt: &ResourceType, obj: &mut Value) {
    if rt.is("apps", "deployments") && rt.version == "v1" {
        kinds::deployment::default(obj);
    }
    if rt.group == "admissionregistration.k8s.io" && rt.version == "v1" {
        let mutating = rt.kind == "MutatingWebhookConfiguration";
        kinds::webhook::default(obj, mutating);
    }
    if rt.is("", "secrets")
        && let Some(map) = obj.as_object_mut()
        && map.get("type").is_none_or(|t| t.is_null() || t == "")
    {
        map.insert("type".into(), json!("Opaque"));
    }
}
