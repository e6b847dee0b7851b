//! `managedFields` entries kept aside from an informer's cache as JSON text, for a controller
//! that extracts its own fields from cached objects at a fraction of the memory.
//!
//! k8s-openapi parses `fieldsV1` into a JSON tree of small maps: the sample's entry on a
//! Deployment is 497 bytes of JSON and 9.5 KB as a tree, more than the rest of the cached
//! Deployment. [`ManagedFieldsAside`], given to
//! [`FactoryBuilder::managed_fields_aside_for`](crate::FactoryBuilder::managed_fields_aside_for),
//! takes the entries of some managers off each object before it is cached and keeps them
//! as text, by object; [`ManagedFieldsAside::restore`] gives a cached object back with them,
//! for `extract_*`. The entries kept are those of the object's version in the cache: a
//! restore of another version (an object read elsewhere, or the cache replaced meanwhile)
//! gives the object without them, so extracting from it finds nothing owned, and a
//! controller comparing what it owns with what it wants applies again (a no-op on the
//! server when nothing changed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::Resource;

/// The `managedFields` entries of some managers, kept aside from a cache. Cheap to clone
/// (clones share what is kept).
#[derive(Clone)]
pub struct ManagedFieldsAside {
    managers: Arc<[String]>,
    kept: Arc<Mutex<HashMap<(String, String), Kept>>>,
}

/// One object's entries: the version they belong to, and the entries as JSON.
struct Kept {
    uid: Option<String>,
    resource_version: Option<String>,
    entries: Box<str>,
}

impl std::fmt::Debug for ManagedFieldsAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedFieldsAside")
            .field("managers", &self.managers)
            .field("objects", &self.len())
            .finish()
    }
}

impl ManagedFieldsAside {
    /// Keeps the entries of `managers` (every operation and subresource of theirs).
    pub fn new(managers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            managers: managers.into_iter().map(Into::into).collect(),
            kept: Arc::default(),
        }
    }

    /// Takes `obj`'s `managedFields` off it, keeping the entries of the managers aside: the
    /// transform the factory runs for the kind.
    pub fn take<K: Resource>(&self, obj: &mut K) {
        let meta = obj.meta_mut();
        let entries: Vec<ManagedFieldsEntry> = meta
            .managed_fields
            .take()
            .into_iter()
            .flatten()
            .filter(|e| {
                e.manager
                    .as_deref()
                    .is_some_and(|m| self.managers.iter().any(|k| k == m))
            })
            .collect();
        let key = key(obj);
        // Serializing the server's own entries cannot fail; if it did, nothing is kept and
        // an extract finds nothing owned, which costs one apply.
        let text = (!entries.is_empty())
            .then(|| serde_json::to_string(&entries).ok())
            .flatten();
        let mut kept = self.lock();
        match text {
            Some(text) => {
                let meta = obj.meta();
                kept.insert(
                    key,
                    Kept {
                        uid: meta.uid.clone(),
                        resource_version: meta.resource_version.clone(),
                        entries: text.into_boxed_str(),
                    },
                );
            }
            None => {
                kept.remove(&key);
            }
        }
    }

    /// `obj` with the entries kept for its version (same uid and resourceVersion), or
    /// without `managedFields` when none are.
    pub fn restore<K: Resource + Clone>(&self, obj: &K) -> K {
        let mut out = obj.clone();
        let entries = {
            let kept = self.lock();
            let meta = obj.meta();
            kept.get(&key(obj))
                .filter(|k| k.uid == meta.uid && k.resource_version == meta.resource_version)
                .and_then(|k| serde_json::from_str::<Vec<ManagedFieldsEntry>>(&k.entries).ok())
        };
        out.meta_mut().managed_fields = entries;
        out
    }

    /// Forgets what is kept for `obj` (the factory calls it when the object is deleted).
    pub fn forget<K: Resource>(&self, obj: &K) {
        let uid = obj.meta().uid.clone();
        let key = key(obj);
        let mut kept = self.lock();
        // A same-name object created since keeps its entries.
        if kept.get(&key).is_some_and(|k| k.uid == uid) {
            kept.remove(&key);
        }
    }

    /// How many objects have entries kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no object has entries kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), Kept>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn key<K: Resource>(obj: &K) -> (String, String) {
    let meta = obj.meta();
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    use serde_json::json;

    fn object(uid: &str, rv: &str) -> ConfigMap {
        let entry = |manager: &str| ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Apply".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(json!({"f:data": {"f:k": {}}}))),
            ..ManagedFieldsEntry::default()
        };
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("x".into());
        cm.metadata.namespace = Some("a".into());
        cm.metadata.uid = Some(uid.into());
        cm.metadata.resource_version = Some(rv.into());
        cm.metadata.managed_fields = Some(vec![entry("me"), entry("kubectl")]);
        cm
    }

    #[test]
    fn taken_off_and_restored_for_the_same_version_only() {
        let aside = ManagedFieldsAside::new(["me"]);
        let fresh = object("u1", "1");
        let mut cached = fresh.clone();
        aside.take(&mut cached);
        assert!(
            cached.metadata.managed_fields.is_none(),
            "off the cached object"
        );
        assert_eq!(aside.len(), 1);
        let restored = aside.restore(&cached);
        let mine = vec![fresh.metadata.managed_fields.clone().unwrap()[0].clone()];
        assert_eq!(restored.metadata.managed_fields, Some(mine));
        // Another version, or another object of the same name: nothing restored.
        assert!(
            aside
                .restore(&object("u1", "2"))
                .metadata
                .managed_fields
                .is_none()
        );
        assert!(
            aside
                .restore(&object("u2", "1"))
                .metadata
                .managed_fields
                .is_none()
        );
    }

    #[test]
    fn forgotten_on_delete_unless_the_name_was_reused_and_empty_entries_keep_nothing() {
        let aside = ManagedFieldsAside::new(["me"]);
        let mut old = object("u1", "1");
        aside.take(&mut old);
        let mut new = object("u2", "5");
        aside.take(&mut new);
        aside.forget(&old);
        assert_eq!(aside.len(), 1, "the new object's entries stay");
        aside.forget(&new);
        assert!(aside.is_empty());

        let other = ManagedFieldsAside::new(["someone-else"]);
        let mut cm = object("u1", "1");
        other.take(&mut cm);
        assert!(other.is_empty() && cm.metadata.managed_fields.is_none());
    }
}
