//! What the registry answers for a request that is not a watch.

use bytes::Bytes;
use http::StatusCode;
use serde_json::Value;

/// The status code, the body and the warnings of an answer.
pub(crate) type Answer = (StatusCode, Out, Vec<String>);

/// A response body: built for this request, or JSON the store holds, served as it is.
pub(crate) enum Out {
    /// Built for this request.
    Owned(Value),
    /// Stored JSON.
    Json(Bytes),
}

impl Out {
    /// The body as JSON.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Out::Owned(v) => v,
            Out::Json(json) => serde_json::from_slice(&json).unwrap_or_default(),
        }
    }
}
