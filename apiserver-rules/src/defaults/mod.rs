//! What kube-apiserver 1.36 stores for a built-in object, in its stages, so that a fake
//! server stores the same: a controller that compares what it wants with what is stored
//! then sees the same difference (none) on the fake as on a cluster.
//!
//! 1. [`decode`]: reading a body into the kind's Go type and defaulting it, which every
//!    create, update and patch does before the field manager records who owns what (so a
//!    writer owns the defaults of what it wrote; an applier only what it applied): the Go
//!    round trip ([`go_type`]), the version conversion's effects (a Secret's `stringData`
//!    folded into `data`), the `SetDefaults_*` functions along the paths of the generated
//!    defaulters ([`core`], [`apps`], [`batch`], [`other`]) and the declarative defaults
//!    (the OpenAPI `default`s in `types.json`, [`go_type::declarative`]).
//! 2. [`prepare_create`] and [`prepare_update`]: what the admission plugins and the
//!    registry strategies change after that (a Pod's service-account volume, priority,
//!    tolerations and status; a Job's generated selector; a PersistentVolumeClaim's
//!    protection finalizer; status resets; a DaemonSet's template generation), then the
//!    defaults again, as a read from storage applies them ([`strategy`]).
//! 3. [`Allocator`]: what the server allocates, Service cluster IPs and node ports.
//!
//! Objects are v1 JSON (`apiVersion`/`kind` as served); kinds without rules pass through.

pub mod allocate;
pub mod apps;
pub mod batch;
pub mod core;
pub mod go_type;
pub mod other;
pub mod quantity;
pub mod strategy;

pub use allocate::Allocator;
pub use strategy::Admission;

use serde_json::{Value, json};

use crate::builtin::types;

/// Stage 1: `obj` as the real server decodes and defaults a body of `kind`.
pub fn decode(api_version: &str, kind: &str, obj: &mut Value) {
    let Some(ty) = types().kind(api_version, kind) else {
        return;
    };
    if !obj.is_object() {
        return;
    }
    // The conversion to the internal version runs before the defaults are encoded.
    if (api_version, kind) == ("v1", "Secret") {
        core::fold_string_data(obj);
    }
    go_type::round_trip(ty, obj);
    set_defaults(api_version, kind, obj);
    go_type::declarative(ty, obj);
    // The defaulted object, encoded: what defaults left empty is dropped.
    go_type::round_trip(ty, obj);
}

/// The `SetObjectDefaults_<Kind>` of a kind: its `SetDefaults_*` functions along the paths
/// `zz_generated.defaults.go` walks.
fn set_defaults(api_version: &str, kind: &str, obj: &mut Value) {
    match (api_version, kind) {
        ("v1", "Pod") => core::pod(obj),
        ("v1", "Service") => core::service(obj),
        ("v1", "Secret") => core::secret(obj),
        ("v1", "PersistentVolumeClaim") => core::persistent_volume_claim(obj),
        ("v1", "Namespace") => core::namespace(obj),
        ("v1", "Endpoints") => core::endpoints(obj),
        ("v1", "Node") => core::node(obj),
        ("apps/v1", "Deployment") => apps::deployment(obj),
        ("apps/v1", "ReplicaSet") => apps::replica_set(obj),
        ("apps/v1", "StatefulSet") => apps::stateful_set(obj),
        ("apps/v1", "DaemonSet") => apps::daemon_set(obj),
        ("batch/v1", "Job") => batch::job(obj),
        ("batch/v1", "CronJob") => batch::cron_job(obj),
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => {
            other::role_binding(obj)
        }
        ("networking.k8s.io/v1", "NetworkPolicy") => other::network_policy(obj),
        ("networking.k8s.io/v1", "IngressClass") => other::ingress_class(obj),
        ("autoscaling/v2", "HorizontalPodAutoscaler") => other::horizontal_pod_autoscaler(obj),
        ("discovery.k8s.io/v1", "EndpointSlice") => other::endpoint_slice(obj),
        ("scheduling.k8s.io/v1", "PriorityClass") => other::priority_class(obj),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            crate::kinds::webhook::default(obj, true)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            crate::kinds::webhook::default(obj, false)
        }
        _ => {}
    }
}

/// Stage 2 of a create: the mutating admission plugins, the strategy's `PrepareForCreate`
/// and the defaults of a read. `obj` has its name, namespace and `uid`.
pub fn prepare_create(api_version: &str, kind: &str, obj: &mut Value, admission: &Admission<'_>) {
    if types().kind(api_version, kind).is_none() || !obj.is_object() {
        return;
    }
    strategy::create(api_version, kind, obj, admission);
    decode(api_version, kind, obj);
}

/// Stage 2 of an update (also of a patch and an apply to an existing object): the
/// strategy's `PrepareForUpdate` against the stored `old`, and the defaults of a read.
pub fn prepare_update(api_version: &str, kind: &str, new: &mut Value, old: &Value) {
    if types().kind(api_version, kind).is_none() || !new.is_object() {
        return;
    }
    strategy::update(api_version, kind, new, old);
    decode(api_version, kind, new);
}

/// `obj[key]`, made an empty object when it is missing or not an object.
pub(crate) fn object<'a>(obj: &'a mut Value, key: &str) -> &'a mut Value {
    if !obj.get(key).is_some_and(Value::is_object) {
        obj[key] = json!({});
    }
    &mut obj[key]
}

fn set_when(obj: &mut Value, key: &str, value: Value, unset: impl Fn(&Value) -> bool) {
    if let Some(map) = obj.as_object_mut()
        && map.get(key).is_none_or(unset)
    {
        map.insert(key.to_owned(), value);
    }
}

/// Sets `key` of an object when it is missing, `null` or `""`: Go's `if x == ""`.
pub(crate) fn or_empty(obj: &mut Value, key: &str, value: Value) {
    set_when(obj, key, value, |v| v.is_null() || v == "");
}

/// Sets `key` of an object when it is missing or `null`: Go's `if x == nil`.
pub(crate) fn or_nil(obj: &mut Value, key: &str, value: Value) {
    set_when(obj, key, value, Value::is_null);
}

/// Sets `key` of an object when it is missing, `null` or `0`: Go's `if x == 0`.
pub(crate) fn or_zero(obj: &mut Value, key: &str, value: Value) {
    set_when(obj, key, value, |v| v.is_null() || v.as_f64() == Some(0.0));
}

/// The objects in the list `obj[key]`.
pub(crate) fn items<'a>(obj: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    obj.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter(|v| v.is_object())
}

/// The object at a JSON pointer, when there is one.
pub(crate) fn at<'a>(obj: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    obj.pointer_mut(pointer).filter(|v| v.is_object())
}
