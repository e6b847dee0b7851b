//! Core `v1` kinds.

/// The nodes to reboot.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:onlyVerbs=get,list,watch,patch
pub type Node = k8s_openapi::api::core::v1::Node;
