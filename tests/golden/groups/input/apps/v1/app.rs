use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +genclient
/// +kubebuilder:storageversion
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "apps.example.com", version = "v1", kind = "App", namespaced)]
pub struct AppSpec {
    pub image: String,
}
