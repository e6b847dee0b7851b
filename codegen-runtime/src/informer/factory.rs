//! [`SharedInformerFactory`]: one informer per resource type, shared by every controller in
//! the process, with one place to start them, wait for their caches and shut them down.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::discovery::Scope;
use kube::runtime::watcher;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use crate::informer::{InformerOptions, SharedInformer, Transform};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the factory needs from any informer, whatever its type.
trait AnyInformer: Send + Sync {
    fn name(&self) -> String;
    fn watch_errors(&self) -> u64;
    fn decode_errors(&self) -> u64;
    fn start(&self);
    fn wait(&self, timeout: Duration) -> BoxFuture<'_, bool>;
    fn shutdown(&self) -> BoxFuture<'_, ()>;
    fn as_any(&self) -> &dyn Any;
}

impl<K> AnyInformer for SharedInformer<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn name(&self) -> String {
        SharedInformer::name(self).to_owned()
    }

    fn watch_errors(&self) -> u64 {
        SharedInformer::watch_errors(self)
    }

    fn decode_errors(&self) -> u64 {
        SharedInformer::decode_errors(self)
    }
    fn start(&self) {
        SharedInformer::start(self);
    }
    fn wait(&self, timeout: Duration) -> BoxFuture<'_, bool> {
        Box::pin(self.wait_for_sync(timeout))
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(SharedInformer::shutdown(self))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// How to build an `Api<K>` for a scope: namespaced kinds honour the factory's namespace.
pub trait ScopeApi: Sized + 'static {
    /// The `Api` an informer of `K` watches.
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>;
}

impl ScopeApi for NamespaceResourceScope {
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl ScopeApi for ClusterResourceScope {
    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        Api::all(client)
    }
}

/// Builds a [`SharedInformerFactory`].
pub struct FactoryBuilder {
    client: Client,
    namespace: Option<String>,
    watcher: watcher::Config,
    default_resync: Option<Duration>,
    resync: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    managed_fields: KeepManagedFields,
    backoff: crate::informer::WatchBackoff,
}

/// Which informers keep `managedFields` in their cache, whole or some managers' entries
/// (all others drop them).
#[derive(Default)]
struct KeepManagedFields {
    all: bool,
    kinds: HashSet<TypeId>,
    managers: HashMap<TypeId, Arc<[String]>>,
    aside: HashMap<TypeId, crate::informer::managed_aside::ManagedFieldsAside>,
}

impl KeepManagedFields {
    fn keeps<K: 'static>(&self) -> crate::informer::transform::Keep {
        let kind = TypeId::of::<K>();
        if self.all || self.kinds.contains(&kind) {
            crate::informer::transform::Keep::All
        } else if let Some(managers) = self.managers.get(&kind) {
            crate::informer::transform::Keep::Managers(managers.clone())
        } else if let Some(aside) = self.aside.get(&kind) {
            crate::informer::transform::Keep::Aside(aside.clone())
        } else {
            crate::informer::transform::Keep::None
        }
    }
}

