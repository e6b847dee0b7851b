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

fn main() {}
