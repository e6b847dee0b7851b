//! Garbage collection through `ownerReferences`: background, foreground and orphan deletion.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::api::Api;
use crate::meta::{finalizers, now, owner_uids, remove_owner, set_finalizers, set_meta};
use crate::store::State;
use crate::store::objects::{ObjectKey, Store};

/// Garbage collection: dependents whose owners are all gone are deleted; owners being
/// deleted in the foreground wait for their dependents; orphaning owners release them.
pub(crate) fn collect(state: &mut State) {
    if !state.gc || !state.store.may_need_gc() {
        return;
    }
    for _ in 0..64 {
        // Only objects with owners or being deleted take part; any other object is
        // an owner at most, and the store knows its uid.
        let uids: HashMap<String, (ObjectKey, Value)> = state
            .store
            .gc_candidates()
            .filter_map(|(k, v)| Some((v.pointer("/metadata/uid")?.as_str()?.to_owned(), (k, v))))
            .collect();
        let mut changed = false;
        // Owners being deleted: orphan or foreground.
        for (uid, (key, owner)) in &uids {
            if owner.pointer("/metadata/deletionTimestamp").is_none() {
                continue;
            }
            let fins = finalizers(owner);
            let dependents: Vec<(ObjectKey, Value)> = uids
                .values()
                .filter(|(_, d)| owner_uids(d).contains(uid))
                .cloned()
                .collect();
            if fins.iter().any(|f| f == "orphan") {
                for (dkey, mut d) in dependents {
                    remove_owner(&mut d, uid);
                    state.store.bump_and_put(dkey, d);
                }
                drop_finalizer(state, key, owner, "orphan");
                changed = true;
                break;
            }
            if fins.iter().any(|f| f == "foregroundDeletion") {
                if dependents.is_empty() {
                    drop_finalizer(state, key, owner, "foregroundDeletion");
                    changed = true;
                    break;
                }
                for (dkey, d) in dependents {
                    if d.pointer("/metadata/deletionTimestamp").is_none() {
                        start_delete(state, dkey, d, true);
                        changed = true;
                    }
                }
                if changed {
                    break;
                }
            }
        }
        if changed {
            continue;
        }
        // Dependents whose owners are gone.
        for (key, dep) in uids.values() {
            let owners = owner_uids(dep);
            if owners.is_empty() {
                continue;
            }
            let live: Vec<&String> = owners.iter().filter(|o| state.store.has_uid(o)).collect();
            if live.is_empty() {
                if dep.pointer("/metadata/deletionTimestamp").is_none() {
                    start_delete(state, key.clone(), dep.clone(), false);
                    changed = true;
                    break;
                }
            } else if live.len() < owners.len() {
                let mut d = dep.clone();
                for gone in owners.iter().filter(|o| !state.store.has_uid(o)) {
                    remove_owner(&mut d, gone);
                }
                state.store.bump_and_put(key.clone(), d);
                changed = true;
                break;
            }
        }
        if !changed {
            return;
        }
    }
}

/// Deletes a dependent as the garbage collector does: at once when nothing holds it, else
/// marked (with `foregroundDeletion` when it owns objects itself and `foreground`).
fn start_delete(state: &mut State, key: ObjectKey, obj: Value, foreground: bool) {
    let mut fins = finalizers(&obj);
    if foreground
        && !fins.iter().any(|f| f == "foregroundDeletion")
        && owned_by_anything(&state.store, &obj)
    {
        fins.push("foregroundDeletion".into());
    }
    if fins.is_empty() {
        Api::remove(state, &key, obj);
    } else {
        let mut marked = obj;
        set_meta(&mut marked, "deletionTimestamp", json!(now()));
        set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
        set_finalizers(&mut marked, &fins);
        state.store.bump_and_put(key, marked);
    }
}

/// Removes `finalizer` from an owner being deleted; it goes when none is left.
fn drop_finalizer(state: &mut State, key: &ObjectKey, obj: &Value, finalizer: &str) {
    let mut o = obj.clone();
    let fins: Vec<String> = finalizers(obj)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    set_finalizers(&mut o, &fins);
    if fins.is_empty() {
        Api::remove(state, key, o);
    } else {
        state.store.bump_and_put(key.clone(), o);
    }
}

/// Whether any object names `obj` as an owner.
fn owned_by_anything(store: &Store, obj: &Value) -> bool {
    let uid = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    store
        .gc_candidates()
        .any(|(_, d)| owner_uids(&d).iter().any(|o| o == uid))
}
