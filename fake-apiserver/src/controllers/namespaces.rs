//! The namespace controller and the namespace defaults, as kube-controller-manager runs
//! them: the `kube-root-ca.crt` ConfigMap and `default` ServiceAccount in each active
//! namespace (kept as they were published), and deletion of a terminating namespace's
//! content (pods before the rest, finalizers honoured), its conditions, then `finalize`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::api::Api;
use crate::meta::{finalizers, name_of, now, set_meta};
use crate::resource::ResourceType;
use crate::store::objects::ObjectKey;
use crate::store::{State, namespace_key};

/// The field manager of what the controllers write.
const MANAGER: &str = "kube-controller-manager";

/// The ConfigMap the root CA publisher puts in every namespace.
const ROOT_CA: &str = "kube-root-ca.crt";

/// The description kube-controller-manager gives `kube-root-ca.crt`.
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The CA bundle of the fake cluster (a placeholder: the fake serves no TLS).
const ROOT_CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nZmFrZS1hcGlzZXJ2ZXIgcm9vdCBDQSAobm8gVExTOiBhIHBsYWNlaG9sZGVyKQ==\n-----END CERTIFICATE-----\n";

/// Whether namespace `ns` exists, is not being deleted and is `Active`.
fn active(state: &State, ns: &str) -> bool {
    state.store.get(&namespace_key(ns)).is_some_and(|n| {
        n.pointer("/metadata/deletionTimestamp").is_none()
            && n.pointer("/status/phase").and_then(Value::as_str) == Some("Active")
    })
}

/// The root CA publisher and the service account controller: `kube-root-ca.crt` and
/// `default` in an active namespace, created when missing.
pub(crate) fn ensure_defaults(state: &mut State, ns: &str) {
    if !state.namespace_defaults || !active(state, ns) {
        return;
    }
    if let Some(rt) = state.type_of("", "configmaps")
        && !state.store.contains(&State::key(&rt, Some(ns), ROOT_CA))
    {
        let cm = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA, "namespace": ns,
                         "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": ROOT_CA_PEM},
        });
        let _ = Api::create(state, &rt, Some(ns), cm, MANAGER);
    }
    if let Some(rt) = state.type_of("", "serviceaccounts")
        && !state.store.contains(&State::key(&rt, Some(ns), "default"))
    {
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "default", "namespace": ns}});
        let _ = Api::create(state, &rt, Some(ns), sa, MANAGER);
    }
}

/// The root CA publisher puts back `kube-root-ca.crt`'s data and description when a
/// write changed them.
pub(crate) fn reconcile_root_ca(state: &mut State, rt: &ResourceType, obj: &Value) {
    if !state.namespace_defaults || !rt.is("", "configmaps") || name_of(obj) != Some(ROOT_CA) {
        return;
    }
    let data_ok = obj.get("data") == Some(&json!({"ca.crt": ROOT_CA_PEM}));
    let described = obj
        .pointer("/metadata/annotations/kubernetes.io~1description")
        .and_then(Value::as_str)
        .is_some_and(|d| !d.is_empty());
    if data_ok && described {
        return;
    }
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut fixed = obj.clone();
    fixed["data"] = json!({"ca.crt": ROOT_CA_PEM});
    if !fixed
        .pointer("/metadata/annotations")
        .is_some_and(Value::is_object)
    {
        fixed["metadata"]["annotations"] = json!({});
    }
    fixed["metadata"]["annotations"]["kubernetes.io/description"] = json!(ROOT_CA_DESCRIPTION);
    let _ = Api::update(state, rt, &ns, ROOT_CA, fixed, MANAGER);
}

