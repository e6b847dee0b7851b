//! Response bodies: whole JSON documents, or a stream of watch events.

use std::convert::Infallible;

use bytes::Bytes;
use futures::Stream;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use serde_json::Value;

use crate::error::ApiError;

/// The body type of every response.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// A JSON response.
pub fn json(code: StatusCode, value: &Value) -> Response<ResponseBody> {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(bytes)).boxed_unsync())
        .expect("static response parts are valid")
}

/// A JSON response of bytes already encoded.
pub fn json_bytes(code: StatusCode, bytes: Bytes) -> Response<ResponseBody> {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(bytes).boxed_unsync())
        .expect("static response parts are valid")
}

/// A `metav1.Status` error response.
pub fn error(err: &ApiError) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json(code, &err.to_status());
    add_warnings(&mut response, &err.warnings);
    response
}

/// An OpenAPI document, cacheable for as long as its hash names it.
pub fn openapi(doc: &Value, hash: &str) -> Response<ResponseBody> {
    let mut response = json(StatusCode::OK, doc);
    let headers = response.headers_mut();
    if let Ok(v) = http::HeaderValue::from_str(&format!("\"{hash}\"")) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("public, immutable"),
    );
    response
}

/// A plain-text response (health endpoints).
pub fn text(code: StatusCode, text: &'static str) -> Response<ResponseBody> {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Full::new(Bytes::from_static(text.as_bytes())).boxed_unsync())
        .expect("static response parts are valid")
}

/// A streamed response of newline-delimited watch events.
pub fn stream(events: impl Stream<Item = Bytes> + Send + 'static) -> Response<ResponseBody> {
    use futures::StreamExt;
    let frames = events.map(|b| Ok::<_, Infallible>(http_body::Frame::data(b)));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::TRANSFER_ENCODING, "chunked")
        .body(BodyExt::boxed_unsync(StreamBody::new(frames)))
        .expect("static response parts are valid")
}

/// A JSON response with one `Warning: 299 - "..."` header per warning.
pub fn json_with_warnings(
    code: StatusCode,
    value: &Value,
    warnings: &[String],
) -> Response<ResponseBody> {
    let mut response = json(code, value);
    add_warnings(&mut response, warnings);
    response
}

/// Appends one `Warning: 299 - "..."` header per warning not already on the response, as
/// the real server's warning recorder does.
pub fn add_warnings(response: &mut Response<ResponseBody>, warnings: &[String]) {
    for w in warnings {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        let Ok(v) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) else {
            continue;
        };
        if !response
            .headers()
            .get_all(header::WARNING)
            .iter()
            .any(|h| *h == v)
        {
            response.headers_mut().append(header::WARNING, v);
        }
    }
}

/// Puts `warnings` before the warnings a response already has: those recorded when the
/// request was routed come first on the real server.
pub fn prepend_warnings(response: &mut Response<ResponseBody>, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let later: Vec<http::HeaderValue> = response
        .headers_mut()
        .get_all(header::WARNING)
        .iter()
        .cloned()
        .collect();
    response.headers_mut().remove(header::WARNING);
    add_warnings(response, warnings);
    for v in later {
        if !response
            .headers()
            .get_all(header::WARNING)
            .iter()
            .any(|h| *h == v)
        {
            response.headers_mut().append(header::WARNING, v);
        }
    }
}

/// An error whose `Accept` could not be met: indented JSON, as the real server writes it.
pub fn error_indented(err: &ApiError) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = serde_json::to_vec_pretty(&err.to_status()).unwrap_or_default();
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(bytes)).boxed_unsync())
        .expect("static response parts are valid")
}
