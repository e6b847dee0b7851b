//! Icecream: like Foo it owns a Deployment, and it reports where that Deployment's pods run.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of an Icecream: a Deployment of `replicas` pods serving `flavor`.
///
/// +genclient
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, sample API: not reviewed by the Kubernetes API reviewers"
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Icecream",
    namespaced,
    status = "IcecreamStatus",
    category = "all",
    printcolumn(name = "Flavor", type_ = "string", json_path = ".spec.flavor"),
    printcolumn(
        name = "Available",
        type_ = "integer",
        json_path = ".status.availableReplicas"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct IcecreamSpec {
    /// Name of the Deployment this Icecream owns: a DNS subdomain.
    ///
    /// +required
    /// +kubebuilder:validation:MaxLength=253
    /// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
    pub deployment_name: String,
    /// Number of replicas of the Deployment.
    ///
    /// +optional
    #[schemars(range(min = 1, max = 10))]
    pub replicas: Option<i32>,
    /// The flavor served.
    ///
    /// +required
    pub flavor: Flavor,
}

/// Flavors on offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Flavor {
    /// Vanilla.
    Vanilla,
    /// Chocolate.
    Chocolate,
    /// Strawberry.
    Strawberry,
}

/// The observed state of an Icecream: its pods, where they run, in which phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IcecreamStatus {
    /// Available replicas of the owned Deployment.
    ///
    /// +kube-codegen:lint:ignore=status-optional the controller always writes it, as Foo's; making it optional changes the stored schema
    pub available_replicas: i32,
    /// Sorted, de-duplicated names of the nodes the pods run on.
    ///
    /// +optional
    /// +kube-codegen:lint:ignore=max-length written by the controller alone, one node name (bounded by Kubernetes) per node the pods run on; a bound would refuse a status it must write
    #[serde(default)]
    pub nodes: Vec<String>,
    /// Number of pods per phase (`Running`, `Pending`, ...).
    ///
    /// +optional
    /// +kube-codegen:lint:ignore=no-maps keyed by the pod phases Kubernetes defines, written by the controller alone; a list changes the stored schema
    #[serde(default)]
    pub pod_phases: BTreeMap<String, i32>,
}
