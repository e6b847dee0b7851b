//! One connection of the webhook server: the TLS handshake, then HTTP/1.1 requests, each
//! stage under its own deadline, and what a connection does when the server stops.
//!
//! The deadlines live in the socket itself ([`Watched`]): whoever reads or writes the
//! connection (rustls during the handshake, hyper afterwards) polls the stage's timer too, so
//! a client that stalls in any stage gets its connection closed without a task per timer.
//! The request handler moves the stage along ([`Stage::Body`], [`Stage::Handling`], then
//! [`Stage::Idle`]); the first byte of the next request moves an idle connection to
//! [`Stage::Head`].

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

/// Where a connection is; each stage but [`Stage::Body`] and [`Stage::Handling`] has a
/// deadline in the socket (those two have theirs in the request handler).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stage {
    /// The TLS handshake.
    Handshake = 0,
    /// Reading a request head: the first of a new connection, or one whose first byte came.
    Head = 1,
    /// Between requests of a kept-alive connection (and writing the last response).
    Idle = 2,
    /// Reading a request body.
    Body = 3,
    /// A review being answered: the body is read, the handler runs.
    Handling = 4,
}

impl Stage {
    fn from_bits(bits: u64) -> Self {
        match bits & 0x7 {
            0 => Self::Handshake,
            1 => Self::Head,
            2 => Self::Idle,
            3 => Self::Body,
            _ => Self::Handling,
        }
    }
}

/// The stage of one connection, shared by its socket and its request handler. Each change
/// also counts up, so the socket restarts its timer even when a stage follows itself.
#[derive(Debug)]
pub(crate) struct Progress(AtomicU64);

impl Progress {
    pub(crate) fn new(stage: Stage) -> Self {
        Self(AtomicU64::new(stage as u64))
    }

    pub(crate) fn stage(&self) -> Stage {
        Stage::from_bits(self.0.load(Ordering::Acquire))
    }

    pub(crate) fn set(&self, stage: Stage) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
                Some((((bits >> 3) + 1) << 3) | stage as u64)
            });
    }

    /// `from` -> `to`, unless the stage changed meanwhile.
    fn advance(&self, seen: u64, to: Stage) {
        let next = (((seen >> 3) + 1) << 3) | to as u64;
        let _ = self
            .0
            .compare_exchange(seen, next, Ordering::AcqRel, Ordering::Acquire);
    }

    fn bits(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// The socket deadlines of the stages that wait on the client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    pub(crate) handshake: Duration,
    pub(crate) head: Duration,
    pub(crate) idle: Duration,
}

impl Deadlines {
    fn of(&self, stage: Stage) -> Option<Duration> {
        match stage {
            Stage::Handshake => Some(self.handshake),
            Stage::Head => Some(self.head),
            Stage::Idle => Some(self.idle),
            Stage::Body | Stage::Handling => None,
        }
    }
}

/// A socket that fails with `TimedOut` once its connection stays in one stage longer than
/// that stage's deadline.
#[derive(Debug)]
pub(crate) struct Watched<IO> {
    io: IO,
    progress: Arc<Progress>,
    deadlines: Deadlines,
    /// The stage (and its count) the timer was set for.
    seen: u64,
    timer: Pin<Box<Sleep>>,
    armed: bool,
}

impl<IO> Watched<IO> {
    pub(crate) fn new(io: IO, progress: Arc<Progress>, deadlines: Deadlines) -> Self {
        let seen = progress.bits();
        let mut watched = Self {
            io,
            progress,
            deadlines,
            seen: u64::MAX,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: false,
        };
        watched.rearm(seen);
        watched
    }

    fn rearm(&mut self, bits: u64) {
        self.seen = bits;
        match self.deadlines.of(Stage::from_bits(bits)) {
            Some(after) => {
                self.timer.as_mut().reset(Instant::now() + after);
                self.armed = true;
            }
            None => self.armed = false,
        }
    }

