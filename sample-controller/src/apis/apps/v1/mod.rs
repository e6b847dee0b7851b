//! Built-in kinds of `apps/v1` the sample uses, declared so they get the same typed client,
//! informer and lister as the sample's own kinds.

/// The Deployments Foo and Icecream own.
///
/// +genclient
pub type Deployment = k8s_openapi::api::apps::v1::Deployment;
