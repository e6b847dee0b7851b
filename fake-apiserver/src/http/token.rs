//! `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`: a TokenRequest, answered as
//! kube-apiserver answers it: a bearer token of the ServiceAccount (one the HTTP server and
//! the in-process client then authenticate as that ServiceAccount), the audiences asked for
//! or the server's own, and an expiry of `expirationSeconds` (an hour by default, at least
//! ten minutes). The token is an opaque string, not a JWT: nothing outside the fake reads
//! it.

use serde_json::{Value, json};

use super::control::Controls;
use crate::admission::authorization::User;
use crate::error::ApiError;
use crate::meta::now;
use crate::resource::ResourceType;
use crate::rules::field::FieldError;
use crate::store::Shared;

/// The audience of a token when the request names none: the server's
/// `--service-account-issuer` (a kubeadm cluster's).
pub const AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// The shortest and longest lives a token may be asked for.
const MIN_SECONDS: i64 = 600;
const MAX_SECONDS: i64 = 1 << 32;

/// The TokenRequest for ServiceAccount `name` of `namespace`, with its token.
pub(crate) fn create(
    shared: &Shared,
    controls: &Controls,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let account = shared.lock().get(rt, Some(namespace), name)?;
    let request: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not a TokenRequest: {e}")))?
    };
    let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
    let seconds = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(3600);
    let too = |what: &str| {
        ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            vec![FieldError::invalid(
                "spec.expirationSeconds",
                &json!(seconds),
                format!("may not specify a duration {what}"),
            )],
        )
    };
    if seconds < MIN_SECONDS {
        return Err(too("less than 10 minutes"));
    }
    if seconds > MAX_SECONDS {
        return Err(too("larger than 2^32 seconds"));
    }
    let audiences = match spec.get("audiences").and_then(Value::as_array) {
        Some(a) if !a.is_empty() => Value::Array(a.clone()),
        _ => json!([AUDIENCE]),
    };
    let token = controls.mint_token(User::service_account(namespace, name));
    let issued = now();
    let expires = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(seconds))
        .map(|t| {
            jiff::Timestamp::from_second(t.as_second())
                .unwrap_or(t)
                .to_string()
        })
        .unwrap_or_else(|_| issued.clone());
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": account.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
            "creationTimestamp": issued,
        },
        "spec": {
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef").cloned().unwrap_or(Value::Null),
        },
        "status": {"token": token, "expirationTimestamp": expires},
    }))
}
