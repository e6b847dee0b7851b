//! [`TypedInformer`] and [`ScopedLister`]: what generated informers and listers are made
//! of, written once. A generated `FooInformer` names `TypedInformer<Foo, FooLister>`, and a
//! `FooLister` is a [`ScopedLister`] (or a newtype over one), whose scope decides whether it
//! looks objects up by name or by namespace first.

use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use kube::core::Selector;
use serde::de::DeserializeOwned;

use crate::client::scope::{Cluster, Namespaced};
use crate::informer::SharedInformer;
use crate::informer::factory::{ScopeApi, SharedInformerFactory};
use crate::informer::lister::{Lister, NamespaceLister, NotFound};

/// The objects of kind `K` in a lister's cache, with what scope `S` allows: `list` and
/// `by_index` always, `get(name)` for a cluster-scoped kind ([`Cluster`]) and
/// `namespace(ns)` for a namespaced one ([`Namespaced`]). A generated `FooLister` is this
/// type (cluster-scoped kinds) or a newtype over it that adds client-go's accessor
/// `foos(ns)` (namespaced kinds).
pub struct ScopedLister<K, S>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    lister: Lister<K>,
    scope: PhantomData<fn() -> S>,
}

impl<K, S> From<Lister<K>> for ScopedLister<K, S>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn from(lister: Lister<K>) -> Self {
        Self {
            lister,
            scope: PhantomData,
        }
    }
}

impl<K, S> Clone for ScopedLister<K, S>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn clone(&self) -> Self {
        Self::from(self.lister.clone())
    }
}

impl<K, S> Debug for ScopedLister<K, S>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Debug::fmt(&self.lister, f)
    }
}

impl<K, S> ScopedLister<K, S>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// Every cached object (all namespaces) whose labels `selector` matches, sorted by
    /// namespace and name. `&Selector::default()` matches everything.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.lister.list(selector)
    }

    /// The cached objects an informer index puts under `value`.
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.lister.by_index(index, value)
    }
}

impl<K> ScopedLister<K, Cluster>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// The object named `name`; a missing one is [`NotFound`].
    pub fn get(&self, name: &str) -> Result<Arc<K>, NotFound> {
        self.lister.get(name)
    }
}

impl<K> ScopedLister<K, Namespaced>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// The cached objects of `namespace`.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        self.lister.namespace(namespace)
    }
}

/// The shared informer of kind `K` in a factory, whose listers are `L`: what a generated
/// `FooInformer` names (`TypedInformer<Foo, FooLister>`). One watch and one cache per
/// factory, however many are made.
pub struct TypedInformer<K, L>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    informer: SharedInformer<K>,
    lister: PhantomData<fn() -> L>,
}

impl<K, L> Clone for TypedInformer<K, L>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn clone(&self) -> Self {
        Self {
            informer: self.informer.clone(),
            lister: PhantomData,
        }
    }
}

impl<K, L> Debug for TypedInformer<K, L>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Debug::fmt(&self.informer, f)
    }
}

impl<K, L> TypedInformer<K, L>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::Scope: ScopeApi,
    L: From<Lister<K>>,
{
    /// The informer of this kind in `factory`: the same one on every call.
    pub fn new(factory: &SharedInformerFactory) -> Self {
        Self {
            informer: factory.informer::<K>(),
            lister: PhantomData,
        }
    }

    /// The shared informer: event handlers, streams for `Controller`, sync state.
    pub fn informer(&self) -> &SharedInformer<K> {
        &self.informer
    }

    /// A lister over this informer's cache.
    pub fn lister(&self) -> L {
        L::from(self.informer.lister())
    }
}
