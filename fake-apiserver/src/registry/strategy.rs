//! What the registry does for some kinds beyond the common verbs, as their kube-apiserver
//! strategies and REST handlers do (what a create fills in is apiserver-rules' defaults, run
//! by [`admission::defaulting`](crate::admission::defaulting)): a namespace's name label
//! kept on update, its delete (it turns `Terminating` and the namespace
//! controller empties it) and its `finalize` subresource; an accepted CRD's status.

use serde_json::{Value, json};

use crate::admission::decode::options::DeleteOptions;
use crate::controllers;
use crate::meta::{finalizers, name_of, now, set_meta};
use crate::resource::ResourceType;
use crate::rules;
use crate::store::{State, namespace_key};

/// The label the registry keeps equal to a namespace's name.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// An update of a namespace cannot change `spec.finalizers` (only `finalize` can) or,
/// through the main resource, its status; the name label is put back.
pub(crate) fn keep_namespace_fields(
    rt: &ResourceType,
    old: &Value,
    new: &mut Value,
    subresource: Option<&str>,
) {
    if !rt.is("", "namespaces") {
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
    state: &mut State,
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
    let rv = state.store.next_rv();
    set_meta(&mut marked, "resourceVersion", json!(rv.to_string()));
    state.store.put(namespace_key(&name), marked.clone());
    controllers::namespaces::sync(state, &name);
    rt.served(&marked)
}

/// `PUT /api/v1/namespaces/<name>/finalize`: sets `spec.finalizers`; a terminating
/// namespace left without finalizers goes.
pub(crate) fn finalize_namespace(state: &mut State, name: &str, new: &Value) -> Option<Value> {
    let mut namespace = state.store.get(&namespace_key(name))?;
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
        let stored = state.store.get(&namespace_key(name))?;
        let rv = state.store.next_rv();
        let mut tombstone = stored;
        set_meta(&mut tombstone, "resourceVersion", json!(rv.to_string()));
        state.store.remove(&namespace_key(name), &tombstone);
        controllers::gc::collect(state);
        return Some(namespace);
    }
    if Some(&namespace) != state.store.get(&namespace_key(name)).as_ref() {
        state
            .store
            .bump_and_put(namespace_key(name), namespace.clone());
    }
    state.store.get(&namespace_key(name))
}

/// The status of an accepted CRD: established at once, its names accepted, its
/// storage version stored (kept from before on an update).
pub(crate) fn accept_crd(old: Option<&Value>, crd: &mut Value) {
    let mut status = rules::crd::established_status(crd, &now());
    if let Some(stored) = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
    {
        let mut all = stored.clone();
        for v in status["storedVersions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            if !all.contains(&v) {
                all.push(v);
            }
        }
        status["storedVersions"] = Value::Array(all);
    }
    crd["status"] = status;
}
