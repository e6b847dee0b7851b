//! Calling the webhooks: the `AdmissionReview` each one is sent (in the version it asked
//! for), its answer checked as kube-apiserver checks it, refusals and failures in the real
//! server's words, mutating webhooks' JSON patches applied (and, with
//! `reinvocationPolicy: IfNeeded`, called again).

use serde_json::{Value, json};

use super::matching::{Attributes, Hook};
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::rules::json::strings;

/// The AdmissionReview sent for a request.
async fn review(
    uid: &str,
    a: &Attributes<'_>,
    hook: &Hook,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Value, ApiError> {
    let gvk =
        |rt: &ResourceType| json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let gvr = |rt: &ResourceType| json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
    // In the version the webhook asked for; the request's own stays in `request*`.
    let seen = hook.version.as_deref().unwrap_or(a.rt);
    let converted = async |o: Option<&Value>| match o {
        Some(o) => crate::conversion::webhook::into_version(a.shared, seen, o)
            .await
            .map(Some),
        None => Ok(None),
    };
    let (object, old) = (converted(object).await?, converted(old).await?);
    let (object, old) = (object.as_ref(), old.as_ref());
    let mut request = json!({
        "uid": uid,
        "kind": gvk(seen),
        "resource": gvr(seen),
        "requestKind": gvk(a.rt),
        "requestResource": gvr(a.rt),
        "name": a.name,
        "operation": a.operation,
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": a.dry_run,
    });
    if let Some(ns) = a.namespace {
        request["namespace"] = json!(ns);
    }
    if let Some(sub) = a.subresource {
        request["subResource"] = json!(sub);
        request["requestSubResource"] = json!(sub);
    }
    Ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}))
}

/// Calls one webhook: its response, `None` when it failed and `failurePolicy: Ignore` skips
/// it, or the error the request fails with.
async fn call(
    hook: &Hook,
    review: &Value,
    uid: &str,
    mutating: bool,
) -> Result<Option<Value>, ApiError> {
    let failed = |why: String| {
        let message = format!("failed calling webhook \"{}\": {why}", hook.name);
        let mut err = ApiError::internal(format!("Internal error occurred: {message}"));
        err.details = Some(json!({"causes": [{"message": message}]}));
        err
    };
    let answer =
        match tokio::time::timeout(hook.timeout, hook.endpoint.post(hook.timeout, review)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(why)) => Err(format!(
                "failed to call webhook: Post \"{}?timeout={}s\": {why}",
                hook.endpoint.url,
                hook.timeout.as_secs()
            )),
            Err(_) => Err(format!(
                "failed to call webhook: Post \"{}?timeout={}s\": context deadline exceeded",
                hook.endpoint.url,
                hook.timeout.as_secs()
            )),
        };
    let response = answer.and_then(|a| match a.get("response").filter(|r| r.is_object()) {
        None => Err("received invalid webhook response: response is nil".to_owned()),
        Some(r) if r["uid"].as_str() != Some(uid) => Err(format!(
            "received invalid webhook response: expected response.uid=\"{uid}\", got \"{}\"",
            r["uid"].as_str().unwrap_or("")
        )),
        Some(r) if !mutating && r.get("patch").is_some_and(|p| !p.is_null()) => Err(
            "received invalid webhook response: validating webhook may not return response.patch"
                .to_owned(),
        ),
        Some(r) => Ok(r.clone()),
    });
    match response {
        Ok(r) => Ok(Some(r)),
        Err(_) if !hook.fail => Ok(None),
        Err(why) => Err(failed(why)),
    }
}

/// The error of a refusal, as kube-apiserver words it.
fn denied(hook: &Hook, response: &Value) -> ApiError {
    let status = response.get("status").cloned().unwrap_or(json!({}));
    let code = status["code"].as_u64().unwrap_or(0).max(400);
    let reason = status["reason"].as_str().unwrap_or("");
    let message = status["message"].as_str().unwrap_or("");
    let denied_by = format!("admission webhook \"{}\" denied the request", hook.name);
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let mut err = ApiError::custom(u16::try_from(code).unwrap_or(400), reason, &message);
    err.details = status.get("details").cloned();
    err
}

