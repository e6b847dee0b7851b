//! The HTTPS server that answers the API server's AdmissionReviews and ConversionReviews.
//!
//! Built on hyper and tokio-rustls, which kube's own client already brings into every
//! controller's build (kube's `rustls-tls` feature), so serving webhooks adds no HTTP or TLS
//! stack of its own; axum would only add routing for a handful of fixed paths.
//!
//! - TLS from a directory holding `tls.crt` and `tls.key` (see [`TlsFiles`]), or from any
//!   certificate resolver ([`WebhookServer::serve_with`]: the self-managed certificates).
//! - `POST <path>` answers an AdmissionReview (or, on a conversion route, a
//!   ConversionReview); what is refused, and how, is in the [module docs](super).
//! - `GET /healthz` answers `ok`.
//!
//! Its limits, and what the server does when it stops, are documented on [`WebhookServer`].

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::conn::{self, Deadlines, Shared};
use super::requests::{Requests, Route};
use super::{Defaulter, Defaulting, KnownKind, TlsFiles, Validating, Validator, WebhookKind};

/// Routes from paths to typed webhooks, served over HTTPS.
///
/// # Limits
///
/// kube-apiserver calls a webhook with a timeout of `timeoutSeconds` (10 s unless set, 30 s
/// at most), over HTTP/1.1 connections it keeps for 90 s when idle and whose TLS handshake it
/// gives 10 s. A client that takes longer than that in any stage is not the API server, or
/// has given up, so waiting for it only holds memory for whoever opened the connection. Each
/// limit has a builder method:
///
/// | limit | default | beyond it |
/// |---|---|---|
/// | [`handshake_timeout`](Self::handshake_timeout) | 10 s | the connection is closed |
/// | [`header_timeout`](Self::header_timeout): a request head, from the handshake or from its first byte | 10 s | closed |
/// | [`body_timeout`](Self::body_timeout): the body, from the head | 10 s | 408, closed |
/// | [`idle_timeout`](Self::idle_timeout): between requests (and writing an answer) | 90 s | closed |
/// | [`timeout`](Self::timeout): the handler | 10 s | 504 |
/// | [`max_body`](Self::max_body) | 8 MiB | 413, closed |
/// | JSON values in a review (`max_body` / 32) | 262,144 | 413 |
/// | request head | 16 KiB | 431, closed |
/// | [`max_connections`](Self::max_connections) open at once | 1024 | a new one is closed at once; those open keep being served |
/// | [`body_budget`](Self::body_budget): bytes of bodies held at once, over all connections | 16 MiB | a body waits for memory; 503 once its body timeout passes |
/// | [`shutdown_grace`](Self::shutdown_grace) | 5 s | see below |
///
/// The future passed to `serve` stops the server: the listener is closed at once, idle
/// connections and requests still arriving (in their handshake, head or body) are closed at
/// once, reviews being answered get the grace period to finish and write their answer, and
/// whatever is left then is closed. `serve` returns within the grace period.
///
/// # Memory
///
/// A review costs a small multiple of its body while it is answered (a 3 MiB object
/// defaulted: about 28 MiB at the peak; a ConversionReview is converted one object at a time,
/// so 10,000 objects in 6.5 MB: about 13 MiB), [`body_budget`](Self::body_budget) bounds how
/// many bodies are answered at once, and an open connection costs about 22 KiB. glibc's
/// allocator keeps what is freed for reuse, so the resident set stays near the peak these
/// bounds allow instead of going back to where it started: size a Pod's memory for that
/// peak (`benches/webhook_memory.rs` measures it).
pub struct WebhookServer {
    routes: HashMap<String, Route>,
    max_body: usize,
    timeout: Duration,
    handshake_timeout: Duration,
    header_timeout: Duration,
    body_timeout: Duration,
    idle_timeout: Duration,
    max_connections: usize,
    body_budget: usize,
    shutdown_grace: Duration,
}

impl Default for WebhookServer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut paths: Vec<&String> = self.routes.keys().collect();
        paths.sort();
        f.debug_struct("WebhookServer")
            .field("paths", &paths)
            .field("max_body", &self.max_body)
            .field("timeout", &self.timeout)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("body_budget", &self.body_budget)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish()
    }
}

/// How long the accept loop waits after a failed accept (out of file descriptors, say), so
/// a full table is not polled in a busy loop.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A warning at most every 10 s for what can happen thousands of times a second.
#[derive(Default)]
struct Throttled {
    last: Option<Instant>,
    since: u64,
}

