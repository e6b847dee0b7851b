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

/// A `metav1.Status` error response.
pub fn error(err: &ApiError) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json(code, &err.to_status())
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
    let mut seen: Vec<&String> = Vec::new();
    for w in warnings {
        if seen.contains(&w) {
            continue;
        }
        seen.push(w);
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = http::HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            response.headers_mut().append(header::WARNING, v);
        }
    }
    response
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

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (continue tokens, secret data).
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64; the error is the offset of the first bad byte, as Go reports it.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, usize> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(bytes.len() / 4 * 4);
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (c, chunk) in bytes.chunks(4).enumerate() {
        let mut n = 0u32;
        let mut pad = 0;
        for (i, &b) in chunk.iter().enumerate() {
            let v = match b {
                b'=' if i >= 2 => {
                    pad += 1;
                    0
                }
                _ if pad > 0 => return Err(c * 4 + i),
                _ => match BASE64.iter().position(|&x| x == b) {
                    Some(p) => p as u32,
                    None => return Err(c * 4 + i),
                },
            };
            n = (n << 6) | v;
        }
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - pad]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for text in ["", "a", "ab", "abc", "abcd", "{\"v\":\"meta.k8s.io/v1\"}"] {
            let encoded = base64_encode(text.as_bytes());
            assert_eq!(base64_decode(&encoded).unwrap(), text.as_bytes());
        }
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert_eq!(base64_decode("YW!="), Err(2));
    }
}
