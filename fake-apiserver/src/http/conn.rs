//! One HTTP connection of [`serve`](super::serve): the stages a request goes through, the
//! deadline of each stage that waits on the client, and what the connection does when the
//! server stops.
//!
//! The socket keeps the deadlines of the stages between bodies ([`Watched`]): hyper polls
//! it whenever it waits on the client, so a stalled head or an idle connection fails with
//! `TimedOut` without a task per timer. The body has its own timer ([`TimedBody`]), polled
//! by whoever reads the body. The request handler moves the stage along; the first byte of
//! a request on an idle connection moves it to [`Stage::Head`].

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use super::body::ResponseBody;
use crate::config::HttpLimits;

/// How many headers a request may have: far more than any client sends (kube-apiserver
/// has no count, only its 1 MiB limit on a request head).
const MAX_HEADERS: usize = 4096;

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stage {
    /// Reading a request head: from the connection's start, or from a request's first byte.
    Head = 0,
    /// Reading a request body (its deadline is [`TimedBody`]'s).
    Body = 1,
    /// The request is read and being answered: no deadline.
    Handling = 2,
    /// A watch being streamed: no deadline, and closed at once when the server stops.
    Streaming = 3,
    /// Between requests (and writing an answer).
    Idle = 4,
}

impl Stage {
    fn from_bits(bits: u64) -> Self {
        match bits & 0x7 {
            0 => Self::Head,
            1 => Self::Body,
            2 => Self::Handling,
            3 => Self::Streaming,
            _ => Self::Idle,
        }
    }
}

/// The stage of one connection, shared by its socket, its handler and its bodies. Each
/// change also counts up (above the low three bits), so a timer restarts when a stage
/// follows itself, and a late change by an old body cannot undo a newer one.
#[derive(Debug)]
pub(crate) struct Progress(AtomicU64);

impl Progress {
    fn new(stage: Stage) -> Self {
        Self(AtomicU64::new(stage as u64))
    }

    fn bits(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    pub(crate) fn stage(&self) -> Stage {
        Stage::from_bits(self.bits())
    }

    /// Moves to `stage`; the bits it moved to.
    fn set(&self, stage: Stage) -> u64 {
        let next = |bits: u64| (((bits >> 3) + 1) << 3) | stage as u64;
        let before = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| Some(next(bits)))
            .unwrap_or_else(|bits| bits);
        next(before)
    }

    /// Moves from exactly `seen` to `to`; nothing when the stage changed since.
    fn leave(&self, seen: u64, to: Stage) {
        let next = (((seen >> 3) + 1) << 3) | to as u64;
        let _ = self
            .0
            .compare_exchange(seen, next, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// A socket that fails with `TimedOut` once its connection stays in [`Stage::Head`] or
/// [`Stage::Idle`] longer than that stage's deadline.
struct Watched {
    io: TcpStream,
    progress: Arc<Progress>,
    head: Duration,
    idle: Duration,
    /// The bits the timer was set for.
    seen: u64,
    timer: Pin<Box<Sleep>>,
    armed: bool,
}

impl Watched {
    fn new(io: TcpStream, progress: Arc<Progress>, limits: &HttpLimits) -> Self {
        let mut watched = Self {
            io,
            progress,
            head: limits.header_timeout,
            idle: limits.idle_timeout,
            seen: u64::MAX,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: false,
        };
        let bits = watched.progress.bits();
        watched.rearm(bits);
        watched
    }

    fn rearm(&mut self, bits: u64) {
        self.seen = bits;
        let after = match Stage::from_bits(bits) {
            Stage::Head => Some(self.head),
            Stage::Idle => Some(self.idle),
            Stage::Body | Stage::Handling | Stage::Streaming => None,
        };
        self.armed = after.is_some();
        if let Some(after) = after {
            self.timer.as_mut().reset(Instant::now() + after);
        }
    }

    /// Restarts the timer when the stage changed; `TimedOut` once its deadline passed.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let bits = self.progress.bits();
        if bits != self.seen {
            self.rearm(bits);
        }
        if self.armed && self.timer.as_mut().poll(cx).is_ready() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client stayed in {:?} past its deadline",
                    Stage::from_bits(self.seen)
                ),
            ));
        }
        Ok(())
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        // The first byte of a request on an idle connection: its head is being read now.
        if buf.filled().len() > before && Stage::from_bits(this.seen) == Stage::Idle {
            this.progress.leave(this.seen, Stage::Head);
            let bits = this.progress.bits();
            this.rearm(bits);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// What a request body may fail with (the same as `http::BoxError`).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a request body fails with when it does not arrive within the body timeout.
#[derive(Debug)]
pub(crate) struct BodyTimedOut(pub(crate) Duration);

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body did not arrive within {:?}", self.0)
    }
}

impl std::error::Error for BodyTimedOut {}

