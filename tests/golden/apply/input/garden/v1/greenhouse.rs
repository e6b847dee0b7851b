//! Greenhouse: apply configurations from the derive, in place.

use std::collections::BTreeMap;

use kube::CustomResource;
use kube_codegen_runtime::{ApplyConfiguration, GenClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A cluster-scoped greenhouse.
///
/// +kubebuilder:subresource:status
/// +kubebuilder:ac:generate=true
#[derive(CustomResource, GenClient, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "garden.example.com",
    version = "v1",
    kind = "Greenhouse",
    status = "GreenhouseStatus"
)]
pub struct GreenhouseSpec {
    /// Panes, merged one by one by row and column.
    ///
    /// +listType=map
    /// +listMapKey=row
    /// +listMapKey=column
    #[serde(default)]
    pub panes: Vec<Pane>,
    /// The heater.
    ///
    /// +optional
    pub heater: Option<Heater>,
}

/// One pane of glass.
#[derive(ApplyConfiguration, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pane {
    /// Row: a key.
    pub row: i32,
    /// Column: a key.
    pub column: i32,
    /// Whether it is tinted.
    ///
    /// +optional
    pub tinted: Option<bool>,
}

/// A heater.
#[derive(ApplyConfiguration, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Heater {
    /// Power.
    pub watts: i32,
    /// Target temperature per hour, merged key by key.
    #[serde(default)]
    pub schedule: BTreeMap<String, f64>,
}

/// What the thermometer says.
#[derive(
    ApplyConfiguration, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
pub struct GreenhouseStatus {
    /// Degrees Celsius.
    ///
    /// +optional
    pub temperature: Option<f64>,
}
