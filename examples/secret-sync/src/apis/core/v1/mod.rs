//! Core `v1` kinds.

/// Source secrets and their copies.
///
/// +genclient
pub type Secret = k8s_openapi::api::core::v1::Secret;

/// Namespaces receive copies.
///
/// +genclient
/// +genclient:nonNamespaced
/// +genclient:readonly
pub type Namespace = k8s_openapi::api::core::v1::Namespace;
