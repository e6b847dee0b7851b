//! Shed: a kind whose properties sit at the root (`#[kube(no_spec)]`), with a `spec` the
//! schema does not require, as imported CRDs need.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A garden shed.
///
/// +genclient
/// +kubebuilder:subresource:status
/// +kubebuilder:ac:generate=true
/// +kubebuilder:printcolumn:name=Owner,type=string,JSONPath=.owner
/// +kubebuilder:printcolumn:name=Tools,type=integer,JSONPath=.spec.tools
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "garden.example.com",
    version = "v1",
    kind = "Shed",
    namespaced,
    status = "ShedStatus",
    no_spec
)]
#[serde(rename_all = "camelCase")]
pub struct ShedFields {
    /// What the shed holds; a shed may say nothing.
    ///
    /// +optional
    /// +nullable=false
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ShedSpec>,
    /// Who keeps the key: a property beside `spec`.
    ///
    /// +kubebuilder:validation:MaxLength=20
    /// +optional
    /// +nullable=false
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// What a shed holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShedSpec {
    /// How many tools.
    ///
    /// +kubebuilder:validation:Minimum=0
    pub tools: i32,
}

/// What was seen of a shed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShedStatus {
    /// Whether the door is locked.
    ///
    /// +optional
    pub locked: Option<bool>,
}
