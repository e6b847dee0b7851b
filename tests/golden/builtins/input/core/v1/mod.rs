/// +genclient
pub type Pod = k8s_openapi::api::core::v1::Pod;

/// +genclient
/// +genclient:nonNamespaced
pub type Node = k8s_openapi::api::core::v1::Node;

/// +genclient
/// +genclient:onlyVerbs=get,create
pub type Secret = k8s_openapi::api::core::v1::Secret;

/// +genclient
pub type ConfigMap = k8s_openapi::api::core::v1::ConfigMap;
