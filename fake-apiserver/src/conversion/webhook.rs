//! Conversion webhooks: a CRD whose `spec.conversion.strategy` is `Webhook` has its objects
//! converted between versions by calling the webhook, as kube-apiserver does, so a kind
//! whose versions differ in shape is tested through `kube::Client` like any other.
//!
//! Serving an object in another version than it is stored in (a read, a list, a watch
//! event, the object a write returns), and storing one written in another version, posts a
//! `ConversionReview` (`apiextensions.k8s.io/v1`) with that one object, as the real
//! server's storage does object by object. The converted object keeps the original's
//! metadata, except the labels and annotations the webhook returns, checked as labels and
//! annotations are when they changed (apiserver-rules' `restore_object_meta`). A webhook
//! that cannot be called, or answers with a failure or a malformed review, fails the
//! request with the real server's 500: `conversion webhook for <group>/<version>,
//! Kind=<kind> failed: <why>`, or `... returned invalid metadata: <why>` and the like (a
//! watch gets it as an `ERROR` event and ends).

use std::time::Duration;

use serde_json::{Value, json};

use super::{Conversions, pending_of, serve};
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::store::Shared;
use crate::webhook_client::Endpoint;

/// How long kube-apiserver waits for a conversion webhook (not configurable).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Converts `objects` of `rt`'s CRD to `desired` through its webhook, one review each, and
/// records them in `done`; the first failure is the request's error.
pub(crate) async fn convert(
    shared: &Shared,
    rt: &ResourceType,
    objects: &[Value],
    desired: &str,
    done: &mut Conversions,
) -> Result<(), ApiError> {
    let Some(webhook) = &rt.conversion else {
        return Ok(());
    };
    let endpoint = Endpoint::of(&webhook["clientConfig"], &shared.config.webhook_services);
    for obj in objects {
        let uid = shared.lock().store.next_uid();
        let from = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let gvk = format!("{from}, Kind={}", rt.kind);
        let converted = call(&endpoint, &uid, obj, desired)
            .await
            .map_err(|why| why.error(&gvk))?;
        done.record(obj, desired, &converted);
    }
    Ok(())
}

/// Why a conversion failed, in the real server's words after `conversion webhook for
/// <gvk>`.
enum Failure {
    /// `failed: <why>`.
    Failed(String),
    /// `returned invalid object: <why>` and the like: the whole tail.
    Returned(String),
}

impl Failure {
    fn error(self, gvk: &str) -> ApiError {
        let message = match self {
            Failure::Failed(why) => format!("conversion webhook for {gvk} failed: {why}"),
            Failure::Returned(tail) => format!("conversion webhook for {gvk} {tail}"),
        };
        ApiError::custom(500, "", &message)
    }
}

/// Go's rest client's words for an answer that is not a 2xx.
fn status_error(code: u16, body: &[u8]) -> String {
    match code {
        400 => "the server rejected our request for an unknown reason".to_owned(),
        401 => "Unauthorized".to_owned(),
        403 => "Forbidden".to_owned(),
        404 => "the server could not find the requested resource".to_owned(),
        500 => format!(
            "an error on the server ({:?}) has prevented the request from succeeding",
            String::from_utf8_lossy(body)
        ),
        503 => "the server is currently unable to handle the request".to_owned(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        code => format!("the server responded with the status code {code} but did not return more information"),
    }
}

/// One review: the converted object, checked as the real server checks it, with the
/// original's metadata except the labels and annotations the webhook returned.
async fn call(
    endpoint: &Endpoint,
    uid: &str,
    obj: &Value,
    desired: &str,
) -> Result<Value, Failure> {
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]},
    });
    let post = |why: &str| {
        Failure::Failed(format!(
            "Post \"{}?timeout={}s\": {why}",
            endpoint.url,
            TIMEOUT.as_secs()
        ))
    };
    let (code, body) =
        match tokio::time::timeout(TIMEOUT, endpoint.exchange(TIMEOUT, &review)).await {
            Err(_) => return Err(post("context deadline exceeded")),
            Ok(Err(why)) => return Err(post(&why)),
            Ok(Ok(answer)) => answer,
        };
    if !(200..300).contains(&code) {
        return Err(Failure::Failed(status_error(code, &body)));
    }
    let answer: Value =
        serde_json::from_slice(&body).map_err(|e| Failure::Failed(e.to_string()))?;
    let gvk = format!(
        "{}, Kind={}",
        answer["apiVersion"].as_str().unwrap_or("/"),
        answer["kind"].as_str().unwrap_or("")
    );
    if gvk != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
        return Err(Failure::Failed(format!(
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {gvk}"
        )));
    }
    let Some(response) = answer.get("response").filter(|r| r.is_object()) else {
        return Err(Failure::Failed("no response provided".to_owned()));
    };
    let got = response["uid"].as_str().unwrap_or("");
    if got != uid {
        return Err(Failure::Failed(format!(
            "expected response.uid={uid:?}, got {got:?}"
        )));
    }
    let status = response
        .pointer("/result/status")
        .and_then(Value::as_str)
        .unwrap_or("");
    if status != "Success" {
        let message = response
            .pointer("/result/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(Failure::Failed(if message.is_empty() {
            format!("response.result.status was '{status}', not 'Success'")
        } else {
            message.to_owned()
        }));
    }
    let converted = response["convertedObjects"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if converted.len() != 1 {
        return Err(Failure::Returned(format!(
            "returned {} objects, expected 1",
            converted.len()
        )));
    }
    check_converted(obj, &converted[0], desired).map_err(Failure::Returned)?;
    let mut converted = converted[0].clone();
    crate::rules::conversion::restore_object_meta(obj.get("metadata"), &mut converted)
        .map_err(|e| Failure::Returned(format!("returned invalid metadata: {e}")))?;
    Ok(converted)
}

