//! One request to the webhook server: its route, method and media type checked, its
//! body read within the size, time and memory bounds, and the review answered or refused.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::{Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Incoming};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::conn::{Progress, Stage};
use super::{Handler, Refusal, clip};

/// What a path answers.
#[derive(Clone)]
pub(crate) enum Route {
    /// AdmissionReviews, by a defaulter or a validator.
    Admission(Arc<dyn Handler>),
    /// ConversionReviews of one kind.
    Conversion(Arc<super::conversion::Conversion>),
}

/// The routes and the bounds of every request of one server.
pub(crate) struct Requests {
    pub(crate) routes: HashMap<String, Route>,
    pub(crate) max_body: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) timeout: Duration,
    /// Bytes of request bodies held at once, over all connections: each body takes its
    /// bytes as they arrive and gives them back once its review is answered.
    pub(crate) budget: Arc<Semaphore>,
    pub(crate) budget_bytes: usize,
}

fn text(status: StatusCode, body: impl Into<String>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.into())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// A refusal that closes the connection after it: the rest of the body is not read.
fn closing(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// Whether `Content-Type` names JSON (`application/json`, parameters such as `charset`
/// allowed); otherwise what it says, for the refusal.
fn json_media_type(headers: &http::HeaderMap) -> Result<(), String> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err("no Content-Type".to_owned());
    };
    let value = String::from_utf8_lossy(value.as_bytes());
    let media = value.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(format!("Content-Type `{}`", clip(&value)))
    }
}

/// The fewest bytes per JSON value a body of [`Requests::max_body`] may average: what bounds
/// the number of values (262,144 in 8 MiB), and so the memory a review decodes into.
/// Kubernetes objects average 20 to 100 bytes a value.
pub(crate) const BYTES_PER_VALUE: usize = 32;

/// Whether `json` holds more than `limit` values, counted as its commas and opening brackets
/// outside strings: one per element or member after the first, and one per array or object.
fn more_values_than(json: &[u8], limit: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Why a body was not read.
enum Unread {
    TooLarge,
    /// The client did not send it in time.
    Slow,
    /// The memory for bodies stayed taken by other requests.
    Busy,
    Broken(String),
}

impl Requests {
    /// The response to one request; `progress` learns when the body is read.
    pub(crate) async fn answer(
        &self,
        req: http::Request<Incoming>,
        progress: &Progress,
    ) -> Response<Full<Bytes>> {
        let started = Instant::now();
        let path = req.uri().path();
        if path == "/healthz" && req.method() == Method::GET {
            return text(StatusCode::OK, "ok");
        }
        // Refused before its body is read: the connection closes after the answer, so a
        // body still arriving is not waited for.
        let unread = !req.body().is_end_stream();
        let refuse = |status: StatusCode, message: String| {
            let response = text(status, message);
            if unread { closing(response) } else { response }
        };
        let Some(route) = self.routes.get(path) else {
            return refuse(
                StatusCode::NOT_FOUND,
                format!("no webhook at {}", clip(path)),
            );
        };
        if req.method() != Method::POST {
            return refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                "webhooks take POST".to_owned(),
            );
        }
        if let Err(got) = json_media_type(req.headers()) {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("webhooks take Content-Type: application/json, not {got}"),
            );
        }
        let too_large = || format!("the review is over {} bytes", self.max_body);
        let declared = req.body().size_hint().exact();
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return refuse(StatusCode::PAYLOAD_TOO_LARGE, too_large());
        }
        let waiting_for_memory = AtomicBool::new(false);
        let read = tokio::time::timeout_at(
            started + self.body_timeout,
            self.read_body(req.into_body(), &waiting_for_memory),
        )
        .await
        .unwrap_or_else(|_| {
            Err(if waiting_for_memory.load(Ordering::Relaxed) {
                Unread::Busy
            } else {
                Unread::Slow
            })
        });
        let (body, _held) = match read {
            Ok(read) => read,
            Err(unread) => {
                let (status, message) = match unread {
                    Unread::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, too_large()),
                    Unread::Slow => (
                        StatusCode::REQUEST_TIMEOUT,
                        format!("the body did not arrive within {:?}", self.body_timeout),
                    ),
                    Unread::Busy => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "the server holds {} bytes of reviews already; try again",
                            self.budget_bytes
                        ),
                    ),
                    Unread::Broken(why) => (StatusCode::BAD_REQUEST, why),
                };
                return closing(text(status, message));
            }
        };
        // Decoded, each value is a node of at least 32 bytes, and a typed defaulter holds a
        // few renderings of its object: bodies of tiny values would cost far more than their
        // size, so their number is bounded too.
        let max_values = self.max_body / BYTES_PER_VALUE;
        if more_values_than(&body, max_values) {
            return text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the review holds more than {max_values} JSON values"),
            );
        }
        progress.set(Stage::Handling);
        let answered = match route {
            Route::Admission(handler) => {
                tokio::time::timeout(self.timeout, super::review(handler, &body)).await
            }
            Route::Conversion(conversion) => Ok(conversion.answer(&body)),
        };
        match answered {
            Ok(Ok(review)) => json(review),
            Ok(Err(Refusal { status, message })) => text(status, message),
            Err(_) => text(
                StatusCode::GATEWAY_TIMEOUT,
                format!("the webhook took longer than {:?}", self.timeout),
            ),
        }
    }

    /// The whole body, and the share of the memory budget it holds. Each chunk waits for its
    /// bytes of the budget, so a slow client holds only what it sent.
    async fn read_body(
        &self,
        mut body: Incoming,
        waiting_for_memory: &AtomicBool,
    ) -> Result<(Vec<u8>, Option<OwnedSemaphorePermit>), Unread> {
        let mut chunks: Vec<Bytes> = Vec::new();
        let mut len = 0usize;
        let mut held: Option<OwnedSemaphorePermit> = None;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Unread::Broken(format!("reading the body: {e}")))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            len += data.len();
            if len > self.max_body {
                return Err(Unread::TooLarge);
            }
            let take = u32::try_from(data.len().min(self.budget_bytes)).unwrap_or(u32::MAX);
            waiting_for_memory.store(true, Ordering::Relaxed);
            let permit = Arc::clone(&self.budget)
                .acquire_many_owned(take)
                .await
                .map_err(|_| Unread::Busy)?;
            waiting_for_memory.store(false, Ordering::Relaxed);
            match &mut held {
                Some(held) => held.merge(permit),
                None => held = Some(permit),
            }
            chunks.push(data);
        }
        // One buffer of the exact size: the JSON readers need the body in one piece.
        let mut whole = Vec::with_capacity(len);
        for chunk in chunks {
            whole.extend_from_slice(&chunk);
        }
        Ok((whole, held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        assert!(!more_values_than(br#"{"a":[1,2,3]}"#, 4));
        assert!(more_values_than(br#"{"a":[1,2,3],"b":{}}"#, 4));
        // Commas and brackets in strings, escaped quotes included, are not values.
        assert!(!more_values_than(br#"{"a":"[,{\",,,"}"#, 1));
    }

    #[test]
    fn json_with_or_without_parameters_is_json() {
        let headers = |value: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(header::CONTENT_TYPE, value.parse().unwrap());
            h
        };
        assert!(json_media_type(&headers("application/json")).is_ok());
        assert!(json_media_type(&headers("Application/JSON; charset=utf-8")).is_ok());
        assert_eq!(
            json_media_type(&headers("application/yaml")).unwrap_err(),
            "Content-Type `application/yaml`"
        );
        assert_eq!(
            json_media_type(&http::HeaderMap::new()).unwrap_err(),
            "no Content-Type"
        );
    }
}
