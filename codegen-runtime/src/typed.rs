//! [`TypedClient`], [`TypedInformer`] and [`ScopedLister`]: what generated clients,
//! informers and listers are made of, written once.
//!
//! A generated `FooClient<S>` is a newtype over `TypedClient<Foo, S, FooVerbs>` that
//! dereferences to it, as client-go's typed clients embed `gentype.ClientWithList`: the
//! generated code per kind is its constructors, its `+genclient:method` extension methods
//! and one line per verb, and this module holds the methods. Two type parameters decide
//! which methods a client has:
//! - `S`, the [scope](crate::scope): verbs on one object by name need [`ByName`]
//!   (`Namespaced` or `Cluster`), so `FooClient<AllNamespaces>` can only list and watch;
//! - `V`, the kind's verb set: a type the generator declares next to the client
//!   (`FooVerbs`) and marks with one trait of [`verbs`] per verb the `+genclient` markers
//!   allow. The marks go on this local type rather than on `Foo`, so built-in kinds
//!   (`+genclient` on `type Deployment = k8s_openapi::...`) get them too.
//!
//! A verb the markers leave out is a compile error that names it:
//! ``the trait bound `FooVerbs: verbs::Create` is not satisfied``.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::sync::Arc;

use either::Either;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{
    Api, DeleteParams, ListParams, ObjectList, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::{Selector, Status};
use kube::{Client, Error, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::client::{FieldManager, Handle};
use crate::factory::{ScopeApi, SharedInformerFactory};
use crate::informer::SharedInformer;
use crate::lister::{Lister, NamespaceLister, NotFound};
use crate::scope::{AllNamespaces, ByName, Cluster, Namespaced};

/// The verbs a kind's client may have: the generator implements one of these traits on
/// the kind's verb set (`FooVerbs`) for each verb its `+genclient` markers allow.
pub mod verbs {
    use std::marker::PhantomData;

    use serde::Serialize;

    use crate::apply::ObjectConfiguration;

    /// `create`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `create`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Create {}
    /// `update`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `update`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Update {}
    /// `updateStatus`: the kind has a status subresource.
    #[diagnostic::on_unimplemented(
        message = "this client has no `update_status`: `{Self}` leaves it out",
        note = "it needs a status subresource, and the kind's `+genclient` markers decide its verbs"
    )]
    pub trait UpdateStatus {}
    /// `delete`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `delete`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Delete {}
    /// `deleteCollection`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `delete_collection`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait DeleteCollection {}
    /// `get` (and `get_opt`).
    #[diagnostic::on_unimplemented(
        message = "this client has no `get`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Get {}
    /// `list`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `list`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait List {}
    /// `watch`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `watch`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Watch {}
    /// `patch`.
    #[diagnostic::on_unimplemented(
        message = "this client has no `patch`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Patch {}
    /// `apply` of a whole object (`apply_object`).
    #[diagnostic::on_unimplemented(
        message = "this client has no `apply_object`: `{Self}` leaves it out",
        note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
    )]
    pub trait Apply {}
    /// Not a verb: the kind has an apply configuration (`#[derive(ApplyConfiguration)]` or
    /// `+kubebuilder:ac:generate=true`), which `apply` and `apply_status` take.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` has no apply configuration: this client applies whole objects only",
        note = "`+kubebuilder:ac:generate=true` on the kind (or `#[derive(ApplyConfiguration)]`) gives it one"
    )]
    pub trait ApplyConfigured {
        /// The kind's apply configuration.
        type Configuration: ObjectConfiguration + std::fmt::Debug;
    }
    /// `applyStatus` of a whole status (`apply_status_object`).
    #[diagnostic::on_unimplemented(
        message = "this client has no `apply_status_object`: `{Self}` leaves it out",
        note = "it needs a status subresource, and the kind's `+genclient` markers decide its verbs"
    )]
    pub trait ApplyStatus {
        /// The kind's status type.
        type Status: Serialize;
    }
    /// The kind has a scale subresource (`get_scale`, `update_scale`, `patch_scale` with
    /// `get`, `update` and `patch`).
    #[diagnostic::on_unimplemented(
        message = "this client has no scale subresource: `{Self}` leaves it out",
        note = "`#[kube(scale = ...)]` or `+kubebuilder:subresource:scale` enables it"
    )]
    pub trait Scale {}

    /// The verb set of a kind with every verb `+genclient` gives by default, as one type:
    /// most kinds' `FooVerbs` is `Every<WithStatus<FooStatus>,
    /// WithConfiguration<FooApplyConfiguration>, NoScale>` rather than eleven `impl`s.
    /// [`NoStatus`] leaves out `update_status` and `apply_status*`, [`NoConfiguration`] the
    /// apply-configuration forms of `apply`, and [`NoScale`] the scale subresource.
    pub struct Every<Status, Configuration, Scale>(
        PhantomData<fn() -> Status>,
        PhantomData<fn() -> Configuration>,
        PhantomData<fn() -> Scale>,
    );

    /// The kind's status subresource holds `T`.
    pub struct WithStatus<T>(PhantomData<fn() -> T>);
    /// The kind has no status subresource (or `+genclient:noStatus`).
    pub enum NoStatus {}
    /// The kind's apply configuration is `T`.
    pub struct WithConfiguration<T>(PhantomData<fn() -> T>);
    /// The kind has no apply configuration.
    pub enum NoConfiguration {}
    /// The kind has a scale subresource.
    pub enum WithScale {}
    /// The kind has no scale subresource.
    pub enum NoScale {}

    impl<St, Ac, Sc> Create for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> Update for Every<St, Ac, Sc> {}
    impl<T, Ac, Sc> UpdateStatus for Every<WithStatus<T>, Ac, Sc> {}
    impl<St, Ac, Sc> Delete for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> DeleteCollection for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> Get for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> List for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> Watch for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> Patch for Every<St, Ac, Sc> {}
    impl<St, Ac, Sc> Apply for Every<St, Ac, Sc> {}
    impl<T: Serialize, Ac, Sc> ApplyStatus for Every<WithStatus<T>, Ac, Sc> {
        type Status = T;
    }
    impl<St, T, Sc> ApplyConfigured for Every<St, WithConfiguration<T>, Sc>
    where
        T: ObjectConfiguration + std::fmt::Debug,
    {
        type Configuration = T;
    }
    impl<St, Ac> Scale for Every<St, Ac, WithScale> {}
}

