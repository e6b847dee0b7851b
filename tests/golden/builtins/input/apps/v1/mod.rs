/// +genclient
pub type Deployment = k8s_openapi::api::apps::v1::Deployment;

/// +genclient
/// +genclient:readonly
pub type ReplicaSet = k8s_openapi::api::apps::v1::ReplicaSet;
