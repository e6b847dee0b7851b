use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kubebuilder:ac:generate=true
#[derive(CustomResource, GenClient, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    pub soil: Soil,
}

/// Used by the spec, but without `#[derive(ApplyConfiguration)]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Soil {
    pub ph: f64,
}

fn main() {}
