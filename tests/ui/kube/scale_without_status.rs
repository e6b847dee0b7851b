use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced, scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"))]
struct FooSpec {
    replicas: i32,
}

fn main() {}
