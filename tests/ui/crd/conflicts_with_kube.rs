use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kubebuilder:resource:shortName=fo,scope=Cluster
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced, shortname = "foo")]
struct FooSpec {
    replicas: i32,
}

fn main() {}
