use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +genclient
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "apps.example.com", version = "v2", kind = "App", namespaced)]
pub struct AppSpec {
    pub image: String,
}
