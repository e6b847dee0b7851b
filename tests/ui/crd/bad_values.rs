use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
/// +kubebuilder:validation:XValidation:rule="self.replicas <= self.maxReplicas"
struct FooSpec {
    /// +kubebuilder:validation:Enum=1;two;3
    replicas: i32,
    /// +listMapKey=name
    names: Vec<String>,
    /// +kubebuilder:validation:XValidation:rule="self.size() > 0",reason=Invalid
    labels: Vec<String>,
    /// +kubebuilder:validation:XValidation:rule="self > 'x'"
    size: i32,
}

fn main() {}