impl FactoryBuilder {
    /// The wait after a failed list or watch ([`WatchBackoff`](crate::informer::WatchBackoff):
    /// 200 ms doubling to 5 s by default, with jitter; a 410 Gone re-lists at once).
    #[must_use]
    pub fn watch_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.backoff = crate::informer::WatchBackoff { initial, max };
        self
    }

    /// Watch namespaced kinds in `namespace` only (cluster-scoped kinds are unaffected).
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Watch only objects whose labels match (`app=web,tier in (a,b)`).
    #[must_use]
    pub fn label_selector(mut self, selector: &str) -> Self {
        self.watcher = self.watcher.labels(selector);
        self
    }

    /// Watch only objects whose fields match (`metadata.name=x`).
    #[must_use]
    pub fn field_selector(mut self, selector: &str) -> Self {
        self.watcher = self.watcher.fields(selector);
        self
    }

    /// Any other watcher setting (page size, streaming lists, ...); selectors set above are kept.
    #[must_use]
    pub fn watcher_config(mut self, f: impl FnOnce(watcher::Config) -> watcher::Config) -> Self {
        self.watcher = f(self.watcher);
        self
    }

    /// Resync every informer this often (periodic `on_update(obj, obj)` for every object).
    #[must_use]
    pub fn default_resync(mut self, period: Duration) -> Self {
        self.default_resync = Some(period);
        self
    }

    /// Resync the informer of `K` at its own period.
    #[must_use]
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.resync.insert(TypeId::of::<K>(), period);
        self
    }

    /// Change every `K` before it is cached (to drop more fields and save memory); it runs
    /// after the default drop of `managedFields`.
    #[must_use]
    pub fn transform_for<K: 'static>(mut self, f: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        let transform: Transform<K> = Arc::new(f);
        self.transforms
            .insert(TypeId::of::<K>(), Box::new(transform));
        self
    }

    /// Cache `K` with its `managedFields`, which the factory drops from every kind by
    /// default (see [`transform`](crate::informer::transform)): for a controller that calls
    /// `extract_*` on objects from `K`'s lister. `K` is the cached type:
    /// `PartialObjectMeta<Pod>` for the metadata-only informer of Pods, `DynamicObject` for
    /// every informer of a kind known at run time.
    #[must_use]
    pub fn keep_managed_fields_for<K: 'static>(mut self) -> Self {
        self.managed_fields.kinds.insert(TypeId::of::<K>());
        self
    }

    /// Cache `K` with only the `managedFields` entries of `managers` (every operation and
    /// subresource of theirs), dropping the other managers' entries: what `extract_*` with
    /// one of these managers needs, at a fraction of the memory (each entry is a parsed
    /// JSON tree). A controller that extracts its own fields passes its field manager. A
    /// later call for the same `K` replaces the list; [`keep_managed_fields_for`]
    /// (or [`keep_managed_fields`]) wins over it.
    ///
    /// [`keep_managed_fields_for`]: FactoryBuilder::keep_managed_fields_for
    /// [`keep_managed_fields`]: FactoryBuilder::keep_managed_fields
    #[must_use]
    pub fn keep_managed_fields_of<K: 'static>(
        mut self,
        managers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let managers: Arc<[String]> = managers.into_iter().map(Into::into).collect();
        self.managed_fields
            .managers
            .insert(TypeId::of::<K>(), managers);
        self
    }

    /// Cache `K` without `managedFields`, the entries of `aside`'s managers kept aside as JSON
    /// text (see [`managed_aside`](crate::informer::managed_aside)): about a tenth of their memory as a
    /// parsed tree. `aside.restore(&cached)` gives a cached object back with them, for
    /// `extract_*`. Entries of deleted objects are forgotten. [`keep_managed_fields_of`]
    /// and [`keep_managed_fields_for`] win over it.
    ///
    /// [`keep_managed_fields_of`]: FactoryBuilder::keep_managed_fields_of
    /// [`keep_managed_fields_for`]: FactoryBuilder::keep_managed_fields_for
    #[must_use]
    pub fn managed_fields_aside_for<K: 'static>(
        mut self,
        aside: crate::informer::managed_aside::ManagedFieldsAside,
    ) -> Self {
        self.managed_fields.aside.insert(TypeId::of::<K>(), aside);
        self
    }

    /// Cache every kind with its `managedFields` (the factory's behaviour before it dropped
    /// them by default).
    #[must_use]
    pub fn keep_managed_fields(mut self) -> Self {
        self.managed_fields.all = true;
        self
    }

    /// The factory.
    pub fn build(self) -> SharedInformerFactory {
        SharedInformerFactory {
            inner: Arc::new(FactoryInner {
                client: self.client,
                namespace: self.namespace,
                watcher: self.watcher,
                default_resync: self.default_resync,
                resync: self.resync,
                transforms: self.transforms,
                managed_fields: self.managed_fields,
                backoff: self.backoff,
                informers: Mutex::new(BTreeMap::new()),
            }),
        }
    }
}

struct FactoryInner {
    client: Client,
    namespace: Option<String>,
    watcher: watcher::Config,
    default_resync: Option<Duration>,
    resync: HashMap<TypeId, Duration>,
    transforms: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    managed_fields: KeepManagedFields,
    backoff: crate::informer::WatchBackoff,
    /// By resource (`group/version/plural`) and cached type: the full, metadata-only and
    /// encoded informers of a kind are three, whichever accessor asks for them.
    informers: Mutex<BTreeMap<(String, TypeId), Arc<dyn AnyInformer>>>,
}

/// One informer per resource type for the whole process. Cheap to clone.
///
/// `informer::<K>()` returns the same informer on every call. Consumers may register
/// handlers and streams before or after [`SharedInformerFactory::start`]: late ones first
/// receive the cached objects, so no registration order can lose events.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<FactoryInner>,
}

