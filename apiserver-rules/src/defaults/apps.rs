//! The apps group's defaults (`pkg/apis/apps/v1/defaults.go`): Deployments, ReplicaSets,
//! StatefulSets and DaemonSets, their pod templates, a StatefulSet's claim templates, and
//! what the conversion to v1 writes (claim templates' `apiVersion`/`kind`, a DaemonSet's
//! template-generation annotation).

use serde_json::{Value, json};

use super::{at, core, items, object, or_empty, or_nil};

/// The annotation the v1 DaemonSet carries its internal template generation in.
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// `SetObjectDefaults_Deployment`.
pub fn deployment(obj: &mut Value) {
    let spec = object(obj, "spec");
    or_nil(spec, "replicas", json!(1));
    let strategy = object(spec, "strategy");
    or_empty(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object(strategy, "rollingUpdate");
        or_nil(rolling, "maxUnavailable", json!("25%"));
        or_nil(rolling, "maxSurge", json!("25%"));
    }
    or_nil(spec, "revisionHistoryLimit", json!(10));
    or_nil(spec, "progressDeadlineSeconds", json!(600));
    core::template(obj, "/spec/template");
}

/// `SetObjectDefaults_ReplicaSet`.
pub fn replica_set(obj: &mut Value) {
    or_nil(object(obj, "spec"), "replicas", json!(1));
    core::template(obj, "/spec/template");
}

/// `SetObjectDefaults_StatefulSet` (the `MaxUnavailableStatefulSet` gate is off in 1.36),
/// and the claim templates' type the v1 conversion writes.
pub fn stateful_set(obj: &mut Value) {
    let spec = object(obj, "spec");
    or_empty(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = object(spec, "updateStrategy");
    if strategy.get("type").is_none_or(|t| t.is_null() || t == "") {
        strategy["type"] = json!("RollingUpdate");
        or_nil(strategy, "rollingUpdate", json!({}));
    }
    if strategy["type"] == "RollingUpdate"
        && let Some(rolling) = at(strategy, "/rollingUpdate")
    {
        or_nil(rolling, "partition", json!(0));
    }
    let retention = object(spec, "persistentVolumeClaimRetentionPolicy");
    or_empty(retention, "whenDeleted", json!("Retain"));
    or_empty(retention, "whenScaled", json!("Retain"));
    or_nil(spec, "replicas", json!(1));
    or_nil(spec, "revisionHistoryLimit", json!(10));
    core::template(obj, "/spec/template");
    for claim in items(object(obj, "spec"), "volumeClaimTemplates") {
        core::persistent_volume_claim(claim);
        claim["apiVersion"] = json!("v1");
        claim["kind"] = json!("PersistentVolumeClaim");
    }
}

/// `SetObjectDefaults_DaemonSet`, and the template-generation annotation the v1
/// conversion always writes (`0` until the strategy sets one).
pub fn daemon_set(obj: &mut Value) {
    let spec = object(obj, "spec");
    let strategy = object(spec, "updateStrategy");
    or_empty(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object(strategy, "rollingUpdate");
        or_nil(rolling, "maxUnavailable", json!(1));
        or_nil(rolling, "maxSurge", json!(0));
    }
    or_nil(spec, "revisionHistoryLimit", json!(10));
    core::template(obj, "/spec/template");
    let annotations = object(object(obj, "metadata"), "annotations");
    or_nil(annotations, TEMPLATE_GENERATION, json!("0"));
}