/// The real server's checks of a converted object: its version, kind and identity (its
/// metadata's are `restore_object_meta`'s).
fn check_converted(original: &Value, converted: &Value, desired: &str) -> Result<(), String> {
    let text = |o: &Value, p: &str| {
        o.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let got = text(converted, "/apiVersion");
    if got != desired {
        return Err(format!(
            "returned invalid object at index 0: invalid groupVersion (expected {desired}, received {got})"
        ));
    }
    let (want, got) = (text(original, "/kind"), text(converted, "/kind"));
    if want != got {
        return Err(format!(
            "returned invalid object at index 0: invalid kind (expected {want}, received {got})"
        ));
    }
    for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let pointer = format!("/metadata/{field}");
        let (want, got) = (text(original, &pointer), text(converted, &pointer));
        if want != got {
            return Err(format!(
                "returned invalid object: must have the same {what}: {want} != {got}"
            ));
        }
    }
    Ok(())
}

/// `obj` (any version of `rt`'s kind) in `rt`'s version, calling the CRD's conversion
/// webhook when it has one.
pub(crate) async fn into_version(
    shared: &Shared,
    rt: &ResourceType,
    obj: &Value,
) -> Result<Value, ApiError> {
    let mut done = Conversions::default();
    match serve(rt, obj, &done) {
        Err(e) if pending_of(&e).is_some() => {
            convert(
                shared,
                rt,
                std::slice::from_ref(obj),
                &rt.api_version(),
                &mut done,
            )
            .await?;
            serve(rt, obj, &done)
        }
        served => served,
    }
}

/// A watch event line in the watch's version `rt`: its object converted by the webhook when
/// it is stored in another version. A failure is the `ERROR` event that ends the watch.
pub(crate) async fn event_line(
    shared: &Shared,
    rt: &ResourceType,
    line: bytes::Bytes,
) -> Result<bytes::Bytes, bytes::Bytes> {
    if rt.conversion.is_none() {
        return Ok(line);
    }
    let Ok(mut event) = serde_json::from_slice::<Value>(&line) else {
        return Ok(line);
    };
    let stored = event.pointer("/object/apiVersion").and_then(Value::as_str);
    if !stored.is_some_and(|v| rt.converts(v)) {
        return Ok(line);
    }
    let converted = into_version(shared, rt, &event["object"]).await;
    let encode = |event: &Value| {
        let mut bytes = serde_json::to_vec(event).unwrap_or_default();
        bytes.push(b'\n');
        bytes::Bytes::from(bytes)
    };
    match converted {
        Ok(mut object) => {
            // Pruned by the schema of the watch's version, as kube-apiserver's storage codec
            // prunes what the webhook returns.
            if let Some(schema) = &rt.schema {
                apiserver_rules::schema::coerce(schema, &mut object, false);
            }
            event["object"] = object;
            Ok(encode(&event))
        }
        // kube-apiserver's watch of etcd wraps an error that is not a Status as an internal
        // error, with the error as its cause.
        Err(e) => {
            let mut status = ApiError::internal(format!("Internal error occurred: {}", e.message));
            status.details = Some(json!({"causes": [{"message": e.message}]}));
            Err(encode(
                &json!({"type": "ERROR", "object": status.to_status()}),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gizmo(api_version: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": "Gizmo",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                "labels": {"app": "a"}},
            "spec": spec})
    }

    #[test]
    fn converted_objects_are_checked_as_the_real_server_checks_them() {
        let original = gizmo("example.com/v1", json!({}));
        let good = gizmo("example.com/v2", json!({}));
        assert_eq!(check_converted(&original, &good, "example.com/v2"), Ok(()));
        let wrong_version = gizmo("example.com/v1", json!({}));
        assert_eq!(
            check_converted(&original, &wrong_version, "example.com/v2"),
            Err("returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v1)".into())
        );
        let mut renamed = good.clone();
        renamed["metadata"]["name"] = json!("b");
        assert_eq!(
            check_converted(&original, &renamed, "example.com/v2"),
            Err("returned invalid object: must have the same name: a != b".into())
        );
        let mut other_kind = good.clone();
        other_kind["kind"] = json!("Widget");
        assert_eq!(
            check_converted(&original, &other_kind, "example.com/v2"),
            Err("returned invalid object at index 0: invalid kind (expected Gizmo, received Widget)".into())
        );
    }
}
