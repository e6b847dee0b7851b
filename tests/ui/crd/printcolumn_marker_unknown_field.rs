use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kubebuilder:printcolumn:name=Size,type=integer,JSONPath=.spec.size
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
#[serde(rename_all = "camelCase")]
struct FooSpec {
    replica_count: i32,
}

// A printer column whose path names no field is a warning (kube-apiserver accepts any
// JSONPath there); the type error below only makes the warning part of the expected output.
fn main() {
    let _: () = 1;
}
