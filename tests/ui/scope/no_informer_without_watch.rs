// `+genclient:onlyVerbs=get,list` has no watch, so no informer or lister is generated.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +genclient:onlyVerbs=get,list
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Snapshot", namespaced)]
pub struct SnapshotSpec {
    pub size: i32,
}

#[allow(unused)]
fn scenario(factory: &kube_codegen_runtime::SharedInformerFactory) {
    let _ = SnapshotInformer::new(factory);
}

fn main() {}
