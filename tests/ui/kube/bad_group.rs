use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "Example.COM", version = "v1", kind = "Foo")]
struct FooSpec {
    replicas: i32,
}

mod dotless {
    use super::*;

    #[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example", version = "v1", kind = "Bar")]
    struct BarSpec {
        replicas: i32,
    }
}

fn main() {}
