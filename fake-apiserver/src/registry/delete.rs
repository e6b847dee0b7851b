//! DELETE: preconditions, propagation (the finalizers `orphan` and `foregroundDeletion`),
//! finalizers that keep an object marked until they are gone, and the removal itself,
//! after which the controllers react.

use serde_json::{Value, json};

use super::strategy;
use crate::admission::Ctx;
use crate::admission::decode::options::DeleteOptions;
use crate::controllers;
use crate::conversion;
use crate::error::ApiError;
use crate::meta::{finalizers, now, rv_of, set_finalizers, set_meta};
use crate::resource::ObjectRef;
use crate::store::State;
use crate::store::objects::ObjectKey;

/// DELETE of object `at`; the object as served after the delete (marked, or as removed).
pub(crate) fn delete(
    state: &mut State,
    at: ObjectRef<'_>,
    options: &DeleteOptions,
    ctx: &Ctx,
) -> Result<Value, ApiError> {
    let rt = at.rt;
    let key = State::key(rt, at.namespace, at.name);
    let old = state
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, at.name))?;
    check_preconditions(&at, &old, options)?;
    // Served in the version asked for (converted before anything changes).
    let served_old = conversion::serve(rt, &old, &ctx.conversions)?;
    if ctx.dry_run {
        return Ok(served_old);
    }
    let served = |obj: &Value| {
        conversion::serve(rt, obj, &ctx.conversions).unwrap_or_else(|_| rt.served(obj))
    };
    if rt.is("", "namespaces") {
        return Ok(strategy::delete_namespace(state, rt, old, options));
    }
    // Jobs and CronJobs orphan their dependents unless told otherwise.
    let default_policy = if rt.group == "batch" {
        "Orphan"
    } else {
        "Background"
    };
    let policy = options.policy().unwrap_or(default_policy);
    let mut fins = finalizers(&old);
    match policy {
        "Foreground" if !fins.iter().any(|f| f == "foregroundDeletion") => {
            fins.push("foregroundDeletion".into())
        }
        "Orphan" if !fins.iter().any(|f| f == "orphan") => fins.push("orphan".into()),
        _ => {}
    }
    if fins.is_empty() {
        let obj = remove(state, &key, old);
        return Ok(served(&obj));
    }
    // Finalizers keep the object; it is marked and removed when they are gone.
    let mut marked = old.clone();
    if marked.pointer("/metadata/deletionTimestamp").is_none() {
        set_meta(&mut marked, "deletionTimestamp", json!(now()));
        set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
    }
    set_finalizers(&mut marked, &fins);
    if marked != old {
        let rv = state.store.next_rv();
        set_meta(&mut marked, "resourceVersion", json!(rv.to_string()));
        state.store.put(key.clone(), marked.clone());
    }
    controllers::gc::collect(state);
    let current = state.store.get(&key);
    Ok(served(current.as_ref().unwrap_or(&marked)))
}

/// The delete's preconditions (uid, resourceVersion), and the namespaces that may not be
/// deleted.
fn check_preconditions(
    at: &ObjectRef<'_>,
    old: &Value,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let (rt, name) = (at.rt, at.name);
    let failed = |why: String| {
        let qualified = if rt.group.is_empty() {
            rt.kind.clone()
        } else {
            format!("{}.{}", rt.kind, rt.group)
        };
        let mut e = ApiError::conflict(&rt.group, &rt.kind, name, &why);
        e.message = format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}");
        e
    };
    let uid = old
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(want) = &options.uid
        && want != uid
    {
        return Err(failed(format!(
            "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )));
    }
    if let Some(want) = &options.resource_version
        && *want != rv_of(old).to_string()
    {
        return Err(failed(format!(
            "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({}). The object might have been modified",
            rv_of(old)
        )));
    }
    if rt.group.is_empty()
        && rt.plural == "namespaces"
        && matches!(name, "default" | "kube-system" | "kube-public")
    {
        return Err(ApiError::forbidden(
            "",
            "namespaces",
            name,
            "this namespace may not be deleted",
            Vec::new(),
        ));
    }
    Ok(())
}

/// Removes an object (its finalizers done) at a new version, and lets the controllers
/// react; the object as it was removed.
pub(crate) fn remove(state: &mut State, key: &ObjectKey, old: Value) -> Value {
    let rv = state.store.next_rv();
    let mut tombstone = old;
    set_meta(&mut tombstone, "resourceVersion", json!(rv.to_string()));
    state.store.remove(key, &tombstone);
    controllers::after_delete(state, &tombstone);
    tombstone
}
