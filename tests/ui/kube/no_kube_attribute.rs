use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct FooSpec {
    replicas: i32,
}

fn main() {}