impl Throttled {
    /// Counts one; `Some(count since the last warning)` when it is time to warn again.
    fn note(&mut self) -> Option<u64> {
        self.since += 1;
        let now = Instant::now();
        if self
            .last
            .is_none_or(|last| now.duration_since(last) >= Duration::from_secs(10))
        {
            self.last = Some(now);
            return Some(std::mem::take(&mut self.since));
        }
        None
    }
}

impl WebhookServer {
    /// No routes yet, and the [limits](Self#limits) above: bodies up to 8 MiB
    /// (an object and its old version, each up to the API server's 3 MiB request limit),
    /// handlers answering within 10 s (the API server's default `timeoutSeconds`).
    pub fn new() -> Self {
        Self {
            routes: HashMap::new(),
            max_body: 8 << 20,
            timeout: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(90),
            max_connections: 1024,
            body_budget: 16 << 20,
            shutdown_grace: Duration::from_secs(5),
        }
    }

    /// Serves `defaulter` for kind `K` at `path` (a mutating webhook's `path`). Requests for
    /// another group, version or kind are refused before `defaulter` sees them.
    #[must_use]
    pub fn defaulting<K, D>(mut self, path: impl Into<String>, defaulter: D) -> Self
    where
        K: kube::Resource + DeserializeOwned + Serialize + Send + Sync + 'static,
        K::DynamicType: KnownKind,
        D: Defaulter<K>,
    {
        let handler = Defaulting {
            defaulter,
            kind: WebhookKind::of::<K>(),
            typed: std::marker::PhantomData,
        };
        self.routes
            .insert(path.into(), Route::Admission(Arc::new(handler)));
        self
    }

    /// Serves `validator` for kind `K` at `path` (a validating webhook's `path`). Requests for
    /// another group, version or kind are refused before `validator` sees them.
    #[must_use]
    pub fn validating<K, V>(mut self, path: impl Into<String>, validator: V) -> Self
    where
        K: kube::Resource + DeserializeOwned + Send + Sync + 'static,
        K::DynamicType: KnownKind,
        V: Validator<K>,
    {
        let handler = Validating {
            validator,
            kind: WebhookKind::of::<K>(),
            typed: std::marker::PhantomData,
        };
        self.routes
            .insert(path.into(), Route::Admission(Arc::new(handler)));
        self
    }

    /// Serves the ConversionReviews of one kind at `path` (a CRD's conversion webhook).
    #[must_use]
    pub fn conversion(
        mut self,
        path: impl Into<String>,
        conversion: super::conversion::Conversion,
    ) -> Self {
        self.routes
            .insert(path.into(), Route::Conversion(Arc::new(conversion)));
        self
    }

    /// Serves each `(path, conversion)`: what a generated tree's `conversion::conversions()`
    /// returns.
    #[must_use]
    pub fn conversions(
        self,
        conversions: impl IntoIterator<Item = (String, super::conversion::Conversion)>,
    ) -> Self {
        conversions
            .into_iter()
            .fold(self, |server, (path, conversion)| {
                server.conversion(path, conversion)
            })
    }

    /// The largest review body read; a larger one gets 413 (at once when its
    /// `Content-Length` says so, else when the limit is passed). A review may hold one JSON
    /// value per 32 bytes of it (262,144 in 8 MiB); one with more gets 413 too.
    #[must_use]
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How long a handler may take; a slower one gets 504.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a client has to finish the TLS handshake (10 s: the API server's own
    /// handshake timeout); the connection is closed after it.
    #[must_use]
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How long a client has to send a request head: on a new connection from the end of
    /// the handshake, on a kept-alive one from the head's first byte (10 s; the API server
    /// writes a head at once). The connection is closed after it.
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// How long a client has to send a body, from the end of its head (10 s: the API
    /// server's default webhook timeout covers the whole call). A slower body gets 408 and
    /// the connection is closed.
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// How long a kept-alive connection may stay without a request (and how long writing
    /// an answer may stall): 90 s, as long as the API server keeps its idle connections,
    /// so it is the one to close them.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How many connections are open at once (1024). Beyond it a new connection is closed
    /// as soon as it is accepted, while those open keep being served.
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// How many bytes of request bodies are held at once, over all connections (16 MiB,
    /// and never less than [`max_body`](Self::max_body)): each body takes its bytes as they
    /// arrive and gives them back once its review is answered, so the memory reviews take
    /// is bounded whatever the number of connections. A body that cannot get its bytes
    /// waits, and gets 503 once its body timeout passes.
    #[must_use]
    pub fn body_budget(mut self, bytes: usize) -> Self {
        self.body_budget = bytes;
        self
    }

    /// How long reviews being answered when the server stops get to finish (5 s); requests
    /// still arriving and idle connections are closed at once.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// `(path, CRD name)` of each conversion served whose CRD is known (see
    /// [`Conversion::crd`](super::conversion::Conversion::crd)), by path: what
    /// [`dev::install_conversions`](super::dev::install_conversions) points at this server.
    pub fn conversion_crds(&self) -> Vec<(&str, &str)> {
        let mut crds: Vec<(&str, &str)> = self
            .routes
            .iter()
            .filter_map(|(path, route)| match route {
                Route::Conversion(c) => c.crd().map(|crd| (path.as_str(), crd)),
                Route::Admission(_) => None,
            })
            .collect();
        crds.sort_unstable();
        crds
    }

    /// The paths served, sorted.
    pub fn paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self.routes.keys().map(String::as_str).collect();
        paths.sort_unstable();
        paths
    }