    /// Restarts the timer if the stage changed; `TimedOut` once the deadline passed.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let bits = self.progress.bits();
        if bits != self.seen {
            self.rearm(bits);
        }
        if self.armed && self.timer.as_mut().poll(cx).is_ready() {
            let stage = Stage::from_bits(self.seen);
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client stayed in {stage:?} past its deadline"),
            ));
        }
        Ok(())
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        // The first byte of a request on an idle connection: its head is now being read.
        if buf.filled().len() > before && Stage::from_bits(this.seen) == Stage::Idle {
            this.progress.advance(this.seen, Stage::Head);
            let bits = this.progress.bits();
            if bits != this.seen {
                this.rearm(bits);
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Watched<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// What every connection of one server shares.
pub(crate) struct Shared {
    pub(crate) acceptor: tokio_rustls::TlsAcceptor,
    pub(crate) deadlines: Deadlines,
    pub(crate) requests: super::requests::Requests,
}

/// The largest request head (and read buffer) of a connection: what hyper holds per
/// connection at most while reading. kube-apiserver's heads are a few hundred bytes.
pub(crate) const MAX_HEAD: usize = 16 << 10;

/// Waits until the server stops: the grace deadline of reviews being answered.
async fn stopping(stop: &mut watch::Receiver<Option<Instant>>) -> Instant {
    match stop.wait_for(Option::is_some).await {
        Ok(deadline) => deadline.unwrap_or_else(Instant::now),
        // The server is gone: nothing to wait for.
        Err(_) => Instant::now(),
    }
}

/// Serves one accepted connection until the client closes it, a stage passes its deadline,
/// or the server stops.
pub(crate) async fn serve(
    stream: TcpStream,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<Option<Instant>>,
) {
    let progress = Arc::new(Progress::new(Stage::Handshake));
    let socket = Watched::new(stream, Arc::clone(&progress), shared.deadlines);
    let tls = tokio::select! {
        tls = shared.acceptor.accept(socket) => match tls {
            Ok(tls) => tls,
            Err(err) => {
                tracing::debug!(%err, "webhook server: TLS handshake failed");
                return;
            }
        },
        _ = stopping(&mut stop) => return,
    };
    progress.set(Stage::Head);
    let service = {
        let (shared, progress) = (Arc::clone(&shared), Arc::clone(&progress));
        hyper::service::service_fn(move |req| {
            let (shared, progress) = (Arc::clone(&shared), Arc::clone(&progress));
            async move {
                progress.set(Stage::Body);
                let response = shared.requests.answer(req, &progress).await;
                progress.set(Stage::Idle);
                Ok::<_, Infallible>(response)
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    // Deadlines are the socket's (`Watched`); hyper's own header timer would also run
    // between requests, where the idle deadline applies.
    http.header_read_timeout(None).max_buf_size(MAX_HEAD);
    let conn = http.serve_connection(TokioIo::new(tls), service);
    let mut conn = std::pin::pin!(conn);
    let grace = tokio::select! {
        _ = conn.as_mut() => return,
        grace = stopping(&mut stop) => grace,
    };
    // Stopping. A request still arriving is closed now: the client is slow or the review
    // would not be answered in time anyway. A review being answered, or its answer being
    // written, gets until the grace deadline; an idle connection closes at once.
    if matches!(progress.stage(), Stage::Head | Stage::Body) {
        return;
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout_at(grace, conn).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const SHORT: Deadlines = Deadlines {
        handshake: Duration::from_millis(200),
        head: Duration::from_millis(200),
        idle: Duration::from_millis(200),
    };

    #[tokio::test]
    async fn a_stalled_stage_times_out_and_a_busy_one_does_not() {
        let (client, server) = tokio::io::duplex(64);
        let progress = Arc::new(Progress::new(Stage::Head));
        let mut watched = Watched::new(server, Arc::clone(&progress), SHORT);
        let mut byte = [0u8; 1];
        let err = watched.read(&mut byte).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);

        // No deadline while the handler works: the read waits for the client.
        progress.set(Stage::Handling);
        let mut client = client;
        let read = tokio::spawn(async move {
            let n = watched.read(&mut byte).await;
            (n.map(|_| byte[0]), watched)
        });
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(
            !read.is_finished(),
            "the handling stage has no socket deadline"
        );
        client.write_all(b"x").await.unwrap();
        let (got, _) = read.await.unwrap();
        assert_eq!(got.unwrap(), b'x');
    }

    #[tokio::test]
    async fn the_first_byte_on_an_idle_connection_starts_the_head() {
        let (mut client, server) = tokio::io::duplex(64);
        let progress = Arc::new(Progress::new(Stage::Idle));
        let mut watched = Watched::new(server, Arc::clone(&progress), SHORT);
        client.write_all(b"G").await.unwrap();
        let mut byte = [0u8; 1];
        assert_eq!(watched.read(&mut byte).await.unwrap(), 1);
        assert_eq!(progress.stage(), Stage::Head);
    }
}
