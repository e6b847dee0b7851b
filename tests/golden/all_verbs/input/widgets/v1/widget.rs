use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +genclient
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "widgets.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
)]
pub struct WidgetSpec {
    pub replicas: i32,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    pub replicas: i32,
}
