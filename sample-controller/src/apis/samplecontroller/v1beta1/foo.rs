//! Foo in v1beta1: `spec.deployment: {name, replicas}` where v1alpha1 has
//! `spec.deploymentName` and `spec.replicas`; the same status. Converted to and from the hub,
//! v1alpha1, by the `From` conversions below (served by the generated `conversion` module).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::apis::samplecontroller::v1alpha1;
pub use crate::apis::samplecontroller::v1alpha1::FooStatus;

/// The desired state of a Foo: the Deployment it owns.
///
/// +genclient
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, sample API: not reviewed by the Kubernetes API reviewers"
/// +kubebuilder:subresource:status
/// +kubebuilder:printcolumn:name=Deployment,type=string,JSONPath=.spec.deployment.name
/// +kubebuilder:printcolumn:name=Available,type=integer,JSONPath=.status.availableReplicas
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1beta1",
    kind = "Foo",
    namespaced,
    status = "FooStatus",
    shortname = "foo"
)]
pub struct FooSpec {
    /// The Deployment this Foo owns.
    pub deployment: FooDeployment,
}

/// A Deployment of a given name and size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FooDeployment {
    /// Its name.
    pub name: String,
    /// Its number of replicas, 1 to 10.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    /// +optional
    pub replicas: Option<i32>,
}

impl From<Foo> for v1alpha1::Foo {
    fn from(foo: Foo) -> Self {
        let spec = v1alpha1::FooSpec {
            deployment_name: foo.spec.deployment.name,
            replicas: foo.spec.deployment.replicas,
        };
        Self {
            metadata: foo.metadata,
            spec,
            status: foo.status,
        }
    }
}

impl From<v1alpha1::Foo> for Foo {
    fn from(foo: v1alpha1::Foo) -> Self {
        let deployment = FooDeployment {
            name: foo.spec.deployment_name,
            replicas: foo.spec.replicas,
        };
        Self {
            metadata: foo.metadata,
            spec: FooSpec { deployment },
            status: foo.status,
        }
    }
}