fn warnings_of(response: &Value, into: &mut Vec<String>) {
    into.extend(
        strings(response.get("warnings"))
            .into_iter()
            .map(str::to_owned),
    );
}

/// Calls one mutating webhook and applies its patch; whether it changed `object`.
async fn mutate_once(
    hook: &Hook,
    a: &Attributes<'_>,
    uid: &str,
    object: &mut Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<bool, ApiError> {
    let review = review(uid, a, hook, Some(object), old).await?;
    let Some(response) = call(hook, &review, uid, true).await? else {
        return Ok(false);
    };
    warnings_of(&response, warnings);
    if response["allowed"].as_bool() != Some(true) {
        return Err(denied(hook, &response));
    }
    let Some(patch) = response.get("patch").filter(|p| !p.is_null()) else {
        return Ok(false);
    };
    // Go decodes a []byte from base64 text or from an array of numbers (what kube-rs'
    // AdmissionResponse writes); both are accepted.
    let bytes = match patch {
        Value::String(text) => apiserver_rules::base64::base64_decode(text).ok(),
        Value::Array(items) => items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect(),
        _ => None,
    };
    let ops = bytes.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let Some(ops) = ops else {
        return Err(ApiError::internal(format!(
            "Internal error occurred: admission webhook \"{}\" returned a patch that is not JSON",
            hook.name
        )));
    };
    let before = object.clone();
    // The patch is against the object in the webhook's version; applied there, and the
    // result converted back.
    if let Some(version) = &hook.version {
        *object = crate::conversion::webhook::into_version(a.shared, version, object).await?;
    }
    let applied = crate::store::patch::json_patch(object, &ops);
    if hook.version.is_some() {
        *object = crate::conversion::webhook::into_version(a.shared, a.rt, object).await?;
    }
    applied.map_err(|e| {
        ApiError::internal(format!(
            "Internal error occurred: admission webhook \"{}\" returned a patch that does not apply: {e}",
            hook.name
        ))
    })?;
    Ok(*object != before)
}

/// Runs the mutating webhooks on `object`; whether any changed it. As kube-apiserver
/// does, a webhook with `reinvocationPolicy: IfNeeded` is called once more when a webhook
/// after it changed the object it left.
pub(crate) async fn mutate(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    object: &mut Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<bool, ApiError> {
    let mut changed = false;
    // The object as each webhook left it.
    let mut left: Vec<Value> = Vec::with_capacity(hooks.len());
    for hook in hooks {
        changed |= mutate_once(hook, a, uid, object, old, warnings).await?;
        left.push(object.clone());
    }
    for (hook, left) in hooks.iter().zip(&left) {
        if hook.reinvoke && *left != *object {
            changed |= mutate_once(hook, a, uid, object, old, warnings).await?;
        }
    }
    Ok(changed)
}

/// Mutating webhooks on a delete: they may refuse it, but a patch is an error (kube-apiserver:
/// the operation does not support modifying the object).
pub(crate) async fn refuse_only(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    for hook in hooks {
        let review = review(uid, a, hook, None, old).await?;
        let Some(response) = call(hook, &review, uid, true).await? else {
            continue;
        };
        warnings_of(&response, warnings);
        if response["allowed"].as_bool() != Some(true) {
            return Err(denied(hook, &response));
        }
        let patched = match response.get("patch") {
            Some(Value::String(p)) => !p.is_empty(),
            Some(Value::Array(p)) => !p.is_empty(),
            _ => false,
        };
        if patched {
            return Err(ApiError::internal(format!(
                "Internal error occurred: admission webhook \"{}\" attempted to modify the object, which is not supported for this operation",
                hook.name
            )));
        }
    }
    Ok(())
}

/// Runs the validating webhooks.
pub(crate) async fn validate(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    for hook in hooks {
        let review = review(uid, a, hook, object, old).await?;
        let Some(response) = call(hook, &review, uid, false).await? else {
            continue;
        };
        warnings_of(&response, warnings);
        if response["allowed"].as_bool() != Some(true) {
            return Err(denied(hook, &response));
        }
    }
    Ok(())
}
