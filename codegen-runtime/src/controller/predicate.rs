//! Which updates of a controller's own kind queue it: controller-runtime's predicates, over
//! the old and the new object. Adds, deletes and resyncs always queue.

use std::sync::Arc;

use kube::Resource;

/// A test over an update: `(old, new)`.
pub type Predicate<K> = Arc<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// `metadata.generation` changed: the spec did (status writes and metadata edits do not
/// move it), controller-runtime's `GenerationChangedPredicate`.
pub fn generation_changed<K: Resource>() -> Predicate<K> {
    Arc::new(|old: &K, new: &K| old.meta().generation != new.meta().generation)
}

/// `metadata.labels` changed (`LabelChangedPredicate`).
pub fn labels_changed<K: Resource>() -> Predicate<K> {
    Arc::new(|old: &K, new: &K| old.meta().labels != new.meta().labels)
}

/// `metadata.annotations` changed (`AnnotationChangedPredicate`).
pub fn annotations_changed<K: Resource>() -> Predicate<K> {
    Arc::new(|old: &K, new: &K| old.meta().annotations != new.meta().annotations)
}

/// The object is being deleted now, or its finalizers changed: what a controller that runs
/// clean-up on deletion must see even when it filters by generation.
pub fn deletion_or_finalizers_changed<K: Resource>() -> Predicate<K> {
    Arc::new(|old: &K, new: &K| {
        old.meta().deletion_timestamp != new.meta().deletion_timestamp
            || old.meta().finalizers != new.meta().finalizers
    })
}

/// Either predicate holds (controller-runtime's `predicate.Or`).
pub fn or<K: 'static>(a: Predicate<K>, b: Predicate<K>) -> Predicate<K> {
    Arc::new(move |old: &K, new: &K| a(old, new) || b(old, new))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn predicates_compare_what_they_name() {
        let mut old = ConfigMap::default();
        old.metadata.generation = Some(1);
        let mut new = old.clone();
        assert!(!generation_changed()(&old, &new));
        new.metadata.labels = Some([("a".to_owned(), "b".to_owned())].into());
        assert!(labels_changed()(&old, &new));
        assert!(!generation_changed()(&old, &new));
        let either = or(generation_changed(), labels_changed());
        assert!(either(&old, &new));
        new.metadata.generation = Some(2);
        assert!(generation_changed()(&old, &new));
        assert!(!annotations_changed()(&old, &new));
        new.metadata.finalizers = Some(vec!["x".to_owned()]);
        assert!(deletion_or_finalizers_changed()(&old, &new));
    }
}
