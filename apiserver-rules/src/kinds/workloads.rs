//! ReplicaSets, StatefulSets, DaemonSets, Jobs and Pods: their selectors, pod templates and
//! the numbers and policies each adds, validated after the template's defaults, with the
//! messages kube-apiserver 1.36 gives.

use serde_json::{Value, json};

use super::pod;
use crate::field::FieldError;

/// `<p>.<key>: Invalid value: -1: must be greater than or equal to 0`.
pub(crate) fn non_negative(spec: &Value, p: &str, key: &str, errors: &mut Vec<FieldError>) {
    if let Some(n) = spec.get(key).and_then(Value::as_i64)
        && n < 0
    {
        errors.push(FieldError::invalid(
            format!("{p}.{key}"),
            &json!(n),
            "must be greater than or equal to 0",
        ));
    }
}

/// A copy of `obj` with its pod template's defaults (`restart` false: a Job's restart
/// policy is not defaulted).
fn defaulted(obj: &Value, restart: bool) -> Value {
    let mut obj = obj.clone();
    if let Some(spec) = obj.pointer_mut("/spec/template/spec") {
        let policy = spec.get("restartPolicy").cloned();
        pod::default_spec(spec);
        if !restart {
            match policy {
                Some(p) => spec["restartPolicy"] = p,
                None => {
                    if let Some(m) = spec.as_object_mut() {
                        m.remove("restartPolicy");
                    }
                }
            }
        }
    }
    obj
}

/// Selector and pod template of a controller of pods (`kind` names the empty-selector
/// error): the selector is required (unless `required` is false), not empty, valid, and
/// matches the template's labels; then the template, whose pods always restart. An invalid
/// selector keeps the template from being checked, as on the real server.
pub(crate) fn selector_and_template(
    spec: &Value,
    kind: &str,
    required: bool,
    errors: &mut Vec<FieldError>,
) {
    let empty = json!({});
    let template = spec.get("template").unwrap_or(&empty);
    let labels = template
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    let matches = match spec.get("selector").filter(|s| !s.is_null()) {
        None => {
            if required {
                errors.push(FieldError::required("spec.selector", ""));
            }
            false
        }
        Some(sel) => {
            let n = |k: &str| {
                sel.get(k)
                    .map(|x| {
                        x.as_object().map_or(0, |m| m.len()) + x.as_array().map_or(0, Vec::len)
                    })
                    .unwrap_or(0)
            };
            let bad_operator = sel
                .get("matchExpressions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|e| {
                    !matches!(
                        e.get("operator").and_then(Value::as_str),
                        Some("In" | "NotIn" | "Exists" | "DoesNotExist")
                    )
                });
            if n("matchLabels") + n("matchExpressions") == 0 {
                errors.push(FieldError::invalid(
                    "spec.selector",
                    sel,
                    format!("empty selector is invalid for {kind}"),
                ));
                true
            } else if bad_operator {
                errors.push(FieldError::invalid(
                    "spec.selector",
                    sel,
                    "invalid label selector",
                ));
                return;
            } else {
                pod::selector_matches(sel, &labels)
            }
        }
    };
    if !matches {
        errors.push(FieldError::invalid(
            "spec.template.metadata.labels",
            &labels,
            "`selector` does not match template `labels`",
        ));
    }
    template_always(spec, errors);
}

/// The pod template of a controller whose pods always restart: its spec, and `Always`.
fn template_always(spec: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let pod_spec = spec.pointer("/template/spec").unwrap_or(&empty);
    pod::validate_spec(pod_spec, "spec.template.spec", errors);
    let restart = pod_spec
        .get("restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if restart != "Always" {
        errors.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            &json!(restart),
            &["Always"],
        ));
    }
}

pub(crate) fn replica_set(obj: &Value, errors: &mut Vec<FieldError>) {
    let obj = defaulted(obj, true);
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    non_negative(&spec, "spec", "replicas", errors);
    non_negative(&spec, "spec", "minReadySeconds", errors);
    selector_and_template(&spec, "deployment", true, errors);
}

pub(crate) fn stateful_set(obj: &Value, errors: &mut Vec<FieldError>) {
    let obj = defaulted(obj, true);
    let mut spec = obj.get("spec").cloned().unwrap_or(json!({}));
    claim_volumes(&mut spec);
    let policy = spec
        .get("podManagementPolicy")
        .and_then(Value::as_str)
        .unwrap_or("OrderedReady");
    if !matches!(policy, "OrderedReady" | "Parallel") {
        errors.push(FieldError::invalid_str(
            "spec.podManagementPolicy",
            policy,
            "must be 'OrderedReady' or 'Parallel'",
        ));
    }
    if let Some(strategy) = spec.get("updateStrategy") {
        let ty = strategy
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("RollingUpdate");
        if !matches!(ty, "RollingUpdate" | "OnDelete") {
            let mut e = FieldError::invalid(
                "spec.updateStrategy",
                &Value::Null,
                "must be 'RollingUpdate' or 'OnDelete'",
            );
            e.value = go_strategy(ty, strategy);
            errors.push(e);
        }
    }
    non_negative(&spec, "spec", "replicas", errors);
    non_negative(&spec, "spec", "minReadySeconds", errors);
    selector_and_template(&spec, "statefulset", true, errors);
}