/// One pass of the namespace controller over a terminating namespace: delete its
/// content (pods first), record what remains in the conditions, and finalize it once
/// nothing does.
pub(crate) fn sync(state: &mut State, ns: &str) {
    if state.syncing_namespace {
        return;
    }
    let Some(namespace) = state.store.get(&namespace_key(ns)) else {
        return;
    };
    if namespace.pointer("/metadata/deletionTimestamp").is_none() {
        return;
    }
    state.syncing_namespace = true;
    let content = |state: &State, pods: bool| -> Vec<(ObjectKey, Value)> {
        state
            .store
            .in_namespace(ns)
            .into_iter()
            .filter(|(k, _)| (k.0.is_empty() && k.1 == "pods") == pods)
            .collect()
    };
    for pods in [true, false] {
        for (key, obj) in content(state, pods) {
            if finalizers(&obj).is_empty() {
                Api::remove(state, &key, obj);
            } else if obj.pointer("/metadata/deletionTimestamp").is_none() {
                let mut marked = obj;
                set_meta(&mut marked, "deletionTimestamp", json!(now()));
                set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
                state.store.bump_and_put(key, marked);
            }
        }
    }
    let remaining = content(state, true)
        .into_iter()
        .chain(content(state, false))
        .collect::<Vec<_>>();
    state.syncing_namespace = false;
    let Some(mut namespace) = state.store.get(&namespace_key(ns)) else {
        return;
    };
    let conditions = conditions(&remaining, &now(), namespace.pointer("/status/conditions"));
    if namespace.pointer("/status/conditions") != Some(&conditions) {
        namespace["status"]["conditions"] = conditions;
        state
            .store
            .bump_and_put(namespace_key(ns), namespace.clone());
    }
    if !remaining.is_empty() {
        return;
    }
    // finalize: `kubernetes` leaves spec.finalizers; with no finalizer left at all, the
    // namespace goes (watchers see its last stored state).
    let spec_fins: Vec<Value> = namespace
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|f| *f != "kubernetes").cloned().collect())
        .unwrap_or_default();
    if spec_fins.is_empty() && finalizers(&namespace).is_empty() {
        let rv = state.store.next_rv();
        set_meta(&mut namespace, "resourceVersion", json!(rv.to_string()));
        state.store.remove(&namespace_key(ns), &namespace);
        super::gc::collect(state);
    } else if namespace.pointer("/spec/finalizers") != Some(&json!(spec_fins)) {
        namespace["spec"]["finalizers"] = json!(spec_fins);
        state.store.bump_and_put(namespace_key(ns), namespace);
    }
}

/// After an object is removed: kube-controller-manager recreates the namespace's
/// defaults, and the namespace controller looks at a terminating namespace again.
pub(crate) fn content_removed(state: &mut State, obj: &Value) {
    let Some(ns) = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    let kind = obj.get("kind").and_then(Value::as_str);
    let name = name_of(obj);
    let default_object = matches!(
        (kind, name),
        (Some("ConfigMap"), Some(ROOT_CA)) | (Some("ServiceAccount"), Some("default"))
    );
    if default_object && active(state, &ns) {
        ensure_defaults(state, &ns);
    }
    if state
        .store
        .get(&namespace_key(&ns))
        .is_some_and(|n| n.pointer("/metadata/deletionTimestamp").is_some())
    {
        sync(state, &ns);
    }
}

/// The five conditions the namespace controller writes, keeping each condition's
/// `lastTransitionTime` while its status does not change.
fn conditions(remaining: &[(ObjectKey, Value)], time: &str, before: Option<&Value>) -> Value {
    let mut per_resource: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_finalizer: BTreeMap<String, usize> = BTreeMap::new();
    for (key, obj) in remaining {
        *per_resource
            .entry(format!("{}.{}", key.1, key.0))
            .or_default() += 1;
        for f in finalizers(obj) {
            *per_finalizer.entry(f).or_default() += 1;
        }
    }
    let resources: Vec<String> = per_resource
        .iter()
        .map(|(r, n)| format!("{r} has {n} resource instances"))
        .collect();
    let fins: Vec<String> = per_finalizer
        .iter()
        .map(|(f, n)| format!("{f} in {n} resource instances"))
        .collect();
    let remain = !resources.is_empty();
    let rows = [
        (
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered".to_owned(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".to_owned(),
        ),
        (
            "NamespaceDeletionContentFailure",
            false,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_owned(),
        ),
        if remain {
            (
                "NamespaceContentRemaining",
                true,
                "SomeResourcesRemain",
                format!("Some resources are remaining: {}", resources.join(", ")),
            )
        } else {
            (
                "NamespaceContentRemaining",
                false,
                "ContentRemoved",
                "All content successfully removed".to_owned(),
            )
        },
        if fins.is_empty() {
            (
                "NamespaceFinalizersRemaining",
                false,
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".to_owned(),
            )
        } else {
            (
                "NamespaceFinalizersRemaining",
                true,
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    fins.join(", ")
                ),
            )
        },
    ];
    let previous = |t: &str| {
        before
            .and_then(Value::as_array)
            .and_then(|list| list.iter().find(|c| c["type"] == t))
            .cloned()
    };
    Value::Array(
        rows.into_iter()
            .map(|(t, status, reason, message)| {
                let status = if status { "True" } else { "False" };
                let since = previous(t)
                    .filter(|c| c["status"] == status)
                    .and_then(|c| c.get("lastTransitionTime").cloned())
                    .unwrap_or_else(|| json!(time));
                json!({"type": t, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
            })
            .collect(),
    )
}
