use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced, printcolumn(name = "X", type_ = "string", json_path = ".data.x"))]
#[serde(rename_all = "camelCase")]
struct FooSpec {
    replicas: i32,
    deployment_name: String,
}

// A printer column whose path names no field is a warning (kube-apiserver accepts any
// JSONPath there); the type error below only makes the warning part of the expected output.
fn main() {
    let _: () = 1;
}
