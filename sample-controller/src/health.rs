//! `/healthz`, `/readyz` and `/metrics` over HTTP.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::metrics::Metrics;

/// What the endpoints report.
#[derive(Debug, Default)]
pub struct Health {
    /// Caches synced and reconciling (or standing by for the lease).
    pub ready: AtomicBool,
    /// Reconcile counters.
    pub metrics: Arc<Metrics>,
}

fn respond(health: &Health, path: &str) -> Response<Full<Bytes>> {
    let (code, body) = match path {
        "/healthz" | "/livez" => (StatusCode::OK, "ok".to_owned()),
        "/readyz" if health.ready.load(Ordering::Relaxed) => (StatusCode::OK, "ok".to_owned()),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "caches not synced".to_owned(),
        ),
        "/metrics" => (StatusCode::OK, health.metrics.render()),
        _ => (StatusCode::NOT_FOUND, "not found".to_owned()),
    };
    Response::builder()
        .status(code)
        .body(Full::new(Bytes::from(body)))
        .expect("static parts are valid")
}

/// Serves the endpoints on `addr` until the task is dropped; returns the bound address.
pub async fn serve(
    addr: SocketAddr,
    health: Arc<Health>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let health = health.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let response = respond(&health, req.uri().path());
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Ok((bound, task))
}
