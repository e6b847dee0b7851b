use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The hub: a flat spec.
///
/// +genclient
/// +kubebuilder:storageversion
/// +kube-codegen:conversion
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Gadget", namespaced)]
pub struct GadgetSpec {
    pub color: String,
    /// Never negative: v2 refuses a negative size.
    ///
    /// +kubebuilder:validation:Minimum=0
    pub size: i32,
}
