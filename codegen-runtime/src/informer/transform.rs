//! What the [`SharedInformerFactory`](crate::SharedInformerFactory) does to objects before
//! they are cached: by default it drops `metadata.managedFields`, as controller-runtime's
//! `TransformStripManagedFields` does, then runs the kind's own transform.
//!
//! `managedFields` are often a third of a stored object or more, and only server-side apply
//! reads them. The one thing that changes for a controller is `extract_*` (which reads
//! them): on a cached object without them it finds nothing owned. A controller that
//! extracts from its cache keeps them for that kind
//! ([`FactoryBuilder::keep_managed_fields_for`](crate::FactoryBuilder::keep_managed_fields_for)),
//! or only its own manager's entries, which is all `extract_*` reads
//! ([`FactoryBuilder::keep_managed_fields_of`](crate::FactoryBuilder::keep_managed_fields_of)),
//! or extracts from a GET.
//!
//! A kind whose `managedFields` are dropped is also decoded without them
//! ([`decode`](crate::informer::decode)): their text is stepped over and never built, so the cache
//! does not fill with pages half used by trees made only to be thrown away.

use std::sync::Arc;

use kube::Resource;

use crate::informer::Transform;

/// Drops `metadata.managedFields`: the factory's default transform, usable on its own as
/// `InformerOptions::transform`.
pub fn drop_managed_fields<K: Resource>(obj: &mut K) {
    obj.meta_mut().managed_fields = None;
}

/// Keeps only the `managedFields` entries whose manager is one of `managers` (and drops
/// the field when none is left, as the server omits an empty list).
pub fn keep_managers<K: Resource>(obj: &mut K, managers: &[String]) {
    let meta = obj.meta_mut();
    if let Some(entries) = &mut meta.managed_fields {
        entries.retain(|e| {
            e.manager
                .as_deref()
                .is_some_and(|m| managers.iter().any(|k| k == m))
        });
        if entries.is_empty() {
            meta.managed_fields = None;
        }
    }
}

/// How much of `managedFields` an informer caches.
pub(crate) enum Keep {
    /// Nothing: the default.
    None,
    /// Every entry.
    All,
    /// The entries of these managers.
    Managers(Arc<[String]>),
    /// None on the object; some managers' entries kept aside.
    Aside(crate::informer::managed_aside::ManagedFieldsAside),
}

/// The transform an informer runs: `managedFields` cut down as `keep` says, then `own`.
pub(crate) fn with_default<K: Resource + 'static>(
    keep: Keep,
    own: Option<Transform<K>>,
) -> Option<Transform<K>> {
    let cut: Transform<K> = match keep {
        Keep::All => return own,
        Keep::None => Arc::new(drop_managed_fields::<K>),
        Keep::Managers(managers) => Arc::new(move |obj: &mut K| keep_managers(obj, &managers)),
        Keep::Aside(aside) => Arc::new(move |obj: &mut K| aside.take(obj)),
    };
    match own {
        None => Some(cut),
        Some(own) => Some(Arc::new(move |obj: &mut K| {
            cut(obj);
            own(obj);
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    fn with_fields() -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            ..ManagedFieldsEntry::default()
        }]);
        cm
    }

    #[test]
    fn the_default_drops_managed_fields_before_the_kinds_own_transform() {
        let own: Transform<ConfigMap> = Arc::new(|cm: &mut ConfigMap| {
            assert!(cm.metadata.managed_fields.is_none(), "dropped first");
            cm.metadata.name = Some("seen".into());
        });
        let mut cm = with_fields();
        with_default(Keep::None, Some(own)).unwrap()(&mut cm);
        assert_eq!(cm.metadata.name.as_deref(), Some("seen"));
        assert!(cm.metadata.managed_fields.is_none());
    }

    #[test]
    fn a_kind_that_keeps_them_runs_only_its_own_transform() {
        assert!(with_default::<ConfigMap>(Keep::All, None).is_none());
        let own: Transform<ConfigMap> = Arc::new(|cm: &mut ConfigMap| {
            cm.metadata.name = Some("seen".into());
        });
        let mut cm = with_fields();
        with_default(Keep::All, Some(own)).unwrap()(&mut cm);
        assert_eq!(cm.metadata.name.as_deref(), Some("seen"));
        assert!(cm.metadata.managed_fields.is_some());
    }

    #[test]
    fn keeping_some_managers_drops_the_other_entries_then_runs_the_kinds_own() {
        let entry = |manager: &str, operation: &str| ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some(operation.into()),
            ..ManagedFieldsEntry::default()
        };
        let mut cm = ConfigMap::default();
        cm.metadata.managed_fields = Some(vec![
            entry("kube-controller-manager", "Update"),
            entry("me", "Apply"),
            entry("kubectl", "Update"),
            entry("me", "Update"),
        ]);
        let own: Transform<ConfigMap> = Arc::new(|cm: &mut ConfigMap| {
            assert_eq!(cm.metadata.managed_fields.as_ref().map(Vec::len), Some(2));
            cm.metadata.name = Some("seen".into());
        });
        let keep = Keep::Managers(Arc::from(vec!["me".to_owned()]));
        with_default(keep, Some(own)).unwrap()(&mut cm);
        assert_eq!(cm.metadata.name.as_deref(), Some("seen"));
        let kept: Vec<_> = cm
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .map(|e| {
                (
                    e.manager.as_deref().unwrap(),
                    e.operation.as_deref().unwrap(),
                )
            })
            .collect();
        assert_eq!(kept, [("me", "Apply"), ("me", "Update")]);

        // None of theirs: the field goes, as the server leaves it out when empty.
        let mut other = with_fields();
        keep_managers(&mut other, &["me".to_owned()]);
        assert!(other.metadata.managed_fields.is_none());
    }
}
