//! SIGTERM and SIGINT as a shutdown signal, as Kubernetes sends them: the first starts a
//! graceful shutdown, a second one exits at once.

use futures::FutureExt;

use super::Stopping;

/// Completes at the first SIGTERM or SIGINT (Ctrl-C); a second one exits the process at
/// once with status 130. Listening starts when this is called, so call it first thing:
/// a signal that comes during client setup, cache sync or leader election is not missed.
pub fn signals() -> Stopping {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let first = next(&mut term).await;
        tracing::info!(
            signal = first,
            "shutting down gracefully; a second signal exits at once"
        );
        let _ = tx.send(());
        let second = next(&mut term).await;
        tracing::warn!(signal = second, "exiting at once");
        std::process::exit(130);
    });
    async move {
        let _ = rx.await;
    }
    .boxed()
    .shared()
}

async fn next(term: &mut Option<tokio::signal::unix::Signal>) -> &'static str {
    match term {
        Some(term) => tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        },
        None => {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}