/// A request body that fails with [`BodyTimedOut`] once its deadline passes, and moves
/// its connection to [`Stage::Handling`] when it ends.
pub(crate) struct TimedBody {
    inner: Incoming,
    timer: Pin<Box<Sleep>>,
    after: Duration,
    progress: Arc<Progress>,
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            if frame.is_none() || this.inner.is_end_stream() {
                this.progress.set(Stage::Handling);
            }
            return Poll::Ready(frame.map(|f| f.map_err(BoxError::from)));
        }
        ready!(this.timer.as_mut().poll(cx));
        Poll::Ready(Some(Err(Box::new(BodyTimedOut(this.after)))))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A watch's response body: when it ends (or is dropped), its connection is idle again.
struct Streamed {
    inner: ResponseBody,
    progress: Arc<Progress>,
    seen: u64,
}

impl Body for Streamed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        if frame.is_none() {
            this.progress.leave(this.seen, Stage::Idle);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Streamed {
    fn drop(&mut self) {
        self.progress.leave(self.seen, Stage::Idle);
    }
}

/// Waits until the server stops; the grace deadline of requests being answered.
async fn stopping(stop: &mut watch::Receiver<Option<Instant>>) -> Instant {
    match stop.wait_for(Option::is_some).await {
        Ok(deadline) => deadline.unwrap_or_else(Instant::now),
        // The server is gone: nothing to wait for.
        Err(_) => Instant::now(),
    }
}

/// Serves one accepted connection with `service` until the client closes it, a stage
/// passes its deadline, or the server stops.
pub(crate) async fn serve<S>(
    stream: TcpStream,
    service: S,
    limits: Arc<HttpLimits>,
    mut stop: watch::Receiver<Option<Instant>>,
) where
    S: tower::Service<Request<TimedBody>, Response = Response<ResponseBody>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    let progress = Arc::new(Progress::new(Stage::Head));
    let socket = Watched::new(stream, Arc::clone(&progress), &limits);
    let handler = {
        let progress = Arc::clone(&progress);
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let (mut service, progress) = (service.clone(), Arc::clone(&progress));
            let after = limits.body_timeout;
            async move {
                let (parts, inner) = req.into_parts();
                let stage = if inner.is_end_stream() {
                    Stage::Handling
                } else {
                    Stage::Body
                };
                progress.set(stage);
                let body = TimedBody {
                    inner,
                    timer: Box::pin(tokio::time::sleep(after)),
                    after,
                    progress: Arc::clone(&progress),
                };
                let response =
                    tower::Service::call(&mut service, Request::from_parts(parts, body)).await?;
                Ok::<_, Infallible>(answered(response, &progress))
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    // The deadlines are the socket's (`Watched`): hyper's header timer would also run
    // between requests, where the idle deadline applies.
    http.header_read_timeout(None);
    // kube-apiserver bounds a request head by its size (1 MiB), not by how many headers it
    // has; hyper's default of 100 refused ordinary requests with many headers (431).
    http.max_headers(MAX_HEADERS);
    let conn = http.serve_connection(TokioIo::new(socket), handler);
    let mut conn = std::pin::pin!(conn);
    let grace = tokio::select! {
        _ = conn.as_mut() => return,
        grace = stopping(&mut stop) => grace,
    };
    // Stopping. A request still arriving and a watch are closed now; a request being
    // answered gets until the grace deadline to be written; an idle connection closes.
    if matches!(
        progress.stage(),
        Stage::Head | Stage::Body | Stage::Streaming
    ) {
        return;
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout_at(grace, conn).await;
}

/// The stage after a response: a watch streams, a body that timed out closes the
/// connection, anything else leaves it idle while the answer is written.
fn answered(response: Response<ResponseBody>, progress: &Arc<Progress>) -> Response<ResponseBody> {
    if response.status() == StatusCode::REQUEST_TIMEOUT {
        progress.set(Stage::Idle);
        let mut response = response;
        response
            .headers_mut()
            .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
        return response;
    }
    let streamed = response
        .headers()
        .get(header::TRANSFER_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"chunked"));
    if !streamed {
        progress.set(Stage::Idle);
        return response;
    }
    let seen = progress.set(Stage::Streaming);
    response.map(|inner| {
        Streamed {
            inner,
            progress: Arc::clone(progress),
            seen,
        }
        .boxed_unsync()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_change_does_not_undo_a_newer_one() {
        let progress = Progress::new(Stage::Head);
        let streaming = progress.set(Stage::Streaming);
        assert_eq!(progress.stage(), Stage::Streaming);
        // The next request started before the old watch body was dropped.
        progress.set(Stage::Head);
        progress.leave(streaming, Stage::Idle);
        assert_eq!(progress.stage(), Stage::Head);
        // A stage that follows itself still counts as a change.
        let head = progress.bits();
        progress.set(Stage::Head);
        assert_ne!(progress.bits(), head);
    }
}
