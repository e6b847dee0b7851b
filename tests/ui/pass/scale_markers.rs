// The scale subresource from `+kubebuilder:subresource:scale` alone gives the scale methods,
// and a marker that repeats `#[kube(scale(...))]` is accepted.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "ByMarker", namespaced, status = "Replicas")]
pub struct ByMarkerSpec {
    pub replicas: i32,
}

/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Both",
    namespaced,
    status = "Replicas",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
)]
pub struct BothSpec {
    pub replicas: i32,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Replicas {
    pub replicas: i32,
}

#[allow(unused)]
async fn scale(a: ByMarkerClient<kube_codegen_runtime::client::scope::Namespaced>, b: BothClient<kube_codegen_runtime::client::scope::Namespaced>) -> kube::Result<()> {
    let _ = a.get_scale("x").await?;
    let _ = b.get_scale("x").await?;
    Ok(())
}

fn main() {}
