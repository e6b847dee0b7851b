//! Namespaces as a cluster has them: what the registry fills in, the `kube-root-ca.crt`
//! ConfigMap and `default` ServiceAccount kube-controller-manager puts in each one, and
//! deletion by the namespace controller (content first, pods before the rest, finalizers
//! honoured, then `finalize`).
//!
//! The real controllers act a few seconds after a change; these act at once, in the same
//! order, so watchers see the same events.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::meta::{finalizers, name_of, now, set_meta};
use crate::options::DeleteOptions;
use crate::resource::ResourceType;
use crate::store::objects::ObjectKey;
use crate::store::{State, namespace_key};
use crate::writer::Ctx;

/// The label the registry keeps equal to a namespace's name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

const ROOT_CA: &str = "kube-root-ca.crt";

/// The description kube-controller-manager gives `kube-root-ca.crt`.
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The CA bundle of the fake cluster (a placeholder: the fake serves no TLS).
const ROOT_CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nZmFrZS1hcGlzZXJ2ZXIgcm9vdCBDQSAobm8gVExTOiBhIHBsYWNlaG9sZGVyKQ==\n-----END CERTIFICATE-----\n";

fn is_namespace(rt: &ResourceType) -> bool {
    rt.is("", "namespaces")
}

impl State {
    /// What the namespace registry sets on create: the name label, the `kubernetes`
    /// finalizer, and an `Active` status.
    pub(crate) fn prepare_namespace(&self, rt: &ResourceType, obj: &mut Value) {
        if !is_namespace(rt) {
            return;
        }
        let name = name_of(obj).unwrap_or("").to_owned();
        if !obj
            .pointer("/metadata/labels")
            .is_some_and(Value::is_object)
        {
            obj["metadata"]["labels"] = json!({});
        }
        obj["metadata"]["labels"][NAME_LABEL] = json!(name);
        let mut fins: Vec<Value> = obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !fins.iter().any(|f| f == "kubernetes") {
            fins.push(json!("kubernetes"));
        }
        if !obj.get("spec").is_some_and(Value::is_object) {
            obj["spec"] = json!({});
        }
        obj["spec"]["finalizers"] = json!(fins);
        obj["status"] = json!({"phase": "Active"});
    }

