//! Core `v1` kinds.

/// The Pods being watched.
///
/// +genclient
/// +genclient:readonly
pub type Pod = k8s_openapi::api::core::v1::Pod;