pub(crate) fn daemon_set(obj: &Value, errors: &mut Vec<FieldError>) {
    let obj = defaulted(obj, true);
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    selector_and_template(&spec, "daemonset", false, errors);
    if let Some(strategy) = spec.get("updateStrategy") {
        let ty = strategy
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("RollingUpdate");
        if !matches!(ty, "RollingUpdate" | "OnDelete") {
            let mut e = FieldError::not_supported(
                "spec.updateStrategy",
                &Value::Null,
                &["RollingUpdate", "OnDelete"],
            );
            e.value = go_strategy(ty, strategy);
            errors.push(e);
        }
    }
    non_negative(&spec, "spec", "minReadySeconds", errors);
}

/// The template a StatefulSet's pods are validated as: each claim template is a volume
/// (replacing a volume of its name), and `hostname`/`subdomain`, which the controller
/// overwrites, are not checked.
fn claim_volumes(spec: &mut Value) {
    let claims: Vec<String> = spec
        .get("volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let Some(pod_spec) = spec
        .pointer_mut("/template/spec")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    pod_spec.remove("hostname");
    pod_spec.remove("subdomain");
    if claims.is_empty() {
        return;
    }
    let mut volumes: Vec<Value> = claims
        .iter()
        .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
        .collect();
    let own = pod_spec.get("volumes").and_then(Value::as_array);
    volumes.extend(
        own.into_iter()
            .flatten()
            .filter(|v| {
                !claims
                    .iter()
                    .any(|c| v.get("name").and_then(Value::as_str) == Some(c))
            })
            .cloned(),
    );
    pod_spec.insert("volumes".into(), Value::Array(volumes));
}

/// An update strategy as Go prints the internal struct: `{"Type":"Bogus","RollingUpdate":null}`.
fn go_strategy(ty: &str, strategy: &Value) -> String {
    let rolling = match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
        Some(r) => r.to_string(),
        None => "null".to_owned(),
    };
    format!("{{\"Type\":{},\"RollingUpdate\":{rolling}}}", json!(ty))
}

pub(crate) fn job(obj: &Value, errors: &mut Vec<FieldError>) {
    let obj = defaulted(obj, false);
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    for k in [
        "parallelism",
        "completions",
        "backoffLimit",
        "activeDeadlineSeconds",
    ] {
        non_negative(&spec, "spec", k, errors);
    }
    let empty = json!({});
    let pod_spec = spec.pointer("/template/spec").unwrap_or(&empty);
    let restart = pod_spec
        .get("restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut checked = pod_spec.clone();
    if restart.is_empty() {
        // The pod-spec check would call it required too; the Job's message says it once.
        checked["restartPolicy"] = json!("Never");
    }
    pod::validate_spec(&checked, "spec.template.spec", errors);
    if !matches!(restart, "OnFailure" | "Never") {
        errors.push(FieldError::required(
            "spec.template.spec.restartPolicy",
            "valid values: \"OnFailure\", \"Never\"",
        ));
    }
}

pub(crate) fn pod(obj: &Value, errors: &mut Vec<FieldError>) {
    let mut spec = obj.get("spec").cloned().unwrap_or(json!({}));
    pod::default_spec(&mut spec);
    pod::default_pod(&mut spec);
    pod::validate_spec(&spec, "spec", errors);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateful_set_mounts_its_claim_templates() {
        let sts = json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "s",
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c",
                "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        let mut errors = Vec::new();
        stateful_set(&sts, &mut errors);
        assert_eq!(errors, []);
        let mut unclaimed = sts.clone();
        unclaimed["spec"]["volumeClaimTemplates"] = json!([]);
        stateful_set(&unclaimed, &mut errors);
        assert_eq!(
            errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["spec.template.spec.containers[0].volumeMounts[0].name"]
        );
    }

    #[test]
    fn init_containers_that_are_not_sidecars_have_no_probes_or_hooks() {
        let pod_spec = |restart: Value| {
            json!({"spec": {"containers": [{"name": "c", "image": "nginx"}],
                "initContainers": [{"name": "i", "image": "busybox", "restartPolicy": restart,
                    "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}}]}})
        };
        let mut errors = Vec::new();
        pod(&pod_spec(Value::Null), &mut errors);
        assert_eq!(
            errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["spec.initContainers[0].lifecycle"]
        );
        errors.clear();
        pod(&pod_spec(json!("Always")), &mut errors);
        assert_eq!(errors, []);
    }
}
