//! The core group's defaults (`pkg/apis/core/v1/defaults.go` along the paths of its
//! `zz_generated.defaults.go`): pod specs wherever they are (Pods, templates), their
//! containers, probes and volumes; Services, Secrets, PersistentVolumeClaims, Namespaces,
//! Endpoints and Nodes; and the Secret conversion that folds `stringData` into `data`.

use serde_json::{Value, json};

use super::{at, items, object, or_empty, or_nil, or_zero, quantity};
use crate::base64::base64_encode;

/// `SetObjectDefaults_Pod`: `SetDefaults_Pod` first (requests from limits, service links,
/// host-network ports), then the pod spec and what it holds, then the status' resources.
pub fn pod(obj: &mut Value) {
    let spec = object(obj, "spec");
    for list in ["containers", "initContainers"] {
        for c in items(spec, list) {
            let Some(limits) = c
                .pointer("/resources/limits")
                .and_then(Value::as_object)
                .cloned()
            else {
                continue;
            };
            let requests = object(object(c, "resources"), "requests");
            for (k, v) in limits {
                or_nil(requests, &k, v);
            }
        }
    }
    or_nil(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork") == Some(&json!(true)) {
        for list in ["containers", "initContainers"] {
            for c in items(spec, list) {
                for p in items(c, "ports") {
                    let port = p.get("containerPort").cloned().unwrap_or(json!(0));
                    or_zero(p, "hostPort", port);
                }
            }
        }
    }
    pod_spec(spec);
    if let Some(status) = at(obj, "/status") {
        for list in [
            "initContainerStatuses",
            "containerStatuses",
            "ephemeralContainerStatuses",
        ] {
            for s in items(status, list) {
                resource_list(s, "allocatedResources");
                if let Some(r) = at(s, "/resources") {
                    requirements(r);
                }
            }
        }
        resource_list(status, "allocatedResources");
        if let Some(r) = at(status, "/resources") {
            requirements(r);
        }
    }
}

/// `SetDefaults_PodSpec` and the defaults of what a pod spec holds, as every pod template
/// gets them (`SetDefaults_Pod` is for Pods only).
pub fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    or_empty(spec, "dnsPolicy", json!("ClusterFirst"));
    or_empty(spec, "restartPolicy", json!("Always"));
    or_nil(spec, "securityContext", json!({}));
    or_nil(spec, "terminationGracePeriodSeconds", json!(30));
    or_empty(spec, "schedulerName", json!("default-scheduler"));
    for v in items(spec, "volumes") {
        volume(v);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, list) {
            container(c);
        }
    }
    resource_list(spec, "overhead");
    if let Some(r) = at(spec, "/resources") {
        requirements(r);
    }
}

/// The pod template at `pointer` of a workload: its spec's defaults.
pub fn template(obj: &mut Value, pointer: &str) {
    if let Some(t) = at(obj, pointer) {
        pod_spec(object(t, "spec"));
    }
}

/// `SetDefaults_Container`, and the defaults of its env sources, resources, probes and
/// lifecycle handlers (the declarative ones, such as a port's protocol, are
/// [`super::go_type::declarative`]'s).
fn container(c: &mut Value) {
    if c.get("imagePullPolicy")
        .is_none_or(|p| p.is_null() || p == "")
    {
        let image = c.get("image").and_then(Value::as_str).unwrap_or("");
        c["imagePullPolicy"] = json!(pull_policy(image));
    }
    or_empty(c, "terminationMessagePath", json!("/dev/termination-log"));
    or_empty(c, "terminationMessagePolicy", json!("File"));
    for e in items(c, "env") {
        if let Some(f) = at(e, "/valueFrom/fieldRef") {
            or_empty(f, "apiVersion", json!("v1"));
        }
    }
    if let Some(r) = at(c, "/resources") {
        requirements(r);
    }
    for probe in ["/livenessProbe", "/readinessProbe", "/startupProbe"] {
        if let Some(p) = at(c, probe) {
            or_zero(p, "timeoutSeconds", json!(1));
            or_zero(p, "periodSeconds", json!(10));
            or_zero(p, "successThreshold", json!(1));
            or_zero(p, "failureThreshold", json!(3));
            handler(p);
        }
    }
    for hook in ["/lifecycle/postStart", "/lifecycle/preStop"] {
        if let Some(h) = at(c, hook) {
            handler(h);
        }
    }
}