    /// Binds `addr` and serves until `shutdown` completes, with the certificate in `cert_dir`.
    pub async fn serve(
        self,
        addr: SocketAddr,
        cert_dir: impl Into<PathBuf>,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_on(listener, cert_dir, shutdown).await
    }

    /// [`WebhookServer::serve`] on a listener already bound (a test's port 0).
    pub async fn serve_on(
        self,
        listener: TcpListener,
        cert_dir: impl Into<PathBuf>,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()> {
        let certs = Arc::new(TlsFiles::load(cert_dir.into())?);
        self.serve_with(listener, certs, shutdown).await
    }

    /// [`WebhookServer::serve_on`] with the certificate from `certs`, asked at every
    /// handshake: a [`TlsFiles`], or the [`ServedCert`](super::certs::ServedCert) of
    /// [`SelfSignedCerts`](super::certs::SelfSignedCerts), which the operator keeps fresh.
    pub async fn serve_with(
        self,
        listener: TcpListener,
        certs: Arc<dyn rustls::server::ResolvesServerCert>,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(std::io::Error::other)?
            .with_no_client_auth()
            .with_cert_resolver(certs);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        // No TLS session resumption: the API server's Go client does not resume sessions
        // (it keeps connections alive instead), and a cache of sessions is memory that
        // floods of handshakes would fill.
        config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        config.send_tls13_tickets = 0;
        let budget_bytes = self.body_budget.max(self.max_body);
        let shared = Arc::new(Shared {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            deadlines: Deadlines {
                handshake: self.handshake_timeout,
                head: self.header_timeout,
                idle: self.idle_timeout,
            },
            requests: Requests {
                routes: self.routes,
                max_body: self.max_body,
                body_timeout: self.body_timeout,
                timeout: self.timeout,
                budget: Arc::new(Semaphore::new(budget_bytes.min(Semaphore::MAX_PERMITS))),
                budget_bytes,
            },
        });
        let max_connections = self.max_connections;
        let slots = Arc::new(Semaphore::new(max_connections.min(Semaphore::MAX_PERMITS)));
        // `Some(deadline)` once stopping: the grace deadline of reviews being answered.
        let (stop, stopping) = watch::channel(None::<Instant>);
        let mut connections = JoinSet::new();
        let (mut refused, mut failed) = (Throttled::default(), Throttled::default());
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                // Connections that ended are reaped as they end.
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
                () = &mut shutdown => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    if let Some(count) = failed.note() {
                        tracing::warn!(%err, count, "webhook server: accept failed");
                    }
                    tokio::select! {
                        () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                        () = &mut shutdown => break,
                    }
                }
            };
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                // Over the limit: closed now, before any TLS work or memory is spent on it.
                drop(stream);
                if let Some(count) = refused.note() {
                    tracing::warn!(
                        max_connections,
                        count,
                        "webhook server: connections over the limit closed"
                    );
                }
                continue;
            };
            // Answers go out when written, not after the client's next acknowledgement.
            let _ = stream.set_nodelay(true);
            let (shared, stopping) = (Arc::clone(&shared), stopping.clone());
            connections.spawn(async move {
                conn::serve(stream, shared, stopping).await;
                drop(slot);
            });
        }
        drop(listener);
        let grace = Instant::now() + self.shutdown_grace;
        let _ = stop.send(Some(grace));
        // Every connection ends by the grace deadline; what is left a moment later (a
        // handler that ignores cancellation is not waited for) is aborted.
        let drained = async { while connections.join_next().await.is_some() {} };
        let _ = tokio::time::timeout_at(grace + Duration::from_millis(200), drained).await;
        connections.shutdown().await;
        Ok(())
    }
}
