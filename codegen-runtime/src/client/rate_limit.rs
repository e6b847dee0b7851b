//! A client-side rate limit for a [`kube::Client`]: a token bucket (QPS, burst) that every
//! request waits on before it is sent, as client-go's `rest.Config{QPS, Burst}` does.
//!
//! kube-rs sends requests as fast as they come, and so does a client built here without a
//! [`RateLimit`]. client-go limits each clientset to 5 requests a second with bursts of 10
//! unless told otherwise; a controller that should behave like a Go one on a shared cluster
//! (or be compared with one) opts in with [`client`] or [`RateLimit::layer`].
//!
//! The bucket holds `burst` tokens and gains `qps` a second. A request takes one token; when
//! none is left it reserves the next one and waits until it is due, so requests keep their
//! order (golang.org/x/time/rate's `Reserve`, which client-go's limiter waits on). A watch
//! takes one token when it opens, as in client-go.
//!
//! client-go shares one bucket across a clientset whose QPS is set, but when it is left at
//! its default each typed group-version client has its own (QPS 5, burst 10 for Deployments,
//! another for Events, another for Foos): [`RateLimit::per_group_version`] does the same.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};

/// The limit of a client: `qps` requests a second on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    qps: f64,
    burst: u32,
    per_group_version: bool,
}

impl RateLimit {
    /// `qps` requests a second, up to `burst` at once (at least one). A `qps` that is not a
    /// positive number means no limit: [`RateLimit::layer`] then lets every request through.
    pub fn new(qps: f64, burst: u32) -> Self {
        Self {
            qps,
            burst: burst.max(1),
            per_group_version: false,
        }
    }

    /// One bucket of this limit per API group and version (`/api/v1`, `/apis/apps/v1`, ...)
    /// instead of one for the whole client. That is what client-go gives when the QPS is
    /// left unset: its clientset then shares no limiter, and each typed group-version client
    /// gets its own of QPS 5, burst 10; a clientset with an explicit QPS shares one.
    #[must_use]
    pub fn per_group_version(mut self) -> Self {
        self.per_group_version = true;
        self
    }

    /// Whether each API group and version has its own bucket.
    pub fn is_per_group_version(&self) -> bool {
        self.per_group_version
    }

    /// client-go's default for a `rest.Config` that sets neither: QPS 5, burst 10.
    pub fn client_go_default() -> Self {
        Self::new(5.0, 10)
    }

    /// Requests a second.
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// Requests at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Whether this limit lets requests through unlimited (`qps` not positive).
    pub fn is_unlimited(&self) -> bool {
        !(self.qps > 0.0 && self.qps.is_finite())
    }

    /// A tower layer with a new, full bucket of this limit. Services made by one layer (and
    /// its clones) share that bucket, so one layer limits one client however it is cloned.
    /// It ignores [`RateLimit::per_group_version`]; see [`RateLimit::group_version_layer`].
    pub fn layer(&self) -> RateLimitLayer {
        RateLimitLayer {
            bucket: (!self.is_unlimited()).then(|| TokenBucket::new(self.qps, self.burst)),
        }
    }

    /// A tower layer with one bucket of this limit per API group and version, each made full
    /// on the group-version's first request; shared by the layer's services and clones.
    pub fn group_version_layer(&self) -> GroupVersionLayer {
        GroupVersionLayer {
            limit: (!self.is_unlimited()).then_some(*self),
            buckets: Arc::default(),
        }
    }
}

/// A [`kube::Client`] for `config`, its requests limited by `limit` when given (none when
/// `None`, as `kube::Client::try_from` builds it), with one bucket or one per API group and
/// version as `limit` says.
pub fn client(config: kube::Config, limit: Option<RateLimit>) -> Result<kube::Client, kube::Error> {
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(match limit {
        Some(limit) if limit.per_group_version => {
            builder.with_layer(&limit.group_version_layer()).build()
        }
        Some(limit) => builder.with_layer(&limit.layer()).build(),
        None => builder.build(),
    })
}

