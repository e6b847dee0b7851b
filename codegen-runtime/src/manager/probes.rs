//! `/healthz`, `/livez`, `/readyz` and `/metrics` over plain HTTP/1, the endpoints a
//! Deployment's probes and a Prometheus scrape read.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::metrics::{CONTENT_TYPE, Metrics};

/// How long one connection may take to send its request: a probe or a scrape is one small
/// GET, so a client that holds a connection open longer is dropped.
const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// Connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 64;

fn respond(ready: &AtomicBool, metrics: &Metrics, path: &str) -> Response<Full<Bytes>> {
    let text = "text/plain; charset=utf-8";
    let (code, content_type, body) = match path {
        "/healthz" | "/livez" => (StatusCode::OK, text, "ok".to_owned()),
        "/readyz" if ready.load(Ordering::Relaxed) => (StatusCode::OK, text, "ok".to_owned()),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            text,
            "caches not synced".to_owned(),
        ),
        "/metrics" => (StatusCode::OK, CONTENT_TYPE, metrics.encode()),
        _ => (StatusCode::NOT_FOUND, text, "not found".to_owned()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = code;
    if let Ok(value) = http::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, value);
    }
    response
}

/// Serves the endpoints on `listener` until the task is aborted.
pub(super) fn serve(
    listener: TcpListener,
    ready: Arc<AtomicBool>,
    metrics: Metrics,
) -> tokio::task::JoinHandle<()> {
    let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    tokio::spawn(async move {
        loop {
            let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                return;
            };
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (ready, metrics) = (Arc::clone(&ready), metrics.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<_>| {
                    let response = respond(&ready, &metrics, req.uri().path());
                    async move { Ok::<_, Infallible>(response) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .header_read_timeout(REQUEST_DEADLINE)
                    .timer(hyper_util::rt::TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service);
                let _ = tokio::time::timeout(REQUEST_DEADLINE * 3, connection).await;
                drop(permit);
            });
        }
    })
}

/// Binds `addr` for [`serve`].
pub(super) async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}
