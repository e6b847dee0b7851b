//! Transports: a `tower::Service` for `kube::Client`, and HTTP/1.1 on loopback for kubectl.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::FakeApiServer;
use crate::body::ResponseBody;
use crate::error::ApiError;
use crate::server;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<B> tower::Service<Request<B>> for FakeApiServer
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        let controls = self.controls.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let bytes = match read_body(&parts.method, body).await {
                Ok(bytes) => bytes,
                Err(err) => return Ok(crate::body::error(&err)),
            };
            Ok(server::handle(&shared, &controls, Request::from_parts(parts, bytes)).await)
        })
    }
}

/// kube-apiserver's limit on a request body (`--max-request-body-bytes`, 3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The body of a request that has one: at most [`MAX_REQUEST_BODY_BYTES`], read no further
/// than one byte past it (a larger one is a 413, as the real handlers answer it). Reads and
/// watches are answered without reading their body, as the real server does.
async fn read_body<B>(method: &http::Method, body: B) -> Result<bytes::Bytes, ApiError>
where
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    if !matches!(
        *method,
        http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
    ) {
        return Ok(bytes::Bytes::new());
    }
    match http_body_util::Limited::new(body, MAX_REQUEST_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::custom(
            413,
            "RequestEntityTooLarge",
            &format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
        )),
        Err(e) => Err(ApiError::bad_request(format!(
            "cannot read the request body: {e}"
        ))),
    }
}

/// A server listening on loopback; dropping it (or [`Served::shutdown`]) stops accepting.
#[derive(Debug)]
pub struct Served {
    /// The bound address.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Served {
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig that points `kubectl` at this server.
    pub fn kubeconfig(&self) -> String {
        kubeconfig(&self.url())
    }

    /// Stops accepting connections.
    pub fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A kubeconfig for a server at `url`, with namespace `default`.
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\nusers:\n- name: fake\n  user:\n    token: fake\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\ncurrent-context: fake\n"
    )
}

/// `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`: an accept that fails because the process or
/// the system is out of something, not because of the connection.
fn resource_exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12))
}

impl FakeApiServer {
    /// Serves over HTTP/1.1 on `addr`, which must be a loopback address (port 0 picks one).
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<Served> {
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("fake-apiserver only listens on loopback, not {addr}"),
            ));
        }
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (stop, mut stopped) = oneshot::channel();
        let server = self.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        // Out of file descriptors or memory: accepting again at once would
                        // spin; wait for connections to close.
                        Err(e) if resource_exhausted(&e) => {
                            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                            continue;
                        }
                        // A connection that failed before it was accepted.
                        Err(_) => continue,
                    },
                    _ = &mut stopped => return,
                };
                let server = server.clone();
                tokio::spawn(async move {
                    let svc =
                        hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let mut server = server.clone();
                            async move { tower::Service::call(&mut server, req).await }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok(Served {
            addr,
            stop: Some(stop),
        })
    }
}
