//! The HTTPS server that answers the API server's AdmissionReviews.
//!
//! Built on hyper and tokio-rustls, which kube's own client already brings into every
//! controller's build (kube's `rustls-tls` feature), so serving webhooks adds no HTTP or TLS
//! stack of its own; axum would only add routing for a handful of fixed paths.
//!
//! - TLS from a directory holding `tls.crt` and `tls.key` (what cert-manager's Secrets and
//!   kubebuilder's layout use). The files are looked at again on every handshake: certificates
//!   replaced on disk (a renewed Secret) are served from the next connection on, without a
//!   restart; files that do not load keep the last good certificate in use.
//! - `POST <path>` answers an AdmissionReview (or, on a conversion route, a
//!   ConversionReview); a body that is not one gets 400, one over
//!   [`WebhookServer::max_body`] gets 413, and a handler slower than
//!   [`WebhookServer::timeout`] gets 504 (the API server's own limit is 30 s at most).
//! - `GET /healthz` answers `ok`.
//! - The future passed to `serve` stops it: no new connections, and those in flight finish
//!   (for at most the handler timeout) before `serve` returns.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;

use super::{Defaulter, Defaulting, Handler, Validating, Validator};

/// What a path answers.
#[derive(Clone)]
enum Route {
    /// AdmissionReviews, by a defaulter or a validator.
    Admission(Arc<dyn Handler>),
    /// ConversionReviews of one kind.
    Conversion(Arc<super::conversion::Conversion>),
}

/// Routes from paths to typed webhooks, served over HTTPS.
pub struct WebhookServer {
    routes: HashMap<String, Route>,
    max_body: usize,
    timeout: Duration,
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
            .finish()
    }
}

impl WebhookServer {
    /// No routes yet; bodies up to 8 MiB (an object and its old version, each up to the API
    /// server's 3 MiB request limit), handlers answering within 10 s (the API server's
    /// default `timeoutSeconds`).
    pub fn new() -> Self {
        Self {
            routes: HashMap::new(),
            max_body: 8 << 20,
            timeout: Duration::from_secs(10),
        }
    }

    /// Serves `defaulter` for kind `K` at `path` (a mutating webhook's `path`).
    #[must_use]
    pub fn defaulting<K, D>(mut self, path: impl Into<String>, defaulter: D) -> Self
    where
        K: DeserializeOwned + Serialize + Send + Sync + 'static,
        D: Defaulter<K>,
    {
        let handler = Defaulting {
            defaulter,
            kind: std::marker::PhantomData,
        };
        self.routes
            .insert(path.into(), Route::Admission(Arc::new(handler)));
        self
    }

    /// Serves `validator` for kind `K` at `path` (a validating webhook's `path`).
    #[must_use]
    pub fn validating<K, V>(mut self, path: impl Into<String>, validator: V) -> Self
    where
        K: DeserializeOwned + Send + Sync + 'static,
        V: Validator<K>,
    {
        let handler = Validating {
            validator,
            kind: std::marker::PhantomData,
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

    /// The largest AdmissionReview body read; a larger one gets 413.
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
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(std::io::Error::other)?
            .with_no_client_auth()
            .with_cert_resolver(certs);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let routes = Arc::new(self.routes);
        let (max_body, timeout) = (self.max_body, self.timeout);
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // A connection that failed before it was accepted (reset, too many
                    // files): the next one is tried.
                    Err(err) => {
                        tracing::warn!(%err, "webhook server: accept failed");
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let acceptor = acceptor.clone();
            let routes = Arc::clone(&routes);
            let watcher = graceful.watcher();
            tokio::spawn(async move {
                let handshake = tokio::time::timeout(timeout, acceptor.accept(stream)).await;
                let Ok(Ok(tls)) = handshake else {
                    return;
                };
                let service = hyper::service::service_fn(move |req| {
                    let routes = Arc::clone(&routes);
                    async move { Ok::<_, Infallible>(answer(&routes, req, max_body, timeout).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service);
                let _ = watcher.watch(conn).await;
            });
        }
        drop(listener);
        // Requests in flight finish; none takes longer than the handler timeout.
        let _ = tokio::time::timeout(timeout + Duration::from_secs(1), graceful.shutdown()).await;
        Ok(())
    }
}

fn text(status: StatusCode, body: impl Into<String>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.into())));
    *response.status_mut() = status;
    response
}

async fn answer(
    routes: &HashMap<String, Route>,
    req: http::Request<Incoming>,
    max_body: usize,
    timeout: Duration,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    if path == "/healthz" && req.method() == Method::GET {
        return text(StatusCode::OK, "ok");
    }
    let Some(handler) = routes.get(&path) else {
        return text(StatusCode::NOT_FOUND, format!("no webhook at {path}"));
    };
    if req.method() != Method::POST {
        return text(StatusCode::METHOD_NOT_ALLOWED, "webhooks take POST");
    }
    let body = match Limited::new(req.into_body(), max_body).collect().await {
        Ok(body) => body.to_bytes(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the AdmissionReview is over {max_body} bytes"),
            );
        }
        Err(err) => return text(StatusCode::BAD_REQUEST, err.to_string()),
    };
    let answered = match handler {
        Route::Admission(handler) => {
            tokio::time::timeout(timeout, super::review(handler, &body)).await
        }
        Route::Conversion(conversion) => Ok(convert(conversion, &body)),
    };
    match answered {
        Ok(Some(json)) => {
            let mut response = text(StatusCode::OK, String::new());
            *response.body_mut() = Full::new(Bytes::from(json));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            response
        }
        Ok(None) => text(
            StatusCode::BAD_REQUEST,
            "the body is not an AdmissionReview or ConversionReview with a request",
        ),
        Err(_) => text(
            StatusCode::GATEWAY_TIMEOUT,
            format!("the webhook took longer than {timeout:?}"),
        ),
    }
}

