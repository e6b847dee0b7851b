//! HTTP/1.1 on loopback, for kubectl and the binary: a listener that hands each connection
//! to the server's `tower::Service`, and a kubeconfig that points at it.

use std::convert::Infallible;
use std::net::SocketAddr;

use http::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::body::ResponseBody;

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

/// Serves `service` over HTTP/1.1 on `addr`, which must be a loopback address (port 0
/// picks one).
pub(crate) async fn listen<S>(service: S, addr: SocketAddr) -> std::io::Result<Served>
where
    S: tower::Service<
            Request<hyper::body::Incoming>,
            Response = Response<ResponseBody>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    if !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("fake-apiserver only listens on loopback, not {addr}"),
        ));
    }
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, mut stopped) = oneshot::channel();
    let server = service;
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
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
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