impl Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.informers().iter().map(|i| i.name()).collect();
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.inner.namespace)
            .field("informers", &names)
            .finish()
    }
}

impl SharedInformerFactory {
    /// A factory over every namespace, without resync.
    pub fn new(client: Client) -> Self {
        Self::builder(client).build()
    }

    /// A factory with options.
    pub fn builder(client: Client) -> FactoryBuilder {
        FactoryBuilder {
            client,
            namespace: None,
            watcher: watcher::Config::default(),
            default_resync: None,
            resync: HashMap::new(),
            transforms: HashMap::new(),
            managed_fields: KeepManagedFields::default(),
            backoff: crate::informer::WatchBackoff::default(),
        }
    }

    /// Whether `other` is a clone of this factory.
    pub fn same_as(&self, other: &SharedInformerFactory) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The client the informers watch with.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The list and watch errors each informer has met, by informer name
    /// (`foos.samplecontroller.k8s.io/v1alpha1`), for metrics.
    pub fn watch_errors(&self) -> Vec<(String, u64)> {
        self.informers()
            .iter()
            .map(|i| (i.name(), i.watch_errors()))
            .collect()
    }

    /// The objects each informer could not decode, by informer name, for metrics.
    pub fn decode_errors(&self) -> Vec<(String, u64)> {
        self.informers()
            .iter()
            .map(|i| (i.name(), i.decode_errors()))
            .collect()
    }