    /// An update of a namespace cannot change `spec.finalizers` (only `finalize` can) or,
    /// through the main resource, its status; the name label is put back.
    pub(crate) fn keep_namespace_fields(
        &self,
        rt: &ResourceType,
        old: &Value,
        new: &mut Value,
        subresource: Option<&str>,
    ) {
        if !is_namespace(rt) {
            return;
        }
        if subresource != Some("finalize") {
            let kept = old
                .pointer("/spec/finalizers")
                .cloned()
                .unwrap_or(json!([]));
            if !new.get("spec").is_some_and(Value::is_object) {
                new["spec"] = json!({});
            }
            new["spec"]["finalizers"] = kept;
        }
        if subresource != Some("status") {
            match old.get("status") {
                Some(status) => new["status"] = status.clone(),
                None => {
                    if let Some(map) = new.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        let name = name_of(old).unwrap_or("").to_owned();
        if !new
            .pointer("/metadata/labels")
            .is_some_and(Value::is_object)
        {
            new["metadata"]["labels"] = json!({});
        }
        new["metadata"]["labels"][NAME_LABEL] = json!(name);
    }

    fn namespace_active(&self, ns: &str) -> bool {
        self.store.get(&namespace_key(ns)).is_some_and(|n| {
            n.pointer("/metadata/deletionTimestamp").is_none()
                && n.pointer("/status/phase").and_then(Value::as_str) == Some("Active")
        })
    }

    /// The root CA publisher and the service account controller: `kube-root-ca.crt` and
    /// `default` in an active namespace, created when missing.
    pub(crate) fn ensure_namespace_defaults(&mut self, ns: &str) {
        if !self.namespace_defaults || !self.namespace_active(ns) {
            return;
        }
        let mut ctx = Ctx::named("kube-controller-manager");
        if let Some(rt) = self.type_of("", "configmaps")
            && !self.store.contains(&State::key(&rt, Some(ns), ROOT_CA))
        {
            let cm = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": ROOT_CA, "namespace": ns,
                             "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
                "data": {"ca.crt": ROOT_CA_PEM},
            });
            let _ = self.create(&rt, Some(ns), cm, &mut ctx);
        }
        if let Some(rt) = self.type_of("", "serviceaccounts")
            && !self.store.contains(&State::key(&rt, Some(ns), "default"))
        {
            let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": {"name": "default", "namespace": ns}});
            let _ = self.create(&rt, Some(ns), sa, &mut ctx);
        }
    }

    /// The root CA publisher puts back `kube-root-ca.crt`'s data and description when a
    /// write changed them.
    pub(crate) fn reconcile_root_ca(&mut self, rt: &ResourceType, obj: &Value) {
        if !self.namespace_defaults || !rt.is("", "configmaps") || name_of(obj) != Some(ROOT_CA) {
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
        let mut ctx = Ctx::named("kube-controller-manager");
        let _ = self.update(rt, Some(&ns), ROOT_CA, fixed, None, &mut ctx, None);
    }

    /// DELETE of a namespace: it turns `Terminating` (one write, answered with the object),
    /// then the namespace controller empties and finalizes it.
    pub(crate) fn delete_namespace(
        &mut self,
        rt: &ResourceType,
        old: Value,
        options: &DeleteOptions,
    ) -> Value {
        let name = name_of(&old).unwrap_or("").to_owned();
        if old.pointer("/metadata/deletionTimestamp").is_some() {
            return rt.served(&old);
        }
        let mut marked = old;
        set_meta(&mut marked, "deletionTimestamp", json!(now()));
        marked["status"]["phase"] = json!("Terminating");
        let mut fins = finalizers(&marked);
        let gc = match options.policy() {
            Some("Foreground") => Some("foregroundDeletion"),
            Some("Orphan") => Some("orphan"),
            _ => None,
        };
        if let Some(f) = gc
            && !fins.iter().any(|x| x == f)
        {
            fins.retain(|x| x != "orphan" && x != "foregroundDeletion");
            fins.push(f.to_owned());
            marked["metadata"]["finalizers"] = json!(fins);
        }
        let rv = self.store.next_rv();
        set_meta(&mut marked, "resourceVersion", json!(rv.to_string()));
        self.store.put(namespace_key(&name), marked.clone());
        self.sync_namespace(&name);
        rt.served(&marked)
    }

    /// One pass of the namespace controller over a terminating namespace: delete its
    /// content (pods first), record what remains in the conditions, and finalize it once
    /// nothing does.
    pub(crate) fn sync_namespace(&mut self, ns: &str) {
        if self.syncing_namespace {
            return;
        }
        let Some(namespace) = self.store.get(&namespace_key(ns)) else {
            return;
        };
        if namespace.pointer("/metadata/deletionTimestamp").is_none() {
            return;
        }
        self.syncing_namespace = true;
        let content = |state: &State, pods: bool| -> Vec<(ObjectKey, Value)> {
            state
                .store
                .in_namespace(ns)
                .into_iter()
                .filter(|(k, _)| (k.0.is_empty() && k.1 == "pods") == pods)
                .collect()
        };
        for pods in [true, false] {
            for (key, obj) in content(self, pods) {
                if finalizers(&obj).is_empty() {
                    self.remove_now(&key, obj);
                } else if obj.pointer("/metadata/deletionTimestamp").is_none() {
                    let mut marked = obj;
                    set_meta(&mut marked, "deletionTimestamp", json!(now()));
                    set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
                    self.bump_and_put(key, marked);
                }
            }
        }
        let remaining = content(self, true)
            .into_iter()
            .chain(content(self, false))
            .collect::<Vec<_>>();
        self.syncing_namespace = false;
        let Some(mut namespace) = self.store.get(&namespace_key(ns)) else {
            return;
        };
        let conditions =
            namespace_conditions(&remaining, &now(), namespace.pointer("/status/conditions"));
        if namespace.pointer("/status/conditions") != Some(&conditions) {
            namespace["status"]["conditions"] = conditions;
            self.bump_and_put(namespace_key(ns), namespace.clone());
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
            let rv = self.store.next_rv();
            set_meta(&mut namespace, "resourceVersion", json!(rv.to_string()));
            self.store.remove(&namespace_key(ns), &namespace);
            self.collect_garbage();
        } else if namespace.pointer("/spec/finalizers") != Some(&json!(spec_fins)) {
            namespace["spec"]["finalizers"] = json!(spec_fins);
            self.bump_and_put(namespace_key(ns), namespace);
        }
    }

    /// `PUT /api/v1/namespaces/<name>/finalize`: sets `spec.finalizers`; a terminating
    /// namespace left without finalizers goes.
    pub(crate) fn finalize_namespace(&mut self, name: &str, new: &Value) -> Option<Value> {
        let mut namespace = self.store.get(&namespace_key(name))?;
        let fins = new
            .pointer("/spec/finalizers")
            .cloned()
            .unwrap_or(json!([]));
        namespace["spec"]["finalizers"] = fins.clone();
        let empty = fins.as_array().is_none_or(Vec::is_empty);
        if empty
            && finalizers(&namespace).is_empty()
            && namespace.pointer("/metadata/deletionTimestamp").is_some()
        {
            let stored = self.store.get(&namespace_key(name))?;
            let rv = self.store.next_rv();
            let mut tombstone = stored;
            set_meta(&mut tombstone, "resourceVersion", json!(rv.to_string()));
            self.store.remove(&namespace_key(name), &tombstone);
            self.collect_garbage();
            return Some(namespace);
        }
        if Some(&namespace) != self.store.get(&namespace_key(name)).as_ref() {
            self.bump_and_put(namespace_key(name), namespace.clone());
        }
        self.store.get(&namespace_key(name))
    }

    /// After an object is removed: kube-controller-manager recreates the namespace's
    /// defaults, and the namespace controller looks at a terminating namespace again.
    pub(crate) fn namespace_content_removed(&mut self, obj: &Value) {
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
        if default_object && self.namespace_active(&ns) {
            self.ensure_namespace_defaults(&ns);
        }
        if self
            .store
            .get(&namespace_key(&ns))
            .is_some_and(|n| n.pointer("/metadata/deletionTimestamp").is_some())
        {
            self.sync_namespace(&ns);
        }
    }
}

/// The five conditions the namespace controller writes, keeping each condition's
/// `lastTransitionTime` while its status does not change.
fn namespace_conditions(
    remaining: &[(ObjectKey, Value)],
    time: &str,
    before: Option<&Value>,
) -> Value {
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