/// The typed client of kind `K` in scope `S` with the verbs of `V`: what a generated
/// client dereferences to. Each scope has its constructor, so a client's scope always says
/// what its requests reach.
pub struct TypedClient<K, S, V> {
    handle: Handle<K>,
    marks: PhantomData<fn() -> (S, V)>,
}

impl<K, S, V> TypedClient<K, S, V> {
    fn from_handle(handle: Handle<K>) -> Self {
        Self {
            handle,
            marks: PhantomData,
        }
    }

    /// The handle, for `+genclient:method` extension methods.
    #[doc(hidden)]
    pub fn __handle(&self) -> &Handle<K> {
        &self.handle
    }
}

impl<K, V> TypedClient<K, Namespaced, V>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
{
    /// A client for the objects of `K` in `namespace`.
    pub fn namespaced(client: Client, namespace: &str, field_manager: FieldManager) -> Self {
        Self::from_handle(Handle::namespaced(client, namespace, field_manager))
    }
}

impl<K, V> TypedClient<K, AllNamespaces, V>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
{
    /// A client for the objects of `K` in every namespace: it can only list and watch.
    pub fn all_namespaces(client: Client, field_manager: FieldManager) -> Self {
        Self::from_handle(Handle::all(client, field_manager))
    }
}

impl<K, V> TypedClient<K, Cluster, V>
where
    K: Resource<DynamicType = (), Scope = ClusterResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
{
    /// A client for the objects of a cluster-scoped `K`.
    pub fn cluster(client: Client, field_manager: FieldManager) -> Self {
        Self::from_handle(Handle::all(client, field_manager))
    }
}

impl<K: Clone, S, V> Clone for TypedClient<K, S, V> {
    fn clone(&self) -> Self {
        Self::from_handle(self.handle.clone())
    }
}

impl<K: Resource, S, V> Debug for TypedClient<K, S, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Debug::fmt(&self.handle, f)
    }
}

