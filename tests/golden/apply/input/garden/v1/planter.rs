//! Planter: apply configurations from the CLI.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A planter of beds.
///
/// +genclient
/// +kubebuilder:subresource:status
/// +kubebuilder:ac:generate=true
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "garden.example.com",
    version = "v1",
    kind = "Planter",
    namespaced,
    status = "PlanterStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct PlanterSpec {
    /// Size in litres.
    ///
    /// +optional
    pub size: Option<i32>,
    /// The soil.
    pub soil: Soil,
    /// Beds, merged one by one by name.
    ///
    /// +listType=map
    /// +listMapKey=name
    /// +optional
    #[serde(default)]
    pub beds: Vec<Bed>,
    /// Tags, merged as a set.
    ///
    /// +listType=set
    /// +optional
    #[serde(default)]
    pub tags: Vec<String>,
    /// Notes, replaced as a whole.
    ///
    /// +optional
    #[serde(default)]
    pub notes: Vec<String>,
    /// Zones by name, merged key by key.
    ///
    /// +optional
    #[serde(default)]
    pub zones: BTreeMap<String, Zone>,
    /// Frozen zones, replaced as a whole.
    ///
    /// +mapType=atomic
    /// +optional
    #[serde(default)]
    pub frozen: BTreeMap<String, Zone>,
    /// Where it stands, replaced as a whole.
    ///
    /// +structType=atomic
    /// +optional
    pub location: Option<Location>,
    /// The light it gets.
    pub light: Light,
    /// Its label: a newtype, applied whole as the string it holds.
    ///
    /// +optional
    pub label: Option<Label>,
}

/// A planter's label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Label(pub String);

/// The soil of a planter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Soil {
    /// Acidity.
    ///
    /// +optional
    pub ph: Option<f64>,
    /// What it is made of, replaced as a whole.
    #[serde(default)]
    pub mix: Vec<String>,
}

/// One bed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bed {
    /// The bed's name: its key.
    pub name: String,
    /// Depth in centimetres.
    ///
    /// +optional
    pub depth_cm: Option<i32>,
    /// What grows there, merged as a set.
    ///
    /// +listType=set
    /// +optional
    #[serde(default)]
    pub plants: Vec<String>,
}

/// A zone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Zone {
    /// Hours of sun.
    pub hours: i32,
}

/// A place.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    /// Latitude.
    pub lat: f64,
    /// Longitude.
    pub lon: f64,
}

/// How much light.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Light {
    /// All day.
    Full,
    /// Half the day.
    Partial,
    /// Little.
    Shade,
}

/// What the gardener saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanterStatus {
    /// Conditions, merged one by one by type.
    ///
    /// +listType=map
    /// +listMapKey=type
    /// +optional
    #[serde(default)]
    pub conditions: Vec<PlanterCondition>,
    /// When it was last watered.
    ///
    /// +optional
    pub watered: Option<String>,
}

/// One condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanterCondition {
    /// The condition's type: its key.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
}
