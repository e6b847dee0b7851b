use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +genclient
/// +genclient:nonNamespaced
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "extensions.example.com", version = "v1", kind = "Plugin")]
pub struct PluginSpec {
    pub binary: String,
}