impl<K, S: ByName, V> TypedClient<K, S, V>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    /// Creates an object (`POST`).
    pub fn create<'a>(
        &'a self,
        obj: &'a K,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Create,
    {
        self.handle.create(obj, pp)
    }

    /// Replaces an object, named by its `metadata.name` (`PUT`).
    pub fn update<'a>(
        &'a self,
        obj: &'a K,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Update,
    {
        self.handle.update(obj, pp)
    }

    /// Replaces the status of an object, named by its `metadata.name` (`PUT .../status`).
    pub fn update_status<'a>(
        &'a self,
        obj: &'a K,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::UpdateStatus,
    {
        self.handle.update_status(obj, pp)
    }

    /// Deletes an object: the object while finalizers keep it, or the server's status once
    /// it is gone.
    pub fn delete<'a>(
        &'a self,
        name: &'a str,
        dp: &'a DeleteParams,
    ) -> impl Future<Output = Result<Either<K, Status>, Error>> + 'a
    where
        V: verbs::Delete,
    {
        self.handle.delete(name, dp)
    }

    /// Deletes every object that `lp` selects.
    pub fn delete_collection<'a>(
        &'a self,
        dp: &'a DeleteParams,
        lp: &'a ListParams,
    ) -> impl Future<Output = Result<Either<ObjectList<K>, Status>, Error>> + 'a
    where
        V: verbs::DeleteCollection,
    {
        self.handle.delete_collection(dp, lp)
    }

    /// Gets an object by name; a missing object is an error.
    pub fn get<'a>(&'a self, name: &'a str) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Get,
    {
        self.handle.get(name)
    }

    /// Gets an object by name; a missing object is `None`.
    pub fn get_opt<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Future<Output = Result<Option<K>, Error>> + 'a
    where
        V: verbs::Get,
    {
        self.handle.get_opt(name)
    }

    /// Patches an object (merge, JSON, strategic merge or apply patch).
    pub fn patch<'a, P: Serialize + Debug>(
        &'a self,
        name: &'a str,
        pp: &'a PatchParams,
        patch: &'a Patch<P>,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Patch,
    {
        self.handle.patch(name, pp, patch)
    }

    /// Server-side applies an apply configuration with this client's field manager, which
    /// then owns exactly the fields it sets.
    pub fn apply<'a>(
        &'a self,
        config: &'a <V as verbs::ApplyConfigured>::Configuration,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Apply + verbs::ApplyConfigured,
    {
        self.handle.apply_configuration(config)
    }

    /// Server-side applies a whole object with this client's field manager, which then
    /// owns every field it serializes (prefer an apply configuration).
    pub fn apply_object<'a>(&'a self, obj: &'a K) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Apply,
    {
        self.handle.apply(obj)
    }

    /// Server-side applies an apply configuration to the status: this client's field
    /// manager then owns exactly the status fields it sets.
    pub fn apply_status<'a>(
        &'a self,
        config: &'a <V as verbs::ApplyConfigured>::Configuration,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::ApplyStatus + verbs::ApplyConfigured,
    {
        self.handle.apply_status_configuration(config)
    }

    /// Server-side applies the status of the object named `name` (a whole status), and
    /// nothing else.
    pub fn apply_status_object<'a>(
        &'a self,
        name: &'a str,
        status: &'a <V as verbs::ApplyStatus>::Status,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::ApplyStatus,
    {
        self.handle.apply_status(name, status)
    }

    /// Gets the scale subresource.
    pub fn get_scale<'a>(&'a self, name: &'a str) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Get,
    {
        self.handle.get_scale(name)
    }

    /// Replaces the scale subresource.
    pub fn update_scale<'a>(
        &'a self,
        name: &'a str,
        scale: &'a Scale,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Update,
    {
        self.handle.update_scale(name, scale, pp)
    }

    /// Patches the scale subresource.
    pub fn patch_scale<'a, P: Serialize + Debug>(
        &'a self,
        name: &'a str,
        pp: &'a PatchParams,
        patch: &'a Patch<P>,
    ) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Patch,
    {
        self.handle.patch_scale(name, pp, patch)
    }
}

impl<K, S, V> TypedClient<K, S, V>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    /// Lists the objects that `lp` selects.
    pub fn list<'a>(
        &'a self,
        lp: &'a ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + 'a
    where
        V: verbs::List,
    {
        self.handle.list(lp)
    }

    /// Watches objects from `resource_version`; prefer an informer for caches.
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<impl futures::Stream<Item = Result<WatchEvent<K>, Error>> + use<K, S, V>, Error>
    where
        V: verbs::Watch,
    {
        self.handle.watch(wp, resource_version).await
    }

    /// The underlying `kube::Api`, for anything this client does not cover.
    pub fn api(&self) -> &Api<K> {
        self.handle.api()
    }

    /// The field manager used by server-side apply.
    pub fn field_manager(&self) -> &FieldManager {
        self.handle.field_manager()
    }
}

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
