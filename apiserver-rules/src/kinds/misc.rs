//! Leases and `events.k8s.io` Events: the few numbers and fields they insist on.

use serde_json::{Value, json};

use crate::field::FieldError;

pub(crate) fn lease(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    if let Some(d) = spec.get("leaseDurationSeconds").and_then(Value::as_i64)
        && d <= 0
    {
        errors.push(FieldError::invalid(
            "spec.leaseDurationSeconds",
            &json!(d),
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.get("leaseTransitions").and_then(Value::as_i64)
        && t < 0
    {
        errors.push(FieldError::invalid(
            "spec.leaseTransitions",
            &json!(t),
            "must be greater than or equal to 0",
        ));
    }
}

pub(crate) fn event(obj: &Value, errors: &mut Vec<FieldError>) {
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let regarding = obj
        .pointer("/regarding/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mismatch = if regarding.is_empty() {
        !matches!(namespace, "" | "default")
    } else {
        regarding != namespace
    };
    if mismatch {
        errors.push(FieldError::invalid_str(
            "involvedObject.namespace",
            regarding,
            "does not match event.namespace",
        ));
    }
    if obj.get("eventTime").is_none_or(Value::is_null) {
        errors.push(FieldError::required("eventTime", ""));
    }
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if !matches!(ty, "Normal" | "Warning") {
        errors.push(FieldError::invalid_str(
            "type",
            "",
            format!("has invalid value: {ty}"),
        ));
    }
}
