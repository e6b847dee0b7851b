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
    /// The limits of [`FakeApiServer::serve`](crate::FakeApiServer::serve)'s HTTP server.
    pub http: HttpLimits,
}

/// How long the HTTP server waits for a client in each stage of a request, how many
/// connections it keeps open, and how it stops. A client that stays longer in a stage gets
/// its connection closed; the defaults are kube-apiserver's where it has one.
///
/// | limit | default | beyond it |
/// |---|---|---|
/// | `header_timeout`: a request head, from the connection or from its first byte | 32 s (kube-apiserver's `ReadHeaderTimeout`) | closed |
/// | `body_timeout`: a request body, from its head | 60 s (kube-apiserver's `--request-timeout`) | 408, closed |
/// | `idle_timeout`: between requests of a kept-alive connection | 90 s (kube-apiserver's `IdleTimeout`) | closed |
/// | `max_connections` open at once | 16 384 (kube-apiserver has no such limit; this holds thousands of watches, each a connection of its own over HTTP/1.1, within a process's usual file limit) | a new one is closed at once; those open keep being served |
/// | `shutdown_grace` | 5 s | see [`Served::stop`](crate::Served::stop) |
///
/// Requests being handled and watches being streamed have no deadline here (a test's
/// programmed delays and long watches are the point).
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// How long a request head may take to arrive.
    pub header_timeout: Duration,
    /// How long a request body may take to arrive, from the end of its head.
    pub body_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// How many connections are open at once; one more is closed when accepted.
    pub max_connections: usize,
    /// How long requests being handled get to finish when the server stops.
    pub shutdown_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(32),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(90),
            max_connections: 16_384,
            shutdown_grace: Duration::from_secs(5),
        }
    }
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
            http: HttpLimits::default(),
        }
    }
}
