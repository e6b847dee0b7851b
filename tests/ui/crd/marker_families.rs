// Markers of controller-gen's set: `items:` forms on something that is not a list, a bad
// `Type`, a typo answered from its own family, and a marker kube-codegen does not support.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    /// +kubebuilder:validation:items:MaxLength=3
    pub name: String,
    /// +kubebuilder:validation:items:Minimum=1
    pub tags: Vec<String>,
    /// +kubebuilder:validation:Type=strin
    pub kind: String,
    /// +kubebuilder:validation:Minimun=1
    pub size: i32,
    /// +kubebuilder:ac:output:package=applyconfigs
    pub colour: String,
}

fn main() {}
