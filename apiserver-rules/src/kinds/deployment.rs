//! Deployment (`SetDefaults_Deployment`, `ValidateDeploymentSpec`,
//! `ValidatePodTemplateSpecForReplicaSet`): replicas, the selector and the template's
//! labels, the strategy, the pod template, and the numeric limits, on the defaulted object.

use serde_json::{Value, json};

use super::workloads::{non_negative, selector_and_template};
use crate::field::FieldError;

/// `SetDefaults_Deployment` and the pod-template defaults (see
/// [`crate::defaults::apps::deployment`]).
pub fn default(obj: &mut Value) {
    crate::defaults::apps::deployment(obj);
}

/// `ValidateDeploymentSpec` of a Deployment, defaulted here first as the real server
/// validates the defaulted object.
pub(crate) fn validate(obj: &Value, errors: &mut Vec<FieldError>) {
    let mut obj = obj.clone();
    default(&mut obj);
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    non_negative(spec, "spec", "replicas", errors);
    selector_and_template(spec, "deployment", true, errors);
    strategy(spec.get("strategy").unwrap_or(&empty), errors);
    non_negative(spec, "spec", "minReadySeconds", errors);
    non_negative(spec, "spec", "revisionHistoryLimit", errors);
    if let Some(deadline) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
        non_negative(spec, "spec", "progressDeadlineSeconds", errors);
        let min_ready = spec
            .get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if deadline <= min_ready {
            errors.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                &json!(deadline),
                "must be greater than minReadySeconds",
            ));
        }
    }
}

fn strategy(strategy: &Value, errors: &mut Vec<FieldError>) {
    let ty = strategy.get("type").and_then(Value::as_str).unwrap_or("");
    let ru = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match ty {
        "Recreate" => {
            if ru.is_some() {
                errors.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => {
            let Some(ru) = ru else { return };
            let p = "spec.strategy.rollingUpdate";
            let mut effective = [0i64; 2];
            for (i, k) in ["maxUnavailable", "maxSurge"].into_iter().enumerate() {
                let v = ru.get(k).unwrap_or(&Value::Null);
                match v {
                    Value::String(s) => {
                        let pct = s
                            .strip_suffix('%')
                            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                        match pct {
                            Some(n) => effective[i] = n.parse().unwrap_or(0),
                            None => {
                                errors.push(FieldError::invalid(
                                    format!("{p}.{k}"),
                                    v,
                                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                                ));
                                effective[i] = s.parse().unwrap_or(0);
                            }
                        }
                    }
                    Value::Number(n) => {
                        let n = n.as_i64().unwrap_or(0);
                        if n < 0 {
                            errors.push(FieldError::invalid(
                                format!("{p}.{k}"),
                                v,
                                "must be greater than or equal to 0",
                            ));
                        }
                        effective[i] = n;
                    }
                    _ => {}
                }
            }
            let unavailable = ru.get("maxUnavailable").unwrap_or(&Value::Null);
            if effective == [0, 0] {
                errors.push(FieldError::invalid(
                    format!("{p}.maxUnavailable"),
                    unavailable,
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            if unavailable.as_str().is_some_and(|s| s.ends_with('%')) && effective[0] > 100 {
                errors.push(FieldError::invalid(
                    format!("{p}.maxUnavailable"),
                    unavailable,
                    "must not be greater than 100%",
                ));
            }
        }
        _ => {
            let ru_go = match ru {
                None => "null".to_owned(),
                Some(r) => format!(
                    "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                    r.get("maxUnavailable").unwrap_or(&Value::Null),
                    r.get("maxSurge").unwrap_or(&Value::Null)
                ),
            };
            let mut e = FieldError::not_supported(
                "spec.strategy",
                &Value::Null,
                &["Recreate", "RollingUpdate"],
            );
            e.value = format!("{{\"Type\":{},\"RollingUpdate\":{ru_go}}}", json!(ty));
            errors.push(e);
        }
    }
}
