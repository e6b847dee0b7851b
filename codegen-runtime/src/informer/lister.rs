//! Listers: read-only, cache-backed views of an informer, with namespace and label queries.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use kube::core::{Selector, SelectorExt};
use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::informer::{NAMESPACE_INDEX, SharedInformer};

/// A lookup for an object the cache does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// `plural.group`.
    pub resource: String,
    /// Namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(
                f,
                "{} \"{}\" not found in namespace \"{ns}\" (in the informer cache)",
                self.resource, self.name
            ),
            None => write!(
                f,
                "{} \"{}\" not found (in the informer cache)",
                self.resource, self.name
            ),
        }
    }
}

impl std::error::Error for NotFound {}

/// All objects of a kind in the cache. Objects are shared (`Arc`) and must not be mutated:
/// clone one to change it.
pub struct Lister<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    informer: SharedInformer<K>,
}

impl<K> Clone for Lister<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn clone(&self) -> Self {
        Self {
            informer: self.informer.clone(),
        }
    }
}

impl<K> Debug for Lister<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister")
            .field("informer", &self.informer)
            .finish()
    }
}

fn sorted<K: Resource>(mut objs: Vec<Arc<K>>) -> Vec<Arc<K>> {
    objs.sort_by_key(|o| (o.namespace(), o.name_any()));
    objs
}

impl<K> Lister<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    pub(crate) fn new(informer: SharedInformer<K>) -> Self {
        Self { informer }
    }

    fn resource(&self) -> String {
        self.informer.resource()
    }

    /// Every cached object (all namespaces) whose labels `selector` matches, sorted by
    /// namespace and name. `&Selector::default()` matches everything.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        sorted(
            self.informer
                .store()
                .state()
                .into_iter()
                .filter(|o| selector.matches(o.labels()))
                .collect(),
        )
    }

    /// A cluster-scoped object by name.
    pub fn get(&self, name: &str) -> Result<Arc<K>, NotFound> {
        self.informer
            .store()
            .get(&self.informer.object_ref(None, name))
            .ok_or_else(|| NotFound {
                resource: self.resource(),
                namespace: None,
                name: name.to_owned(),
            })
    }

    /// The objects of one namespace.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            lister: self.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects an informer index puts under `value`.
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.informer.by_index(index, value)
    }

    /// The underlying reflector store.
    pub fn store(&self) -> Store<K> {
        self.informer.store()
    }
}

/// The cached objects of one namespace.
pub struct NamespaceLister<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    lister: Lister<K>,
    namespace: String,
}

impl<K> Debug for NamespaceLister<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K> NamespaceLister<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// An object of this namespace by name; missing is [`NotFound`].
    pub fn get(&self, name: &str) -> Result<Arc<K>, NotFound> {
        self.lister
            .store()
            .get(&self.lister.informer.object_ref(Some(&self.namespace), name))
            .ok_or_else(|| NotFound {
                resource: self.lister.resource(),
                namespace: Some(self.namespace.clone()),
                name: name.to_owned(),
            })
    }

    /// The objects of this namespace whose labels `selector` matches, sorted by name.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.lister
            .by_index(NAMESPACE_INDEX, &self.namespace)
            .into_iter()
            .filter(|o| selector.matches(o.labels()))
            .collect()
    }
}
