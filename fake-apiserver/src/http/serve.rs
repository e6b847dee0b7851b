//! HTTP/1.1 on loopback, for kubectl and the binary: a listener that hands each connection
//! ([`conn`](super::conn)) to the server's `tower::Service` within the limits of
//! [`HttpLimits`], stops gracefully, and a kubeconfig that points at it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::body::ResponseBody;
use super::conn::{self, TimedBody};
use crate::config::HttpLimits;

/// A server listening on loopback. [`Served::stop`] (or [`Served::shutdown`], or dropping
/// it) stops it: the listener closes at once, so do idle connections, requests still
/// arriving and watches; requests being answered get [`HttpLimits::shutdown_grace`] to
/// finish, and whatever is left then is closed.
#[derive(Debug)]
pub struct Served {
    /// The bound address.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    stopped: Option<oneshot::Receiver<()>>,
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

    /// Stops the server (see [`Served`]) without waiting for it.
    pub fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops the server and waits until every connection is closed: at most the shutdown
    /// grace, and a moment.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(stopped) = self.stopped.take() {
            let _ = stopped.await;
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

/// A kubeconfig for a server at `url`, with namespace `default`, as the default admin.
pub fn kubeconfig(url: &str) -> String {
    kubeconfig_with_token(url, super::auth::ADMIN_TOKEN)
}

/// A kubeconfig for a server at `url`, with namespace `default`, that authenticates with
/// `token` (one [`FakeApiServer::token_for_user`](crate::FakeApiServer::token_for_user) or
/// [`token_for_service_account`](crate::FakeApiServer::token_for_service_account) gave).
pub fn kubeconfig_with_token(url: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\nusers:\n- name: fake\n  user:\n    token: {token}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\ncurrent-context: fake\n"
    )
}

/// How long the accept loop waits after a failed accept (out of file descriptors, say), so
/// a full table is not polled in a busy loop.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `service` over HTTP/1.1 on `addr`, which must be a loopback address (port 0
/// picks one), within `limits`.
pub(crate) async fn listen<S>(
    service: S,
    addr: SocketAddr,
    limits: HttpLimits,
) -> std::io::Result<Served>
where
    S: tower::Service<Request<TimedBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
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
    let (stop, stop_asked) = oneshot::channel();
    let (done, stopped) = oneshot::channel();
    tokio::spawn(async move {
        accept(listener, service, Arc::new(limits), stop_asked).await;
        let _ = done.send(());
    });
    Ok(Served {
        addr,
        stop: Some(stop),
        stopped: Some(stopped),
    })
}

/// Accepts connections until `stop_asked` fires (or its sender is dropped), then stops
/// them as [`Served`] says.
async fn accept<S>(
    listener: TcpListener,
    service: S,
    limits: Arc<HttpLimits>,
    mut stop_asked: oneshot::Receiver<()>,
) where
    S: tower::Service<Request<TimedBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    let slots = Arc::new(Semaphore::new(
        limits.max_connections.min(Semaphore::MAX_PERMITS),
    ));
    // `Some(deadline)` once stopping: the grace deadline of requests being answered.
    let (stopping, stop) = watch::channel(None::<Instant>);
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            // Connections that ended are reaped as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            _ = &mut stop_asked => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors or memory, or a connection that failed before it
            // was accepted: wait a moment rather than spin.
            Err(_) => {
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    _ = &mut stop_asked => break,
                }
            }
        };
        // Over the limit: closed now, before anything is read or spent on it.
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (service, limits, stop) = (service.clone(), Arc::clone(&limits), stop.clone());
        connections.spawn(async move {
            conn::serve(stream, service, limits, stop).await;
            drop(slot);
        });
    }
    drop(listener);
    let grace = Instant::now() + limits.shutdown_grace;
    let _ = stopping.send(Some(grace));
    // Every connection ends by the grace deadline; what is left a moment later is aborted.
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout_at(grace + Duration::from_millis(200), drained).await;
    connections.shutdown().await;
}
