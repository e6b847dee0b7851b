//! Namespaces as a cluster has them: what the registry fills in, the `kube-root-ca.crt`
//! ConfigMap and `default` ServiceAccount kube-controller-manager puts in each one, and
//! deletion by the namespace controller (content first, pods before the rest, finalizers
//! honoured, then `finalize`).
//!
//! The real controllers act a few seconds after a change; these act at once, in the same
//! order, so watchers see the same events.

use serde_json::{Value, json};

use crate::admission::decode::options::DeleteOptions;
use crate::meta::{finalizers, name_of, now, set_meta};
use crate::resource::ResourceType;
use crate::store::{State, namespace_key};

/// The label the registry keeps equal to a namespace's name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

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
        crate::controllers::namespaces::sync(self, &name);
        rt.served(&marked)
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
            crate::controllers::gc::collect(self);
            return Some(namespace);
        }
        if Some(&namespace) != self.store.get(&namespace_key(name)).as_ref() {
            self.store
                .bump_and_put(namespace_key(name), namespace.clone());
        }
        self.store.get(&namespace_key(name))
    }
}
