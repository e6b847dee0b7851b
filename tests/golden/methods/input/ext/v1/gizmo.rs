use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cluster-scoped kind using the derive: its client is expanded here, and the CLI's
/// group client re-exports it instead of generating another.
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "ext.example.com", version = "v1", kind = "Gizmo")]
#[genclient(
    skip_verbs(delete_collection),
    method(get_scale_info, verb = get, subresource = "info", result = k8s_openapi::api::autoscaling::v1::Scale)
)]
pub struct GizmoSpec {
    pub size: u32,
}
