//! What kube-controller-manager (and the apiextensions server's CRD finalizer) does that
//! tests rely on: garbage collection ([`gc`]), the namespace controller and the namespace
//! defaults ([`namespaces`]), and removing a deleted CRD's objects ([`crd`]).
//!
//! The real controllers act a few seconds after a change; these act at once, in the same
//! order, so watchers see the same events. They read and write the store directly, and
//! create, update and remove objects through [`api::Api`], which the registry implements
//! (as the real controllers write through a client): what they create is defaulted,
//! validated and owned like any client's object, and what they remove sets the other
//! controllers off again.

pub mod api;
pub mod crd;
pub mod gc;
pub mod namespaces;

use serde_json::Value;

use crate::store::State;

/// What the controllers do once an object is gone: a CRD's objects go with it, dependents
/// whose owners are gone are collected, and its namespace gets its defaults back or, when
/// terminating, is looked at again.
pub(crate) fn after_delete(state: &mut State, obj: &Value) {
    let is_crd = obj.get("apiVersion").and_then(Value::as_str) == Some("apiextensions.k8s.io/v1")
        && obj.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition");
    if is_crd {
        crd::deleted(state, obj);
    }
    state.services.release(obj);
    gc::collect(state);
    namespaces::content_removed(state, obj);
}
