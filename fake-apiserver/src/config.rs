//! The settings of one server.

use std::time::Duration;

/// Settings of one server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Delete dependents whose owners are gone (on by default).
    pub garbage_collection: bool,
    /// How often open watches that asked for bookmarks get one.
    pub bookmark_interval: Duration,
    /// How many events are kept for watches that resume from a version.
    pub history: usize,
    /// Put a `kube-root-ca.crt` ConfigMap and a `default` ServiceAccount in every namespace,
    /// as kube-controller-manager does (on by default; off for an empty world).
    pub namespace_defaults: bool,
    /// How many requests [`FakeApiServer::actions`](crate::FakeApiServer::actions) keeps,
    /// newest last; older ones are dropped (and counted), 0 records none.
    pub action_log: usize,
    /// Where the Services that webhook configurations name are served: `"namespace/name"`
    /// to a loopback address (the fake has no cluster network to find them in).
    pub webhook_services: std::collections::BTreeMap<String, std::net::SocketAddr>,
    /// The IPv4 range Service cluster IPs come from (`10.96.0.0/12`, as kubeadm's).
    pub service_cidr: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            garbage_collection: true,
            bookmark_interval: Duration::from_secs(30),
            history: 10_000,
            namespace_defaults: true,
            action_log: 10_000,
            webhook_services: std::collections::BTreeMap::new(),
            service_cidr: "10.96.0.0/12".to_owned(),
        }
    }
}
