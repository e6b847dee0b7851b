use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced, status = "FooStatus", scale(spec_replicas_path = ".spec.size", status_replicas_path = ".status.replicas"))]
#[serde(rename_all = "camelCase")]
struct FooSpec {
    replicas: i32,
    deployment_name: String,
}

// A scale path naming no field is a warning (kube-apiserver accepts any path there); the
// type error below only makes the warning part of the expected output.
fn main() {
    let _: () = 1;
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct FooStatus {
    replicas: i32,
}
