//! What happens to a built-in object between the field manager and storage: the mutating
//! admission plugins kube-apiserver enables by default (ServiceAccount, Priority,
//! DefaultTolerationSeconds, StorageObjectInUseProtection, TaintNodesByCondition) and the
//! registry strategies' `PrepareForCreate`/`PrepareForUpdate` (`pkg/registry/*/*/strategy.go`)
//! where they change stored fields (status resets, generations, a Job's selector). None of
//! this is owned in `managedFields`.

use serde_json::{Value, json};

use super::apps::TEMPLATE_GENERATION;
use super::{object, or_nil};

/// What the admission plugins of a create need to know besides the object.
#[derive(Debug, Clone, Copy, Default)]
pub struct Admission<'a> {
    /// The ServiceAccount a Pod runs as, when it exists (its `automountServiceAccountToken`
    /// decides whether the token volume is mounted).
    pub service_account: Option<&'a Value>,
    /// Five characters for generated names (the token volume's `kube-api-access-xxxxx`).
    pub suffix: &'a str,
}

/// The strategy's `PrepareForCreate` and the admission plugins of a create.
pub(crate) fn create(api_version: &str, kind: &str, obj: &mut Value, admission: &Admission<'_>) {
    match (api_version, kind) {
        ("v1", "Pod") => {
            service_account(obj, admission);
            priority(obj);
            toleration_seconds(obj);
            object(obj, "metadata")["generation"] = json!(1);
            let qos = qos_class(obj.get("spec").unwrap_or(&Value::Null));
            obj["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        ("v1", "PersistentVolumeClaim") => {
            let finalizers = object(obj, "metadata")
                .as_object_mut()
                .expect("an object")
                .entry("finalizers")
                .or_insert_with(|| json!([]));
            if let Some(list) = finalizers.as_array_mut()
                && !list.iter().any(|f| f == "kubernetes.io/pvc-protection")
            {
                list.push(json!("kubernetes.io/pvc-protection"));
            }
            obj["status"] = json!({});
        }
        ("v1", "Namespace") => {
            let spec = object(obj, "spec");
            let finalizers = object_list(spec, "finalizers");
            if !finalizers.iter().any(|f| f == "kubernetes") {
                finalizers.push(json!("kubernetes"));
            }
            obj["status"] = json!({"phase": "Active"});
        }
        ("batch/v1", "Job") => {
            if obj.pointer("/spec/manualSelector") != Some(&json!(true)) {
                job_selector(obj);
            }
            obj["status"] = json!({});
        }
        ("apps/v1", "DaemonSet") => {
            let annotations = object(object(obj, "metadata"), "annotations");
            let generation = annotations
                .get(TEMPLATE_GENERATION)
                .and_then(Value::as_str)
                .and_then(|g| g.parse::<i64>().ok())
                .unwrap_or(0);
            annotations[TEMPLATE_GENERATION] = json!(generation.max(1).to_string());
            obj["status"] = json!({});
        }
        ("v1", "Node") => {
            // The TaintNodesByCondition admission plugin: a new node is not ready.
            let taints = object_list(object(obj, "spec"), "taints");
            let taint = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
            if !taints
                .iter()
                .any(|t| t["key"] == taint["key"] && t["effect"] == taint["effect"])
            {
                taints.push(taint);
            }
        }
        ("admissionregistration.k8s.io/v1", _) => {
            object(obj, "metadata")["generation"] = json!(1);
        }
        (
            "v1" | "apps/v1" | "batch/v1" | "networking.k8s.io/v1" | "policy/v1" | "autoscaling/v2",
            "Service"
            | "Deployment"
            | "ReplicaSet"
            | "StatefulSet"
            | "CronJob"
            | "Ingress"
            | "PodDisruptionBudget"
            | "HorizontalPodAutoscaler",
        ) => obj["status"] = json!({}),
        _ => {}
    }
}

/// The strategy's `PrepareForUpdate`: what an update keeps of the stored `old`.
pub(crate) fn update(api_version: &str, kind: &str, new: &mut Value, old: &Value) {
    match (api_version, kind) {
        ("v1", "Service") => keep_allocated(new, old),
        ("admissionregistration.k8s.io/v1", _) if new.get("webhooks") != old.get("webhooks") => {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            object(new, "metadata")["generation"] = json!(generation + 1);
        }
        ("apps/v1", "DaemonSet") => {
            let generation = old
                .pointer(&format!("/metadata/annotations/{TEMPLATE_GENERATION}"))
                .and_then(Value::as_str)
                .and_then(|g| g.parse::<i64>().ok())
                .unwrap_or(0);
            let changed = new.pointer("/spec/template") != old.pointer("/spec/template");
            let generation = if changed { generation + 1 } else { generation };
            object(object(new, "metadata"), "annotations")[TEMPLATE_GENERATION] =
                json!(generation.to_string());
        }
        _ => {}
    }
}

/// A list of `obj[key]`, made one when missing.
fn object_list<'a>(obj: &'a mut Value, key: &str) -> &'a mut Vec<Value> {
    if !obj.get(key).is_some_and(Value::is_array) {
        obj[key] = json!([]);
    }
    obj[key].as_array_mut().expect("just made a list")
}

