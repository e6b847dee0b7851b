//! `rest_client_requests_total{code,method,host}`: every request a `kube::Client` sends,
//! counted by its answer, as client-go's REST client counts them: a tower layer for kube's
//! `ClientBuilder` (`.with_layer(&metrics.rest_client().layer())`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// `code`, `method`, `host`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    code: String,
    method: String,
    host: String,
}

/// The counter of requests; clone it into as many clients as count.
#[derive(Clone, Debug)]
pub struct RestClientMetrics {
    requests: Family<RequestLabels, Counter>,
}

impl RestClientMetrics {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let requests = Family::default();
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host",
            requests.clone(),
        );
        Self { requests }
    }

    /// The layer that counts what a client sends, labelled with each request's host (none
    /// when its URI is relative, as inside a client that adds the server's address itself:
    /// see [`RestClientMetrics::layer_for`]).
    pub fn layer(&self) -> RestClientLayer {
        RestClientLayer {
            metrics: self.clone(),
            host: None,
        }
    }

    /// The layer for a client of `server`: `host` is its host and port, as client-go
    /// labels it.
    pub fn layer_for(&self, server: &http::Uri) -> RestClientLayer {
        let host = server.authority().map(|a| match a.port() {
            Some(_) => a.as_str().to_owned(),
            None => {
                let port = if server.scheme_str() == Some("http") {
                    80
                } else {
                    443
                };
                format!("{}:{port}", a.host())
            }
        });
        RestClientLayer {
            metrics: self.clone(),
            host,
        }
    }

    fn count(&self, code: &str, method: &http::Method, host: &str) {
        self.requests
            .get_or_create(&RequestLabels {
                code: code.to_owned(),
                method: method.as_str().to_owned(),
                host: host.to_owned(),
            })
            .inc();
    }
}

/// A tower layer counting requests into [`RestClientMetrics`].
#[derive(Clone, Debug)]
pub struct RestClientLayer {
    metrics: RestClientMetrics,
    host: Option<String>,
}

impl<S> tower::Layer<S> for RestClientLayer {
    type Service = RestClientService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RestClientService {
            inner,
            metrics: self.metrics.clone(),
            host: self.host.clone(),
        }
    }
}

/// The service [`RestClientLayer`] wraps a client's stack in.
#[derive(Clone, Debug)]
pub struct RestClientService<S> {
    inner: S,
    metrics: RestClientMetrics,
    host: Option<String>,
}

impl<S, B, R> tower::Service<http::Request<B>> for RestClientService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let method = req.method().clone();
        // client-go labels the server's host and port.
        let host = self
            .host
            .clone()
            .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()))
            .unwrap_or_default();
        let metrics = self.metrics.clone();
        let response = self.inner.call(req);
        Box::pin(async move {
            let result = response.await;
            let code = match &result {
                Ok(r) => r.status().as_u16().to_string(),
                // No answer: client-go's `<error>`.
                Err(_) => "<error>".to_owned(),
            };
            metrics.count(&code, &method, &host);
            result
        })
    }
}
