use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Observed {
    pub ready: bool,
}

/// A cluster-scoped kind whose status is written by someone else.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:noStatus
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Rack", status = "Observed")]
pub struct RackSpec {
    pub slots: u32,
}

/// +genclient
/// +genclient:readonly
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Reader", namespaced, status = "Observed")]
pub struct ReaderSpec {
    pub path: String,
}

/// +genclient
/// +genclient:onlyVerbs=create,get,applyStatus
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Limited", namespaced, status = "Observed")]
pub struct LimitedSpec {
    pub size: u32,
}

/// +genclient
/// +genclient:skipVerbs=deleteCollection,watch,updateStatus
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Skipper", namespaced, status = "Observed")]
pub struct SkipperSpec {
    pub size: u32,
}

/// +genclient
/// +genclient:noVerbs
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Opaque", namespaced)]
pub struct OpaqueSpec {
    pub data: String,
}

/// +genclient
/// +resourceName=renamedthings
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Renamed", plural = "renamedthings")]
pub struct RenamedSpec {
    pub note: String,
}

/// Not marked: no client.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "filters.example.com", version = "v1beta1", kind = "Unmarked", namespaced)]
pub struct UnmarkedSpec {
    pub note: String,
}