/// The ServiceAccount admission plugin: the `default` account when none is named, and,
/// unless the pod or its account turns it off, the projected token volume mounted in
/// every container.
fn service_account(pod: &mut Value, admission: &Admission<'_>) {
    let spec = object(pod, "spec");
    let account = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_owned();
    spec["serviceAccountName"] = json!(account);
    spec["serviceAccount"] = json!(account);
    let pod_says = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool);
    let account_says = admission
        .service_account
        .and_then(|sa| sa.get("automountServiceAccountToken"))
        .and_then(Value::as_bool);
    if !pod_says.or(account_says).unwrap_or(true) {
        return;
    }
    const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
    let has_mount = |c: &Value| {
        c.get("volumeMounts")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == MOUNT_PATH))
    };
    let containers = ["initContainers", "containers"];
    let all_mounted = containers.iter().all(|list| {
        spec.get(*list)
            .and_then(Value::as_array)
            .is_none_or(|cs| cs.iter().all(has_mount))
    });
    if all_mounted {
        return;
    }
    let volume = format!("kube-api-access-{}", admission.suffix);
    object_list(spec, "volumes").push(json!({
        "name": volume,
        "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]}
    }));
    for list in containers {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if !has_mount(c) && c.is_object() {
                object_list(c, "volumeMounts")
                    .push(json!({"name": volume, "readOnly": true, "mountPath": MOUNT_PATH}));
            }
        }
    }
}

