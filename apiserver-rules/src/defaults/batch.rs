//! The batch group's defaults (`pkg/apis/batch/v1/defaults.go`): Jobs and CronJobs. A
//! CronJob's job template gets the pod-spec defaults but not `SetDefaults_Job`.

use serde_json::{Value, json};

use super::{at, core, items, object, or_empty, or_nil};

/// `SetObjectDefaults_Job` (with the `JobPodReplacementPolicy` gate on, as in 1.36).
pub fn job(obj: &mut Value) {
    let spec = object(obj, "spec");
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec["completions"] = json!(1);
        spec["parallelism"] = json!(1);
    }
    or_nil(spec, "parallelism", json!(1));
    let per_index = spec
        .get("backoffLimitPerIndex")
        .is_some_and(|b| !b.is_null());
    or_nil(
        spec,
        "backoffLimit",
        json!(if per_index { i32::MAX } else { 6 }),
    );
    or_nil(spec, "completionMode", json!("NonIndexed"));
    or_nil(spec, "suspend", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|p| !p.is_null());
    or_nil(
        spec,
        "podReplacementPolicy",
        json!(if failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    or_nil(spec, "manualSelector", json!(false));
    pod_failure_policy(spec);
    // The Job's labels are its template's when it has none.
    let template_labels = spec
        .pointer("/template/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    if let Some(labels) = template_labels {
        let meta = object(obj, "metadata");
        if meta
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
        {
            meta["labels"] = labels;
        }
    }
    core::template(obj, "/spec/template");
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern` of each rule.
fn pod_failure_policy(spec: &mut Value) {
    if let Some(policy) = at(spec, "/podFailurePolicy") {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                or_empty(pattern, "status", json!("True"));
            }
        }
    }
}

/// `SetObjectDefaults_CronJob`.
pub fn cron_job(obj: &mut Value) {
    let spec = object(obj, "spec");
    or_empty(spec, "concurrencyPolicy", json!("Allow"));
    or_nil(spec, "suspend", json!(false));
    or_nil(spec, "successfulJobsHistoryLimit", json!(3));
    or_nil(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job_spec) = at(spec, "/jobTemplate/spec") {
        pod_failure_policy(job_spec);
    }
    core::template(obj, "/spec/jobTemplate/spec/template");
}
