// A value validation on a field it does not apply to is kept in the CRD (kube-apiserver
// accepts and ignores it, and CRDs in the wild carry such) with a warning at the marker.
// The type error in `main` only makes the warnings part of the expected output.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
struct FooSpec {
    /// +kubebuilder:validation:Minimum=1
    name: String,
    /// +kubebuilder:validation:MaxLength=63
    values: Vec<String>,
}

fn main() {
    let _: () = 1;
}