/// `SetDefaults_HTTPGetAction` of a probe's or a hook's `httpGet`.
fn handler(h: &mut Value) {
    if let Some(g) = at(h, "/httpGet") {
        or_empty(g, "path", json!("/"));
        or_empty(g, "scheme", json!("HTTP"));
    }
}

/// The pull policy an image gets: `Always` for `:latest` or no tag, else `IfNotPresent`.
pub(crate) fn pull_policy(image: &str) -> &'static str {
    let name = image.split('@').next().unwrap_or("");
    let last = name.rsplit('/').next().unwrap_or("");
    let digest_only = image.contains('@') && !last.contains(':');
    if image.is_empty() || image.chars().any(|c| c.is_ascii_uppercase()) && !last.contains(':') {
        return "IfNotPresent";
    }
    match last.split_once(':') {
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
        None if digest_only => "IfNotPresent",
        None => "Always",
    }
}

/// Volume sources, by the field that names them.
const SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// `SetDefaults_Volume` and its source's `SetDefaults_*`.
fn volume(v: &mut Value) {
    if !SOURCES
        .iter()
        .any(|s| v.get(*s).is_some_and(|x| !x.is_null()))
    {
        v["emptyDir"] = json!({});
    }
    if let Some(image) = at(v, "/image") {
        let reference = image.get("reference").and_then(Value::as_str).unwrap_or("");
        let policy = if reference
            .rsplit('/')
            .next()
            .unwrap_or("")
            .ends_with(":latest")
        {
            "Always"
        } else {
            "IfNotPresent"
        };
        or_empty(image, "pullPolicy", json!(policy));
    }
    if let Some(s) = at(v, "/hostPath") {
        or_nil(s, "type", json!(""));
    }
    for source in ["/secret", "/configMap"] {
        if let Some(s) = at(v, source) {
            or_nil(s, "defaultMode", json!(420));
        }
    }
    if let Some(s) = at(v, "/downwardAPI") {
        or_nil(s, "defaultMode", json!(420));
        field_refs(s);
    }
    if let Some(s) = at(v, "/projected") {
        or_nil(s, "defaultMode", json!(420));
        for source in items(s, "sources") {
            if let Some(d) = at(source, "/downwardAPI") {
                field_refs(d);
            }
            if let Some(t) = at(source, "/serviceAccountToken") {
                or_nil(t, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(spec) = at(v, "/ephemeral/volumeClaimTemplate/spec") {
        claim_spec(spec);
    }
}

/// `SetDefaults_ObjectFieldSelector` of each item of a downward API source.
fn field_refs(source: &mut Value) {
    for item in items(source, "items") {
        if let Some(f) = at(item, "/fieldRef") {
            or_empty(f, "apiVersion", json!("v1"));
        }
    }
}

/// `SetDefaults_ResourceList` of a `limits`/`requests` pair.
fn requirements(r: &mut Value) {
    resource_list(r, "limits");
    resource_list(r, "requests");
}

/// `SetDefaults_ResourceList`: each amount rounded up to milli units.
pub(crate) fn resource_list(obj: &mut Value, key: &str) {
    let Some(list) = obj.get_mut(key).and_then(Value::as_object_mut) else {
        return;
    };
    for v in list.values_mut() {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        if let Some(c) = quantity::canonical_milli(&text) {
            *v = json!(c);
        }
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec` and its resources.
pub(crate) fn claim_spec(spec: &mut Value) {
    or_nil(spec, "volumeMode", json!("Filesystem"));
    if let Some(r) = at(spec, "/resources") {
        requirements(r);
    }
}

/// `SetObjectDefaults_PersistentVolumeClaim`, also of a StatefulSet's claim templates.
pub fn persistent_volume_claim(obj: &mut Value) {
    or_empty(object(obj, "status"), "phase", json!("Pending"));
    claim_spec(object(obj, "spec"));
    if let Some(status) = at(obj, "/status") {
        resource_list(status, "capacity");
        resource_list(status, "allocatedResources");
    }
}

/// `SetDefaults_Service` and the declarative port protocol.
pub fn service(obj: &mut Value) {
    let spec = object(obj, "spec");
    or_empty(spec, "sessionAffinity", json!("None"));
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            if let Some(m) = spec.as_object_mut() {
                m.remove("sessionAffinityConfig");
            }
        }
        Some("ClientIP") => {
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds");
            if timeout.is_none_or(Value::is_null) {
                spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
            }
        }
        _ => {}
    }
    or_empty(spec, "type", json!("ClusterIP"));
    for p in items(spec, "ports") {
        or_empty(p, "protocol", json!("TCP"));
        if matches!(p.get("targetPort"), None | Some(Value::Null))
            || p["targetPort"] == 0
            || p["targetPort"] == ""
        {
            let port = p.get("port").cloned().unwrap_or(json!(0));
            p["targetPort"] = port;
        }
    }
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let externally_accessible =
        matches!(ty.as_str(), "LoadBalancer" | "NodePort") || (ty == "ClusterIP" && external_ips);
    if externally_accessible {
        or_empty(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        or_nil(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        or_nil(spec, "allocateLoadBalancerNodePorts", json!(true));
        if let Some(lb) = at(obj, "/status/loadBalancer") {
            for ingress in items(lb, "ingress") {
                if ingress
                    .get("ip")
                    .and_then(Value::as_str)
                    .is_some_and(|ip| !ip.is_empty())
                {
                    or_nil(ingress, "ipMode", json!("VIP"));
                }
            }
        }
    }
}

/// `SetDefaults_Secret`: `Opaque`.
pub fn secret(obj: &mut Value) {
    or_empty(obj, "type", json!("Opaque"));
}

/// The Secret conversion to the internal version: each `stringData` entry replaces the
/// `data` entry of its key, base64-encoded; `stringData` is never stored.
pub fn fold_string_data(obj: &mut Value) {
    let Some(string_data) = obj.as_object_mut().and_then(|m| m.remove("stringData")) else {
        return;
    };
    let Some(entries) = string_data.as_object().filter(|m| !m.is_empty()) else {
        return;
    };
    let data = object(obj, "data");
    for (k, v) in entries {
        let text = v.as_str().unwrap_or("");
        data[k] = json!(base64_encode(text.as_bytes()));
    }
}

/// `SetDefaults_Namespace` (the name label) and `SetDefaults_NamespaceStatus` (`Active`).
pub fn namespace(obj: &mut Value) {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if !name.is_empty() {
        let labels = object(object(obj, "metadata"), "labels");
        labels["kubernetes.io/metadata.name"] = json!(name);
    }
    or_empty(object(obj, "status"), "phase", json!("Active"));
}

/// `SetDefaults_Endpoints`: each port's protocol.
pub fn endpoints(obj: &mut Value) {
    for subset in items(obj, "subsets") {
        for p in items(subset, "ports") {
            or_empty(p, "protocol", json!("TCP"));
        }
    }
}

/// `SetDefaults_NodeStatus`: allocatable is the capacity unless given; both rounded.
pub fn node(obj: &mut Value) {
    let status = object(obj, "status");
    if status.get("allocatable").is_none_or(Value::is_null)
        && let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned()
    {
        status["allocatable"] = capacity;
    }
    resource_list(status, "capacity");
    resource_list(status, "allocatable");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_gets_the_pod_and_pod_spec_defaults() {
        let mut p = json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "1"}},
            "livenessProbe": {"httpGet": {"port": 80}}}],
            "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}]}});
        super::super::decode("v1", "Pod", &mut p);
        let c = &p["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(c["resources"]["requests"]["cpu"], "1");
        assert_eq!(
            c["livenessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(p["spec"]["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(p["spec"]["volumes"][1]["secret"]["defaultMode"], 420);
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert_eq!(p["spec"]["dnsPolicy"], "ClusterFirst");
    }

    #[test]
    fn a_service_gets_its_policies_and_target_ports() {
        let mut s = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81, "targetPort": "web"}]}});
        service(&mut s);
        assert_eq!(
            s["spec"],
            json!({"type": "NodePort", "sessionAffinity": "None", "externalTrafficPolicy": "Cluster",
                "internalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                          {"port": 81, "protocol": "TCP", "targetPort": "web"}]})
        );
    }

    #[test]
    fn string_data_is_folded_into_data() {
        let mut s = json!({"data": {"b": "eA==", "a": "eQ=="}, "stringData": {"a": "hello"}});
        fold_string_data(&mut s);
        assert_eq!(s, json!({"data": {"a": "aGVsbG8=", "b": "eA=="}}));
    }
}