/// [`client`] whose requests are also counted into `metrics`
/// (`rest_client_requests_total{code,method,host}`, client-go's counter).
pub fn counted_client(
    config: kube::Config,
    limit: Option<RateLimit>,
    metrics: &crate::metrics::Metrics,
) -> Result<kube::Client, kube::Error> {
    let counted = metrics.rest_client().layer_for(&config.cluster_url);
    let builder = kube::client::ClientBuilder::try_from(config)?.with_layer(&counted);
    Ok(match limit {
        Some(limit) if limit.per_group_version => {
            builder.with_layer(&limit.group_version_layer()).build()
        }
        Some(limit) => builder.with_layer(&limit.layer()).build(),
        None => builder.build(),
    })
}

/// A token bucket shared by the services of one [`RateLimitLayer`].
#[derive(Debug, Clone)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Arc<Mutex<Bucket>>,
}

/// Tokens left (negative when requests have reserved tokens not yet due) as of `at`.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket: `burst` tokens, `qps` more a second (`qps` must be positive).
    pub fn new(qps: f64, burst: u32) -> Self {
        Self::new_at(qps, burst, Instant::now())
    }

    fn new_at(qps: f64, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps,
            burst,
            state: Arc::new(Mutex::new(Bucket {
                tokens: burst,
                at: now,
            })),
        }
    }

    /// Takes a token and says how long to wait before using it (zero when one was left).
    pub fn reserve(&self) -> Duration {
        self.reserve_at(Instant::now())
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    fn reserve_at(&self, now: Instant) -> Duration {
        // A poisoned lock still holds a consistent count: every update is one assignment.
        let mut bucket = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst) - 1.0;
        bucket.at = bucket.at.max(now);
        if bucket.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-bucket.tokens / self.qps)
        }
    }
}

/// The tower layer of a [`RateLimit`], for `kube::client::ClientBuilder::with_layer`.
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    bucket: Option<TokenBucket>,
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            bucket: self.bucket.clone(),
            permit: Permit::None,
        }
    }
}

/// A service whose requests each wait for a token of the layer's bucket. The wait happens
/// in `poll_ready`, so behind kube's request buffer requests leave in the order they came.
#[derive(Debug)]
pub struct RateLimited<S> {
    inner: S,
    bucket: Option<TokenBucket>,
    permit: Permit,
}

/// Where the next request stands with the bucket.
#[derive(Debug)]
enum Permit {
    /// No token taken yet.
    None,
    /// A token reserved, due when the sleep ends.
    Waiting(Pin<Box<Sleep>>),
    /// A token taken, for the next `call`.
    Held,
}

impl<S, R> Service<R> for RateLimited<S>
where
    S: Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        if let Some(bucket) = &self.bucket {
            if let Permit::None = self.permit {
                let wait = bucket.reserve();
                self.permit = if wait.is_zero() {
                    Permit::Held
                } else {
                    Permit::Waiting(Box::pin(tokio::time::sleep(wait)))
                };
            }
            if let Permit::Waiting(sleep) = &mut self.permit {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.permit = Permit::Held;
            }
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> S::Future {
        // tower's contract: `call` follows a `poll_ready` that returned ready, which took
        // the token; the next request takes its own.
        self.permit = Permit::None;
        self.inner.call(req)
    }
}

/// The tower layer of a [`RateLimit`] with one bucket per API group and version. Its
/// services wait inside the response future (the request says which bucket), then take
/// their turn on the inner service.
#[derive(Debug, Clone)]
pub struct GroupVersionLayer {
    limit: Option<RateLimit>,
    buckets: Arc<Mutex<HashMap<String, TokenBucket>>>,
}

impl<S> Layer<S> for GroupVersionLayer {
    type Service = GroupVersionLimited<S>;

    fn layer(&self, inner: S) -> GroupVersionLimited<S> {
        GroupVersionLimited {
            inner: Arc::new(tokio::sync::Mutex::new(inner)),
            limit: self.limit,
            buckets: self.buckets.clone(),
        }
    }
}

