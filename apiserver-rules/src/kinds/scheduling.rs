//! PodDisruptionBudgets (`policy/v1`) and PriorityClasses (`scheduling.k8s.io/v1`),
//! validated as kube-apiserver 1.36 does: the budget's numbers or percentages, selector
//! and eviction policy; the class's value, reserved names and preemption policy.

use serde_json::{Value, json};

use super::selector::label_selector;
use crate::field::FieldError;

const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// `ValidatePodDisruptionBudgetSpec`.
pub(crate) fn pod_disruption_budget(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let set = |key: &str| spec.get(key).filter(|v| !v.is_null());
    if set("minAvailable").is_some() && set("maxUnavailable").is_some() {
        let mut e = FieldError::invalid(
            "spec",
            &Value::Null,
            "minAvailable and maxUnavailable cannot be both set",
        );
        e.value = go_spec(spec);
        errors.push(e);
    }
    for key in ["minAvailable", "maxUnavailable"] {
        if let Some(v) = set(key) {
            int_or_percent(v, &format!("spec.{key}"), errors);
        }
    }
    if let Some(selector) = set("selector") {
        label_selector(selector, "spec.selector", errors);
    }
    if let Some(policy) = set("unhealthyPodEvictionPolicy")
        && !matches!(policy.as_str(), Some("AlwaysAllow" | "IfHealthyBudget"))
    {
        errors.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            policy,
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
}

/// The spec as Go prints the internal type in an error: its field names, in its order.
fn go_spec(spec: &Value) -> String {
    let fields: Vec<String> = [
        ("MinAvailable", "minAvailable"),
        ("Selector", "selector"),
        ("MaxUnavailable", "maxUnavailable"),
        ("UnhealthyPodEvictionPolicy", "unhealthyPodEvictionPolicy"),
    ]
    .iter()
    .map(|(go, key)| format!("\"{go}\":{}", spec.get(*key).unwrap_or(&Value::Null)))
    .collect();
    format!("{{{}}}", fields.join(","))
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn int_or_percent(v: &Value, at: &str, errors: &mut Vec<FieldError>) {
    match v {
        Value::String(s) => {
            let percent = s
                .strip_suffix('%')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            match percent {
                None => errors.push(FieldError::invalid(at, v, PERCENT_MSG)),
                Some(n) if n.parse::<u64>().unwrap_or(u64::MAX) > 100 => {
                    errors.push(FieldError::invalid(at, v, "must not be greater than 100%"))
                }
                Some(_) => {}
            }
        }
        Value::Number(n) if n.as_i64().unwrap_or(0) < 0 => {
            errors.push(FieldError::invalid(
                at,
                v,
                "must be greater than or equal to 0",
            ));
        }
        _ => {}
    }
}

/// The highest value a priority class not named `system-*` may have.
const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

/// `ValidatePriorityClass`, and on an update `ValidatePriorityClassUpdate`.
pub(crate) fn priority_class(new: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let name = new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let value = new.get("value").and_then(Value::as_i64).unwrap_or(0);
    if name.starts_with("system-") {
        let known = match name {
            "system-node-critical" => Some(2_000_001_000),
            "system-cluster-critical" => Some(2_000_000_000),
            _ => None,
        };
        let global = new.get("globalDefault").and_then(Value::as_bool) == Some(true);
        let problem = match known {
            None => Some(format!("{name} is not a known system priority class")),
            Some(v) if v != value => Some(format!("value of {name} PriorityClass must be {v}")),
            Some(_) if global => Some(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            errors.push(FieldError::forbidden(
                "metadata.name",
                format!("priority class names with 'system-' prefix are reserved for system use only. error: {problem}"),
            ));
        }
    } else if value > HIGHEST_USER_PRIORITY {
        errors.push(FieldError::forbidden(
            "value",
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        ));
    }
    if let Some(policy) = new.get("preemptionPolicy").filter(|p| !p.is_null())
        && !matches!(policy.as_str(), Some("PreemptLowerPriority" | "Never"))
    {
        errors.push(FieldError::not_supported(
            "preemptionPolicy",
            policy,
            &["PreemptLowerPriority", "Never"],
        ));
    }
    if let Some(old) = old {
        if old.get("value") != new.get("value") {
            errors.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        if old.get("preemptionPolicy") != new.get("preemptionPolicy") {
            errors.push(FieldError::invalid(
                "preemptionPolicy",
                new.get("preemptionPolicy").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
}