/// Answers one ConversionReview body; `None` when it is not one with a request.
fn convert(conversion: &super::conversion::Conversion, body: &[u8]) -> Option<Vec<u8>> {
    let review: kube::core::conversion::ConversionReview = serde_json::from_slice(body).ok()?;
    let request = kube::core::conversion::ConversionRequest::from_review(review).ok()?;
    serde_json::to_vec(&conversion.review(request).into_review()).ok()
}

/// The serving certificate and key in a directory (`tls.crt`, `tls.key`), loaded again when
/// either file changes.
pub struct TlsFiles {
    dir: PathBuf,
    current: Mutex<(Stamp, Arc<CertifiedKey>)>,
}

/// What tells a changed file: its modification time and length, for both files.
type Stamp = [(Option<SystemTime>, u64); 2];

impl std::fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles").field("dir", &self.dir).finish()
    }
}

impl TlsFiles {
    /// The certificate in `dir`, or why it cannot be served.
    pub fn load(dir: PathBuf) -> std::io::Result<Self> {
        let stamp = stamp(&dir);
        let key = certified_key(&dir)?;
        Ok(Self {
            dir,
            current: Mutex::new((stamp, key)),
        })
    }

    /// The files' paths.
    pub fn paths(&self) -> [PathBuf; 2] {
        [self.dir.join("tls.crt"), self.dir.join("tls.key")]
    }
}

fn stamp(dir: &Path) -> Stamp {
    ["tls.crt", "tls.key"]
        .map(|f| std::fs::metadata(dir.join(f)).map_or((None, 0), |m| (m.modified().ok(), m.len())))
}

fn certified_key(dir: &Path) -> std::io::Result<Arc<CertifiedKey>> {
    let invalid = |what: &str, e: &dyn std::fmt::Display| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {what}: {e}", dir.display()),
        )
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("tls.crt"))
        .map_err(|e| invalid("tls.crt", &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| invalid("tls.crt", &e))?;
    if certs.is_empty() {
        return Err(invalid("tls.crt", &"no certificate in it"));
    }
    let key =
        PrivateKeyDer::from_pem_file(dir.join("tls.key")).map_err(|e| invalid("tls.key", &e))?;
    let signer = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| invalid("tls.key", &e))?;
    let key = CertifiedKey::new(certs, signer);
    // A certificate renewed on disk while its key is still the old one is not served.
    key.keys_match()
        .map_err(|e| invalid("tls.key", &format!("does not match tls.crt: {e}")))?;
    Ok(Arc::new(key))
}

impl ResolvesServerCert for TlsFiles {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = stamp(&self.dir);
        if now != current.0 {
            match certified_key(&self.dir) {
                Ok(key) => *current = (now, key),
                // Half-written files are read again on the next handshake.
                Err(err) => tracing::warn!(%err, "webhook server: keeping the last certificate"),
            }
        }
        Some(Arc::clone(&current.1))
    }
}
