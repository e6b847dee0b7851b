//! Services: ports (present, numbered, named when several, protocol), type, and the
//! external name an `ExternalName` service needs.

use serde_json::{Value, json};

use crate::field::FieldError;
use crate::names::dns1123_label;

pub(crate) fn validate(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if ty == "ExternalName" {
        if spec
            .get("externalName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            errors.push(FieldError::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && spec.get("clusterIP").and_then(Value::as_str) != Some("None") {
        errors.push(FieldError::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let p = format!("spec.ports[{i}]");
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if ports.len() > 1 && name.is_empty() {
            errors.push(FieldError::required(format!("{p}.name"), ""));
        } else if !name.is_empty() {
            for msg in dns1123_label(name) {
                errors.push(FieldError::invalid_str(format!("{p}.name"), name, msg));
            }
            if names.contains(&name) {
                errors.push(FieldError::duplicate(format!("{p}.name"), &json!(name)));
            }
            names.push(name);
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errors.push(FieldError::invalid(
                format!("{p}.port"),
                &json!(number),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("TCP");
        if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
            errors.push(FieldError::not_supported(
                format!("{p}.protocol"),
                &json!(protocol),
                &["SCTP", "TCP", "UDP"],
            ));
        }
        // `targetPort` defaults to `port`.
        match port.get("targetPort").unwrap_or(&json!(number)) {
            Value::Number(n) => {
                let t = n.as_i64().unwrap_or(0);
                if !(1..=65535).contains(&t) {
                    errors.push(FieldError::invalid(
                        format!("{p}.targetPort"),
                        &json!(t),
                        "must be between 1 and 65535, inclusive",
                    ));
                }
            }
            Value::String(s) if s.is_empty() => {}
            _ => {}
        }
    }
    if !matches!(
        ty,
        "ClusterIP" | "ExternalName" | "LoadBalancer" | "NodePort"
    ) {
        errors.push(FieldError::not_supported(
            "spec.type",
            &json!(ty),
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
}
