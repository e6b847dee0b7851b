//! Foo in v1beta1: `spec.deployment: {name, replicas}` where v1alpha1 has
//! `spec.deploymentName` and `spec.replicas`, and a `spec.note` v1alpha1 has no place for;
//! the same status. Converted to and from the hub, v1alpha1, by the `TryFrom` conversions
//! below (served by the generated `conversion` module); the note is kept on the stored
//! v1alpha1 object in an annotation ([`Stash`]), so a v1beta1 Foo reads back unchanged.

use kube::CustomResource;
use kube_codegen_runtime::webhook::conversion::{Stash, StashError};
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
    ///
    /// +required
    pub deployment: FooDeployment,
    /// A note for people about this Foo; the controller does not read it. New in v1beta1:
    /// stored in the annotation `samplecontroller.k8s.io/conversion-v1beta1` of the
    /// v1alpha1 object.
    ///
    /// +kubebuilder:validation:MaxLength=256
    /// +optional
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A Deployment of a given name and size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FooDeployment {
    /// Its name.
    ///
    /// +required
    /// +kube-codegen:lint:ignore=max-length converted to and from v1alpha1's `deploymentName`, which has no bound
    pub name: String,
    /// Its number of replicas, 1 to 10.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    /// +optional
    pub replicas: Option<i32>,
}

/// The fields of a v1beta1 Foo that v1alpha1 has no place for, kept on the v1alpha1 object
/// by [`Stash`].
#[derive(Default, Serialize, Deserialize)]
struct OnlyInV1beta1 {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

impl TryFrom<Foo> for v1alpha1::Foo {
    type Error = StashError;

    fn try_from(foo: Foo) -> Result<Self, StashError> {
        let mut metadata = foo.metadata;
        let kept = OnlyInV1beta1 {
            note: foo.spec.note,
        };
        Stash::of::<Foo>().keep(&mut metadata, &kept)?;
        let spec = v1alpha1::FooSpec {
            deployment_name: foo.spec.deployment.name,
            replicas: foo.spec.deployment.replicas,
        };
        Ok(Self {
            metadata,
            spec,
            status: foo.status,
        })
    }
}

impl TryFrom<v1alpha1::Foo> for Foo {
    type Error = StashError;

    fn try_from(foo: v1alpha1::Foo) -> Result<Self, StashError> {
        let mut metadata = foo.metadata;
        let kept: OnlyInV1beta1 = Stash::of::<Foo>().take(&mut metadata)?.unwrap_or_default();
        let deployment = FooDeployment {
            name: foo.spec.deployment_name,
            replicas: foo.spec.replicas,
        };
        Ok(Self {
            metadata,
            spec: FooSpec {
                deployment,
                note: kept.note,
            },
            status: foo.status,
        })
    }
}
