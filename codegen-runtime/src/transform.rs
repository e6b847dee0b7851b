//! What the [`SharedInformerFactory`](crate::SharedInformerFactory) does to objects before
//! they are cached: by default it drops `metadata.managedFields`, as controller-runtime's
//! `TransformStripManagedFields` does, then runs the kind's own transform.
//!
//! `managedFields` are often a third of a stored object or more, and only server-side apply
//! reads them. The one thing that changes for a controller is `extract_*` (which reads
//! them): on a cached object without them it finds nothing owned. A controller that
//! extracts from its cache keeps them for that kind
//! ([`FactoryBuilder::keep_managed_fields_for`](crate::FactoryBuilder::keep_managed_fields_for)),
//! or extracts from a GET.

use std::sync::Arc;

use kube::Resource;

use crate::informer::Transform;

/// Drops `metadata.managedFields`: the factory's default transform, usable on its own as
/// `InformerOptions::transform`.
pub fn drop_managed_fields<K: Resource>(obj: &mut K) {
    obj.meta_mut().managed_fields = None;
}

/// The transform an informer runs: `managedFields` dropped unless `keep`, then `own`.
pub(crate) fn with_default<K: Resource + 'static>(
    keep: bool,
    own: Option<Transform<K>>,
) -> Option<Transform<K>> {
    match (keep, own) {
        (true, own) => own,
        (false, None) => Some(Arc::new(drop_managed_fields::<K>)),
        (false, Some(own)) => Some(Arc::new(move |obj: &mut K| {
            drop_managed_fields(obj);
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
        with_default(false, Some(own)).unwrap()(&mut cm);
        assert_eq!(cm.metadata.name.as_deref(), Some("seen"));
        assert!(cm.metadata.managed_fields.is_none());
    }

    #[test]
    fn a_kind_that_keeps_them_runs_only_its_own_transform() {
        assert!(with_default::<ConfigMap>(true, None).is_none());
        let own: Transform<ConfigMap> = Arc::new(|cm: &mut ConfigMap| {
            cm.metadata.name = Some("seen".into());
        });
        let mut cm = with_fields();
        with_default(true, Some(own)).unwrap()(&mut cm);
        assert_eq!(cm.metadata.name.as_deref(), Some("seen"));
        assert!(cm.metadata.managed_fields.is_some());
    }
}
