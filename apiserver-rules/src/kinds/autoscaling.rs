//! `autoscaling/v2` HorizontalPodAutoscalers, validated after their defaults as
//! kube-apiserver 1.36 does: replica bounds, the scale target, each metric's source and
//! target, and the scaling behavior.

use serde_json::{Value, json};

use super::pod::quantity;
use crate::field::FieldError;
use crate::names::{dns1123_label, path_segment};

const SOURCES: [(&str, &str); 5] = [
    ("Object", "object"),
    ("External", "external"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("ContainerResource", "containerResource"),
];

/// `validateHorizontalPodAutoscalerSpec` (scaling to zero is behind a disabled gate).
pub(crate) fn horizontal_pod_autoscaler(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if let Some(min) = min
        && min < 1
    {
        errors.push(FieldError::invalid(
            "spec.minReplicas",
            &json!(min),
            "must be greater than or equal to 1",
        ));
    }
    if max == 0 {
        errors.push(FieldError::required(
            "spec.maxReplicas",
            "must be set and greater than 0",
        ));
    } else if max < 0 {
        errors.push(FieldError::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to 1",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errors.push(FieldError::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec.get("scaleTargetRef").unwrap_or(&empty);
    object_reference(target, "spec.scaleTargetRef", errors);
    let metrics = spec.get("metrics").and_then(Value::as_array);
    let mut object_or_external = false;
    for (i, metric) in metrics.into_iter().flatten().enumerate() {
        let ty = metric.get("type").and_then(Value::as_str).unwrap_or("");
        object_or_external |= matches!(ty, "Object" | "External");
        metric_spec(metric, &format!("spec.metrics[{i}]"), errors);
    }
    if min == Some(0) && !object_or_external {
        errors.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        for key in ["scaleUp", "scaleDown"] {
            if let Some(rules) = behavior.get(key).filter(|r| !r.is_null()) {
                scaling_rules(rules, &format!("spec.behavior.{key}"), errors);
            }
        }
    }
}

/// `ValidateCrossVersionObjectReference`: kind and name are path segments, the API
/// version names a group.
fn object_reference(reference: &Value, at: &str, errors: &mut Vec<FieldError>) {
    for key in ["kind", "name"] {
        let value = reference.get(key).and_then(Value::as_str).unwrap_or("");
        if value.is_empty() {
            errors.push(FieldError::required(format!("{at}.{key}"), ""));
        }
        for msg in path_segment(value, false) {
            errors.push(FieldError::invalid_str(format!("{at}.{key}"), value, msg));
        }
    }
    let version = reference
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let problem = match version.split('/').collect::<Vec<_>>().as_slice() {
        [group, _] if !group.is_empty() => None,
        [_] | [_, _] => Some("apiVersion must specify API group".to_owned()),
        _ => Some(format!("unexpected GroupVersion string: {version}")),
    };
    if let Some(problem) = problem {
        errors.push(FieldError::invalid_str(
            format!("{at}.apiVersion"),
            version,
            problem,
        ));
    }
}

/// `validateMetricSpec`: a known type, the one source that type names, and that source.
fn metric_spec(metric: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let ty = metric.get("type").and_then(Value::as_str).unwrap_or("");
    let types = [
        "ContainerResource",
        "External",
        "Object",
        "Pods",
        "Resource",
    ];
    if ty.is_empty() {
        errors.push(FieldError::required(
            format!("{at}.type"),
            "must specify a metric source type",
        ));
    }
    if !types.contains(&ty) {
        errors.push(FieldError::not_supported(
            format!("{at}.type"),
            &json!(ty),
            &types,
        ));
    }
    let present: Vec<&str> = SOURCES
        .iter()
        .map(|(_, key)| *key)
        .filter(|key| metric.get(*key).is_some_and(|s| !s.is_null()))
        .collect();
    if let Some(first) = present.first() {
        metric_source(first, &metric[*first], &format!("{at}.{first}"), errors);
    }
    let expected = SOURCES.iter().find(|(t, _)| *t == ty).map(|(_, key)| *key);
    if let Some(key) = expected
        && !present.contains(&key)
    {
        errors.push(FieldError::required(
            format!("{at}.{key}"),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        for key in present.iter().filter(|k| Some(**k) != expected) {
            errors.push(FieldError::forbidden(
                format!("{at}.{key}"),
                "must populate the given metric source only",
            ));
        }
    }
}

fn metric_source(key: &str, source: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let target = source.get("target").unwrap_or(&empty);
    let has = |k: &str| target.get(k).is_some_and(|v| !v.is_null());
    let name = |k: &str| source.get(k).and_then(Value::as_str).unwrap_or("");
    let target_at = format!("{at}.target");
    match key {
        "resource" | "containerResource" => {
            if name("name").is_empty() {
                errors.push(FieldError::required(
                    format!("{at}.name"),
                    "must specify a resource name",
                ));
            }
            if key == "containerResource" {
                let container = name("container");
                if container.is_empty() {
                    let path = format!("{at}.container");
                    errors.push(FieldError::required(path, "must specify a container"));
                }
                for msg in dns1123_label(container)
                    .into_iter()
                    .filter(|_| !container.is_empty())
                {
                    let path = format!("{at}.container");
                    errors.push(FieldError::invalid_str(path, container, msg));
                }
            }
            metric_target(target, &target_at, errors);
            if !has("averageUtilization") && !has("averageValue") {
                errors.push(FieldError::required(
                    format!("{target_at}.averageUtilization"),
                    "must set either a target raw value or a target utilization",
                ));
            }
            if has("averageUtilization") && has("averageValue") {
                errors.push(FieldError::forbidden(
                    format!("{target_at}.averageValue"),
                    "may not set both a target raw value and a target utilization",
                ));
            }
        }
        _ => {
            if key == "object" {
                let described = source.get("describedObject").unwrap_or(&empty);
                object_reference(described, &format!("{at}.describedObject"), errors);
            }
            let metric = source.get("metric").unwrap_or(&empty);
            let metric_name = metric.get("name").and_then(Value::as_str).unwrap_or("");
            if metric_name.is_empty() {
                let path = format!("{at}.metric.name");
                errors.push(FieldError::required(path, "must specify a metric name"));
            }
            for msg in path_segment(metric_name, false) {
                let path = format!("{at}.metric.name");
                errors.push(FieldError::invalid_str(path, metric_name, msg));
            }
            metric_target(target, &target_at, errors);
            value_target(key, &has, &target_at, errors);
        }
    }
}

/// What the `pods`, `object` and `external` sources need of their target's values.
fn value_target(key: &str, has: &dyn Fn(&str) -> bool, at: &str, errors: &mut Vec<FieldError>) {
    let average = format!("{at}.averageValue");
    match key {
        "pods" if !has("averageValue") => errors.push(FieldError::required(
            average,
            "must specify a positive target averageValue",
        )),
        "object" if !has("value") && !has("averageValue") => errors.push(FieldError::required(
            average,
            "must set either a target value or averageValue",
        )),
        "external" if !has("value") && !has("averageValue") => {
            errors.push(FieldError::required(
                average,
                "must set either a target value for metric or a per-pod target",
            ));
        }
        "external" if has("value") && has("averageValue") => {
            errors.push(FieldError::forbidden(
                format!("{at}.value"),
                "may not set both a target value for metric and a per-pod target",
            ));
        }
        _ => {}
    }
}

/// `validateMetricTarget`: a known type, positive values, a utilization above 0.
fn metric_target(target: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let ty = target.get("type").and_then(Value::as_str).unwrap_or("");
    if ty.is_empty() {
        errors.push(FieldError::required(
            format!("{at}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errors.push(FieldError::invalid_str(
            format!("{at}.type"),
            ty,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        if let Some(q) = target.get(key).and_then(Value::as_str)
            && quantity(q).is_none_or(|v| v <= 0.0)
        {
            errors.push(FieldError::invalid_str(
                format!("{at}.{key}"),
                q,
                "must be positive",
            ));
        }
    }
    if let Some(u) = target.get("averageUtilization").and_then(Value::as_i64)
        && u < 1
    {
        errors.push(FieldError::invalid(
            format!("{at}.averageUtilization"),
            &json!(u),
            "must be greater than 0",
        ));
    }
}

/// `validateScalingRules`: the window, the select policy and at least one valid policy.
fn scaling_rules(rules: &Value, at: &str, errors: &mut Vec<FieldError>) {
    if let Some(window) = rules
        .get("stabilizationWindowSeconds")
        .and_then(Value::as_i64)
    {
        let path = format!("{at}.stabilizationWindowSeconds");
        if window < 0 {
            let msg = "must be greater than or equal to zero";
            errors.push(FieldError::invalid(&path, &json!(window), msg));
        }
        if window > 3600 {
            let msg = "must be less than or equal to 3600";
            errors.push(FieldError::invalid(&path, &json!(window), msg));
        }
    }
    if let Some(select) = rules.get("selectPolicy").filter(|s| !s.is_null())
        && !matches!(select.as_str(), Some("Disabled" | "Max" | "Min"))
    {
        let path = format!("{at}.selectPolicy");
        errors.push(FieldError::not_supported(
            path,
            select,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = rules.get("policies").and_then(Value::as_array);
    if policies.is_none_or(Vec::is_empty) {
        let path = format!("{at}.policies");
        errors.push(FieldError::required(
            path,
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.into_iter().flatten().enumerate() {
        let p = format!("{at}.policies[{i}]");
        let ty = policy.get("type").cloned().unwrap_or(json!(""));
        if !matches!(ty.as_str(), Some("Pods" | "Percent")) {
            errors.push(FieldError::not_supported(
                format!("{p}.type"),
                &ty,
                &["Percent", "Pods"],
            ));
        }
        let value = policy.get("value").and_then(Value::as_i64).unwrap_or(0);
        if value <= 0 {
            let msg = "must be greater than zero";
            errors.push(FieldError::invalid(
                format!("{p}.value"),
                &json!(value),
                msg,
            ));
        }
        let period = policy
            .get("periodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let path = format!("{p}.periodSeconds");
        if period <= 0 {
            let msg = "must be greater than zero";
            errors.push(FieldError::invalid(&path, &json!(period), msg));
        }
        if period > 1800 {
            let msg = "must be less than or equal to 1800";
            errors.push(FieldError::invalid(&path, &json!(period), msg));
        }
    }
}
