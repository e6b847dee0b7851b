//! Garbage collection through `ownerReferences`: background, foreground and orphan deletion.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::meta::{finalizers, now, owner_uids, remove_owner, set_finalizers, set_meta};
use crate::store::State;
use crate::store::objects::{ObjectKey, Store};

impl State {
    /// Garbage collection: dependents whose owners are all gone are deleted; owners being
    /// deleted in the foreground wait for their dependents; orphaning owners release them.
    pub fn collect_garbage(&mut self) {
        if !self.gc_enabled() || !self.store.may_need_gc() {
            return;
        }
        for _ in 0..64 {
            // Only objects with owners or being deleted take part; any other object is
            // an owner at most, and the store knows its uid.
            let uids: HashMap<String, (ObjectKey, Value)> = self
                .store
                .gc_candidates()
                .filter_map(|(k, v)| {
                    Some((v.pointer("/metadata/uid")?.as_str()?.to_owned(), (k, v)))
                })
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
                        self.bump_and_put(dkey, d);
                    }
                    self.drop_finalizer(key, owner, "orphan");
                    changed = true;
                    break;
                }
                if fins.iter().any(|f| f == "foregroundDeletion") {
                    if dependents.is_empty() {
                        self.drop_finalizer(key, owner, "foregroundDeletion");
                        changed = true;
                        break;
                    }
                    for (dkey, d) in dependents {
                        if d.pointer("/metadata/deletionTimestamp").is_none() {
                            self.start_delete(dkey, d, true);
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
                let live: Vec<&String> = owners.iter().filter(|o| self.store.has_uid(o)).collect();
                if live.is_empty() {
                    if dep.pointer("/metadata/deletionTimestamp").is_none() {
                        self.start_delete(key.clone(), dep.clone(), false);
                        changed = true;
                        break;
                    }
                } else if live.len() < owners.len() {
                    let mut d = dep.clone();
                    for gone in owners.iter().filter(|o| !self.store.has_uid(o)) {
                        remove_owner(&mut d, gone);
                    }
                    self.bump_and_put(key.clone(), d);
                    changed = true;
                    break;
                }
            }
            if !changed {
                return;
            }
        }
    }

    pub(crate) fn gc_enabled(&self) -> bool {
        self.gc
    }

    pub(crate) fn start_delete(&mut self, key: ObjectKey, obj: Value, foreground: bool) {
        let mut fins = finalizers(&obj);
        if foreground
            && !fins.iter().any(|f| f == "foregroundDeletion")
            && owned_by_anything(&self.store, &obj)
        {
            fins.push("foregroundDeletion".into());
        }
        if fins.is_empty() {
            self.remove_now(&key, obj);
        } else {
            let mut marked = obj;
            set_meta(&mut marked, "deletionTimestamp", json!(now()));
            set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
            set_finalizers(&mut marked, &fins);
            self.bump_and_put(key, marked);
        }
    }

    pub(crate) fn drop_finalizer(&mut self, key: &ObjectKey, obj: &Value, finalizer: &str) {
        let mut o = obj.clone();
        let fins: Vec<String> = finalizers(obj)
            .into_iter()
            .filter(|f| f != finalizer)
            .collect();
        set_finalizers(&mut o, &fins);
        if fins.is_empty() {
            self.remove_now(key, o);
        } else {
            self.bump_and_put(key.clone(), o);
        }
    }

    pub(crate) fn bump_and_put(&mut self, key: ObjectKey, mut obj: Value) {
        let rv = self.store.next_rv();
        set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
        self.store.put(key, obj);
    }
}

pub(crate) fn owned_by_anything(store: &Store, obj: &Value) -> bool {
    let uid = obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    store
        .gc_candidates()
        .any(|(_, d)| owner_uids(&d).iter().any(|o| o == uid))
}
