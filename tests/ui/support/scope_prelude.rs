// Shared by the scope cases: a namespaced Foo with status, a read-only namespaced Bar and
// a cluster-scoped Node-like kind without status or scale.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced, status = "FooStatus")]
pub struct FooSpec {
    pub replicas: i32,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct FooStatus {
    pub ready: bool,
}

/// +genclient:readonly
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Bar", namespaced)]
pub struct BarSpec {
    pub size: i32,
}

#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Machine")]
pub struct MachineSpec {
    pub rack: String,
}