    fn informers(&self) -> Vec<Arc<dyn AnyInformer>> {
        self.inner
            .informers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// The options of the informer caching `K`: the factory's watcher settings, `K`'s
    /// resync period and transform (after the default one).
    pub(crate) fn options<K: Resource + 'static>(&self) -> InformerOptions<K> {
        let own = self
            .inner
            .transforms
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<Transform<K>>())
            .cloned();
        let keep = self.inner.managed_fields.keeps::<K>();
        let skip_managed_fields = matches!(keep, crate::informer::transform::Keep::None);
        let transform = crate::informer::transform::with_default(keep, own);
        InformerOptions {
            watcher: self.inner.watcher.clone(),
            resync: self
                .inner
                .resync
                .get(&TypeId::of::<K>())
                .copied()
                .or(self.inner.default_resync),
            transform,
            skip_managed_fields,
            backoff: self.inner.backoff,
        }
    }

    /// The informer of `K`: the same one on every call.
    pub fn informer<K>(&self) -> SharedInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
        K::Scope: ScopeApi,
    {
        let key = resource_key(&K::group(&()), &K::version(&()), &K::plural(&()));
        self.get_or_insert(key, || {
            self.forgetting_aside(SharedInformer::new(self.api::<K>(), self.options::<K>()))
        })
    }

    /// `informer`, which forgets the entries kept aside for a deleted object when `K`'s
    /// managedFields are kept aside.
    pub(crate) fn forgetting_aside<K>(&self, informer: SharedInformer<K>) -> SharedInformer<K>
    where
        K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
        K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
    {
        if let Some(aside) = self.inner.managed_fields.aside.get(&TypeId::of::<K>()) {
            let aside = aside.clone();
            informer.add_event_handler(
                crate::Handlers::new().on_delete(move |obj: &Arc<K>| aside.forget(&**obj)),
            );
        }
        informer
    }

    /// The informer under `key`, made by `make` on first use.
    pub(crate) fn get_or_insert<K>(
        &self,
        key: String,
        make: impl FnOnce() -> SharedInformer<K>,
    ) -> SharedInformer<K>
    where
        K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
        K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
    {
        let mut informers = self
            .inner
            .informers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (key, TypeId::of::<K>());
        if let Some(existing) = informers
            .get(&key)
            .and_then(|i| i.as_any().downcast_ref::<SharedInformer<K>>())
        {
            return existing.clone();
        }
        let informer = make();
        informers.insert(key, Arc::new(informer.clone()));
        informer
    }

    /// The informer of a resource known only at run time, found by discovery
    /// (`for_resource("apps", "v1", "deployments")`; `""` is the core group).
    pub async fn for_resource(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Result<SharedInformer<DynamicObject>, kube::Error> {
        let (ar, namespaced) = self.discover(group, version, resource).await?;
        Ok(self.dynamic(ar, namespaced))
    }

    /// The `ApiResource` of `group/version/resource` by discovery, and whether it is namespaced.
    pub(crate) async fn discover(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Result<(ApiResource, bool), kube::Error> {
        let gv = kube::core::GroupVersion {
            group: group.to_owned(),
            version: version.to_owned(),
        };
        let discovered = kube::discovery::oneshot::pinned_group(&self.inner.client, &gv).await?;
        discovered
            .recommended_resources()
            .into_iter()
            .find(|(ar, _)| ar.plural == resource)
            .map(|(ar, caps)| (ar, caps.scope == Scope::Namespaced))
            .ok_or_else(|| {
                kube::Error::Discovery(kube::error::DiscoveryError::MissingResource(format!(
                    "{group}/{version}/{resource}"
                )))
            })
    }

    /// The informer of a resource described by `ar` (no discovery).
    pub fn dynamic(&self, ar: ApiResource, namespaced: bool) -> SharedInformer<DynamicObject> {
        let key = resource_key(&ar.group, &ar.version, &ar.plural);
        self.get_or_insert(key, || {
            let api = self.api_with(&ar, namespaced);
            self.forgetting_aside(SharedInformer::new_with(
                api,
                ar,
                self.options::<DynamicObject>(),
            ))
        })
    }

    /// The `Api` an informer of the resource `ar` watches: the factory's namespace for a
    /// namespaced resource.
    pub(crate) fn api_with<K>(&self, ar: &ApiResource, namespaced: bool) -> Api<K>
    where
        K: Resource<DynamicType = ApiResource, Scope = kube::core::DynamicResourceScope>,
    {
        match (&self.inner.namespace, namespaced) {
            (Some(ns), true) => Api::namespaced_with(self.inner.client.clone(), ns, ar),
            _ => Api::all_with(self.inner.client.clone(), ar),
        }
    }

    /// The `Api` an informer of `K` watches: the factory's namespace for a namespaced kind.
    pub(crate) fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = ()>,
        K::Scope: ScopeApi,
    {
        <K::Scope as ScopeApi>::api::<K>(self.inner.client.clone(), self.inner.namespace.as_deref())
    }

    /// Starts every informer not started yet; returns at once. Safe to call again after
    /// asking for more informers.
    pub fn start(&self) {
        for informer in self.informers() {
            informer.start();
        }
    }

    /// Waits until every informer has cached its first list, or `timeout`; reports each one.
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> BTreeMap<String, bool> {
        let informers = self.informers();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut out = BTreeMap::new();
        for informer in informers {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            // Informers of one resource may share a name (a typed one and a `DynamicObject`
            // one): the name has synced when all of them have.
            let synced = informer.wait(left).await;
            *out.entry(informer.name()).or_insert(true) &= synced;
        }
        out
    }

    /// Stops every informer and waits for their tasks to end.
    pub async fn shutdown(&self) {
        for informer in self.informers() {
            informer.shutdown().await;
        }
    }
}

/// The factory's key of a resource's informers (with the cached type beside it).
pub(crate) fn resource_key(group: &str, version: &str, plural: &str) -> String {
    format!("{group}/{version}/{plural}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kube::core::PartialObjectMeta;

    fn client() -> Client {
        Client::try_from(kube::Config::new("http://127.0.0.1:1".parse().unwrap())).unwrap()
    }

    #[tokio::test]
    async fn kinds_whose_managed_fields_are_dropped_are_decoded_without_them() {
        let dropping = SharedInformerFactory::new(client());
        assert!(dropping.options::<ConfigMap>().skip_managed_fields);
        assert!(
            dropping
                .options::<PartialObjectMeta<Secret>>()
                .skip_managed_fields
        );

        // Any entry kept (all, some managers', or aside) needs them decoded.
        let keeping = SharedInformerFactory::builder(client())
            .keep_managed_fields_for::<ConfigMap>()
            .keep_managed_fields_of::<Secret>(["me"])
            .managed_fields_aside_for::<PartialObjectMeta<Secret>>(crate::ManagedFieldsAside::new(
                ["me"],
            ))
            .build();
        assert!(!keeping.options::<ConfigMap>().skip_managed_fields);
        assert!(!keeping.options::<Secret>().skip_managed_fields);
        assert!(
            !keeping
                .options::<PartialObjectMeta<Secret>>()
                .skip_managed_fields
        );
        assert!(
            keeping
                .options::<PartialObjectMeta<ConfigMap>>()
                .skip_managed_fields
        );
        let everything = SharedInformerFactory::builder(client())
            .keep_managed_fields()
            .build();
        assert!(!everything.options::<ConfigMap>().skip_managed_fields);
    }
}