/// A service whose requests each wait for a token of their API group and version's bucket.
pub struct GroupVersionLimited<S> {
    inner: Arc<tokio::sync::Mutex<S>>,
    limit: Option<RateLimit>,
    buckets: Arc<Mutex<HashMap<String, TokenBucket>>>,
}

impl<S> GroupVersionLimited<S> {
    /// How long a request to `path` waits: a token taken from its group-version's bucket.
    fn reserve(&self, path: &str) -> Duration {
        let Some(limit) = self.limit else {
            return Duration::ZERO;
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        buckets
            .entry(group_version(path).to_owned())
            .or_insert_with(|| TokenBucket::new(limit.qps, limit.burst))
            .reserve()
    }
}

impl<S, B> Service<http::Request<B>> for GroupVersionLimited<S>
where
    S: Service<http::Request<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // Readiness is awaited per request, after its wait, with the inner service locked.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let wait = self.reserve(req.uri().path());
        let inner = self.inner.clone();
        Box::pin(async move {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let sent = {
                let mut inner = inner.lock().await;
                std::future::poll_fn(|cx| inner.poll_ready(cx)).await?;
                inner.call(req)
            };
            sent.await
        })
    }
}

/// The API group and version a request path addresses, as client-go's typed clients divide
/// them: `/api/v1` for the core group, `/apis/<group>/<version>` for the others; the path's
/// first segment for anything else (discovery, `/version`).
fn group_version(path: &str) -> &str {
    let segments = match path.split('/').nth(1) {
        Some("api") => 2,
        Some("apis") => 3,
        _ => 1,
    };
    match path.match_indices('/').nth(segments) {
        Some((end, _)) => &path[..end],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The waits of `n` reservations made at `at`, rounded to milliseconds.
    fn waits(bucket: &TokenBucket, at: Instant, n: usize) -> Vec<u128> {
        (0..n).map(|_| bucket.reserve_at(at).as_millis()).collect()
    }

    #[test]
    fn a_full_bucket_lets_a_burst_through_then_spaces_requests_by_one_over_qps() {
        let t0 = Instant::now();
        let bucket = TokenBucket::new_at(5.0, 10, t0);
        assert_eq!(waits(&bucket, t0, 10), vec![0; 10]);
        // Reservations queue: the 11th is due after 200 ms, the 12th after 400 ms.
        assert_eq!(waits(&bucket, t0, 3), vec![200, 400, 600]);
    }

    #[test]
    fn tokens_come_back_at_qps_and_never_above_burst() {
        let t0 = Instant::now();
        let bucket = TokenBucket::new_at(10.0, 4, t0);
        assert_eq!(waits(&bucket, t0, 4), vec![0; 4]);
        // 250 ms at 10 a second: two and a half tokens, so two requests pass at once.
        let t1 = t0 + ms(250);
        assert_eq!(waits(&bucket, t1, 3), vec![0, 0, 50]);
        // A long idle time refills to the burst, not beyond.
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!(waits(&bucket, t2, 5), vec![0, 0, 0, 0, 100]);
    }

    #[test]
    fn a_reservation_made_earlier_than_the_last_does_not_refill() {
        let t0 = Instant::now();
        let bucket = TokenBucket::new_at(1.0, 1, t0);
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(waits(&bucket, t1, 1), vec![0]);
        // A caller that read the clock before the last reservation gets no time back.
        assert_eq!(waits(&bucket, t0, 1), vec![1000]);
    }

    #[test]
    fn no_positive_qps_means_no_limit() {
        assert!(RateLimit::new(0.0, 10).is_unlimited());
        assert!(RateLimit::new(-1.0, 10).is_unlimited());
        assert!(RateLimit::new(f64::NAN, 10).is_unlimited());
        assert!(!RateLimit::client_go_default().is_unlimited());
        assert!(RateLimit::new(0.0, 10).layer().bucket.is_none());
        assert_eq!(RateLimit::new(1.0, 0).burst(), 1);
    }

    /// Counts the calls it gets; always ready.
    #[derive(Default)]
    struct Counter(usize);

    impl Service<()> for Counter {
        type Response = usize;
        type Error = std::convert::Infallible;
        type Future = std::future::Ready<Result<usize, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, (): ()) -> Self::Future {
            self.0 += 1;
            std::future::ready(Ok(self.0))
        }
    }

    fn poll_ready<S: Service<()>>(service: &mut S) -> bool {
        let waker = futures::task::noop_waker();
        service
            .poll_ready(&mut Context::from_waker(&waker))
            .is_ready()
    }

    #[test]
    fn the_service_is_ready_while_tokens_last_and_waits_after() {
        // A sleep needs a runtime's timer; nothing here waits for it to fire.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        // One token a minute: the second request is far from due.
        let layer = RateLimit::new(1.0 / 60.0, 2).layer();
        let mut service = layer.layer(Counter::default());
        for n in 1..=2 {
            assert!(poll_ready(&mut service));
            assert_eq!(service.call(()).into_inner(), Ok(n));
        }
        assert!(!poll_ready(&mut service));
        // Still waiting on the same reservation, not taking a new token per poll.
        assert!(!poll_ready(&mut service));
        assert_eq!(service.inner.0, 2);
        // A second service of the same layer shares the empty bucket.
        let mut other = layer.layer(Counter::default());
        assert!(!poll_ready(&mut other));
    }

    #[test]
    fn without_a_limit_every_request_passes() {
        let mut service = RateLimit::new(0.0, 1).layer().layer(Counter::default());
        for n in 1..=1000 {
            assert!(poll_ready(&mut service));
            assert_eq!(service.call(()).into_inner(), Ok(n));
        }
        assert_eq!(service.inner.0, 1000);
    }

    #[test]
    fn requests_are_divided_by_group_and_version_as_client_go_divides_typed_clients() {
        for (path, gv) in [
            ("/api/v1/namespaces/a/pods", "/api/v1"),
            ("/api/v1", "/api/v1"),
            ("/apis/apps/v1/namespaces/a/deployments/d", "/apis/apps/v1"),
            (
                "/apis/samplecontroller.k8s.io/v1alpha1/foos",
                "/apis/samplecontroller.k8s.io/v1alpha1",
            ),
            ("/apis/events.k8s.io/v1", "/apis/events.k8s.io/v1"),
            ("/apis", "/apis"),
            ("/version", "/version"),
        ] {
            assert_eq!(group_version(path), gv, "{path}");
        }
    }

    impl Service<http::Request<()>> for Counter {
        type Response = usize;
        type Error = std::convert::Infallible;
        type Future = std::future::Ready<Result<usize, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: http::Request<()>) -> Self::Future {
            self.0 += 1;
            std::future::ready(Ok(self.0))
        }
    }

    /// Whether the response future of a request to `path` completes without waiting.
    fn sent_at_once<S: Service<http::Request<()>>>(service: &mut S, path: &str) -> bool {
        let waker = futures::task::noop_waker();
        let mut future = std::pin::pin!(service.call(http::Request::get(path).body(()).unwrap()));
        future
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
    }

    #[test]
    fn each_group_version_has_its_own_bucket() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let limit = RateLimit::new(1.0 / 60.0, 1).per_group_version();
        assert!(limit.is_per_group_version());
        let mut service = limit.group_version_layer().layer(Counter::default());
        assert!(sent_at_once(
            &mut service,
            "/apis/apps/v1/namespaces/a/deployments"
        ));
        // apps/v1's one token is gone: its next request waits; core/v1's is still there.
        assert!(!sent_at_once(
            &mut service,
            "/apis/apps/v1/namespaces/b/deployments"
        ));
        assert!(sent_at_once(&mut service, "/api/v1/namespaces/a/events"));
        assert!(!sent_at_once(&mut service, "/api/v1/namespaces/a/events"));
        assert_eq!(service.inner.try_lock().unwrap().0, 2);
        // Without a limit nothing waits.
        let mut free = RateLimit::new(0.0, 1)
            .per_group_version()
            .group_version_layer()
            .layer(Counter::default());
        for _ in 0..100 {
            assert!(sent_at_once(&mut free, "/api/v1/pods"));
        }
    }
}