/// The Priority admission plugin, with no PriorityClass marked global default: priority 0.
fn priority(pod: &mut Value) {
    let spec = object(pod, "spec");
    let named = spec
        .get("priorityClassName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if !named {
        or_nil(spec, "priority", json!(0));
        or_nil(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    }
}

/// The DefaultTolerationSeconds admission plugin: pods tolerate not-ready and unreachable
/// nodes for 300 seconds, unless they say otherwise.
fn toleration_seconds(pod: &mut Value) {
    let tolerations = object_list(object(pod, "spec"), "tolerations");
    for taint in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let covered = tolerations.iter().any(|t| {
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            let key = t.get("key").and_then(Value::as_str).unwrap_or("");
            (effect.is_empty() || effect == "NoExecute") && (key.is_empty() || key == taint)
        });
        if !covered {
            tolerations.push(json!({"key": taint, "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// `qos.GetPodQOS`: `Guaranteed` when every container limits CPU and memory and requests
/// equal limits, `BestEffort` when none requests or limits any, else `Burstable`.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    use std::collections::BTreeMap;
    let compute = |name: &str| name == "cpu" || name == "memory";
    let amount = |v: &Value| match v {
        Value::String(s) => crate::kinds::pod::quantity(s),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    let mut requests: BTreeMap<String, f64> = BTreeMap::new();
    let mut limits: BTreeMap<String, f64> = BTreeMap::new();
    let mut guaranteed = true;
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|l| spec.get(l).and_then(Value::as_array))
        .flatten();
    for c in containers {
        let list = |key: &str| {
            c.pointer(&format!("/resources/{key}"))
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter(|(k, _)| compute(k))
                .filter_map(|(k, v)| amount(v).map(|a| (k.clone(), a)))
                .filter(|(_, a)| *a != 0.0)
                .collect::<Vec<_>>()
        };
        for (k, a) in list("requests") {
            *requests.entry(k).or_default() += a;
        }
        let own_limits = list("limits");
        if !(own_limits.iter().any(|(k, _)| k == "cpu")
            && own_limits.iter().any(|(k, _)| k == "memory"))
        {
            guaranteed = false;
        }
        for (k, a) in own_limits {
            *limits.entry(k).or_default() += a;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed
        && requests.len() == limits.len()
        && requests.iter().all(|(k, a)| limits.get(k) == Some(a))
    {
        return "Guaranteed";
    }
    "Burstable"
}

/// The labels and selector of a Job whose selector the server generates: the template is
/// labelled with the Job's name and uid (under both the old and the new keys) and the
/// selector matches the uid.
fn job_selector(job: &mut Value) {
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let uid = job
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let spec = object(job, "spec");
    let labels = object(object(object(spec, "template"), "metadata"), "labels");
    for (key, value) in [
        ("job-name", &name),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("batch.kubernetes.io/controller-uid", &uid),
    ] {
        or_nil(labels, key, json!(value));
    }
    let selector = object(object(spec, "selector"), "matchLabels");
    or_nil(selector, "batch.kubernetes.io/controller-uid", json!(uid));
}

/// The Service REST's `patchAllocatedValues`: an update that leaves out the cluster IPs,
/// node ports or health-check node port keeps the stored ones, where both need them.
fn keep_allocated(new: &mut Value, old: &Value) {
    let ty = |s: &Value| {
        s.pointer("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP")
            .to_owned()
    };
    let (new_ty, old_ty) = (ty(new), ty(old));
    let needs_ip = |t: &str| t != "ExternalName";
    let needs_node_port = |t: &str| t == "NodePort" || t == "LoadBalancer";
    let spec = object(new, "spec");
    if needs_ip(&new_ty) && needs_ip(&old_ty) {
        for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            let empty = spec
                .get(key)
                .is_none_or(|v| v.is_null() || v == "" || v.as_array().is_some_and(Vec::is_empty));
            if empty && let Some(v) = old.pointer(&format!("/spec/{key}")) {
                spec[key] = v.clone();
            }
        }
    }
    if needs_node_port(&new_ty) && needs_node_port(&old_ty) {
        let ports_of = |s: &Value| -> Vec<(String, i64)> {
            s.get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| {
                    (
                        p.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        p.get("nodePort").and_then(Value::as_i64).unwrap_or(0),
                    )
                })
                .collect()
        };
        let old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
        let old_ports = ports_of(&old_spec);
        let new_ports = ports_of(spec);
        let used: Vec<i64> = new_ports
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| *n != 0 && old_ports.iter().any(|(_, o)| o == n))
            .collect();
        for p in spec
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if p.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                continue;
            }
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            if let Some((_, n)) = old_ports.iter().rev().find(|(o, _)| o == name)
                && *n != 0
                && !used.contains(n)
            {
                p["nodePort"] = json!(n);
            }
        }
        if spec
            .get("healthCheckNodePort")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
            && let Some(n) = old
                .pointer("/spec/healthCheckNodePort")
                .filter(|n| n.as_i64().unwrap_or(0) != 0)
        {
            spec["healthCheckNodePort"] = n.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_classes() {
        let spec = |r: Value| json!({"containers": [{"name": "c", "resources": r}]});
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}})
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }

    #[test]
    fn a_job_gets_a_selector_of_its_uid() {
        let mut job = json!({"metadata": {"name": "j", "uid": "u-1"}, "spec": {"template": {}}});
        create("batch/v1", "Job", &mut job, &Admission::default());
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["job-name"],
            "j"
        );
    }
}
