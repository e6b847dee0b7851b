use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
struct FooSpec {
    /// +kubebuilder:validation:Maximum=10
    #[schemars(range(min = 1, max = 5))]
    replicas: i32,
}

fn main() {}
