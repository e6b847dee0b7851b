//! Foo: asks for a Deployment of a given name and size (Go's sample-controller). The
//! storage version and hub: v1beta1 converts to and from it.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Foo: a Deployment named `deploymentName` with `replicas` pods.
///
/// +genclient
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, sample API: not reviewed by the Kubernetes API reviewers"
/// +kubebuilder:subresource:status
/// +kubebuilder:storageversion
/// +kube-codegen:conversion
/// +kubebuilder:printcolumn:name=Deployment,type=string,JSONPath=.spec.deploymentName
/// +kubebuilder:printcolumn:name=Available,type=integer,JSONPath=.status.availableReplicas
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    namespaced,
    status = "FooStatus",
    shortname = "foo"
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// Name of the Deployment this Foo owns. Like Go's sample, the controller (not the
    /// schema) reports an empty name, as an `InvalidSpec` event.
    ///
    /// +required
    /// +kube-codegen:lint:ignore=max-length a bound added now would be a breaking change for stored objects (`kube-codegen compat`); Go's sample-controller has none
    pub deployment_name: String,
    /// Number of replicas of the Deployment, 1 to 10.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    /// +optional
    pub replicas: Option<i32>,
}

/// The observed state of a Foo.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Available replicas of the owned Deployment.
    ///
    /// +kube-codegen:lint:ignore=status-optional a plain `int32` as in Go's sample-controller; the controller always writes it, and making it optional changes the stored schema of both versions
    pub available_replicas: i32,
}
