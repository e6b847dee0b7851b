//! Built-in kinds of core `v1` the sample uses.

/// The Pods of an Icecream's Deployment, which the sample only reads.
///
/// +genclient
/// +genclient:readonly
pub type Pod = k8s_openapi::api::core::v1::Pod;
