//! [`SharedInformer`]: one watch and one cache per resource type, shared by every consumer.
//!
//! Built on kube's `watcher` and reflector `Store`: the informer feeds the store and, from
//! the same events, calls event handlers (add, update with the old object, delete with the
//! final state, also for objects that vanished while a watch was re-listed) and feeds the
//! streams that drive `kube::runtime::Controller::for_shared_stream`. Handlers and streams
//! registered after `start` first receive the objects already cached.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

pub use crate::informer::watch_backoff::WatchBackoff;
use crate::informer::watch_backoff::{Retry, bounded, is_gone, undecodable};

/// Receives an informer's changes. Every method has an empty default.
///
/// Handlers run on the informer's task, one event at a time, in order: keep them quick
/// (queue work, as controllers do) rather than doing I/O in them.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// A new object (also every cached object when the handler is added after start).
    fn on_add(&self, _obj: &Arc<K>) {}
    /// A changed object; with a resync period, also `old == new` for every cached object.
    fn on_update(&self, _old: &Arc<K>, _new: &Arc<K>) {}
    /// A deleted object, in its last known state (also when the delete was missed and
    /// only noticed when the watch re-listed).
    fn on_delete(&self, _obj: &Arc<K>) {}
}

type AddFn<K> = Box<dyn Fn(&Arc<K>) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;

/// An [`EventHandler`] from closures: `Handlers::new().on_add(|foo| ...)`.
pub struct Handlers<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<AddFn<K>>,
}

impl<K> Default for Handlers<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> Handlers<K> {
    /// No handlers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called for added objects.
    #[must_use]
    pub fn on_add(mut self, f: impl Fn(&Arc<K>) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Called with the old and new object.
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Called with the final state of deleted objects.
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(&Arc<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for Handlers<K> {
    fn on_add(&self, obj: &Arc<K>) {
        if let Some(f) = &self.add {
            f(obj);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, obj: &Arc<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

/// A function from an object to the values it is indexed under.
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;
/// A change applied to every object before it is cached (to drop fields and save memory);
/// the factory's default is [`drop_managed_fields`](crate::informer::transform::drop_managed_fields).
pub type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// What the informer watches and how.
pub struct InformerOptions<K> {
    /// Watcher settings: label and field selectors, page size, streaming lists.
    pub watcher: watcher::Config,
    /// Deliver `on_update(obj, obj)` for every cached object this often.
    pub resync: Option<Duration>,
    /// Applied to every object before caching.
    pub transform: Option<Transform<K>>,
    /// Decode objects without `metadata.managedFields`: their text is stepped over, never
    /// built (see [`decode`](crate::informer::decode)). The factory sets it for the kinds whose
    /// `managedFields` it drops.
    pub skip_managed_fields: bool,
    /// How long to wait after a watch error before watching again.
    pub backoff: WatchBackoff,
}

impl<K> Default for InformerOptions<K> {
    fn default() -> Self {
        Self {
            watcher: watcher::Config::default(),
            resync: None,
            transform: None,
            skip_managed_fields: false,
            backoff: WatchBackoff::default(),
        }
    }
}

impl<K> Clone for InformerOptions<K> {
    fn clone(&self) -> Self {
        Self {
            watcher: self.watcher.clone(),
            resync: self.resync,
            transform: self.transform.clone(),
            skip_managed_fields: self.skip_managed_fields,
            backoff: self.backoff,
        }
    }
}

/// What an informer of `K` caches when it is not whole objects, for its name: `metadata` for
/// `PartialObjectMeta<_>`, `encoded` for [`Encoded<_>`](crate::Encoded).
fn form<K: Resource>() -> Option<&'static str> {
    let encoded = std::any::type_name::<crate::Encoded<()>>();
    let encoded = encoded.strip_suffix("()>").unwrap_or(encoded);
    if K::metadata_api() {
        Some("metadata")
    } else if std::any::type_name::<K>().starts_with(encoded) {
        Some("encoded")
    } else {
        None
    }
}

/// The namespace index every informer has.
pub const NAMESPACE_INDEX: &str = "namespace";

/// An index, built on its first query and kept up to date from then on, so an index
/// nobody asks (such as the namespace index of a controller that only gets by name) costs
/// neither sync time nor memory.
struct Index<K: Resource> {
    func: IndexFn<K>,
    values: HashMap<String, HashSet<ObjectRef<K>>>,
    built: bool,
}

struct Listeners<K> {
    handlers: Vec<Arc<dyn EventHandler<K>>>,
    streams: Vec<mpsc::UnboundedSender<Arc<K>>>,
}

/// What an informer reads its events from.
type EventStream<K> =
    std::pin::Pin<Box<dyn futures::Stream<Item = watcher::Result<watcher::Event<K>>> + Send>>;

pub(crate) struct Inner<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    name: String,
    dyntype: K::DynamicType,
    api: Api<K>,
    options: InformerOptions<K>,
    reader: Store<K>,
    writer: Mutex<Option<Writer<K>>>,
    listeners: Mutex<Listeners<K>>,
    indices: RwLock<HashMap<String, Index<K>>>,
    synced: watch::Sender<bool>,
    stop: watch::Sender<bool>,
    task: Mutex<Option<JoinHandle<()>>>,
    watch_errors: std::sync::atomic::AtomicU64,
    decode_errors: std::sync::atomic::AtomicU64,
}

/// One watch and one cache of `K`, shared by every consumer. Cheap to clone.
pub struct SharedInformer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedInformer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K> Debug for SharedInformer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedInformer")
            .field("resource", &self.inner.name)
            .field("synced", &*self.inner.synced.borrow())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<K> SharedInformer<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Default + Send + Sync + 'static,
{
    /// An informer of the objects `api` sees; nothing runs until [`SharedInformer::start`].
    pub fn new(api: Api<K>, options: InformerOptions<K>) -> Self {
        Self::new_with(api, K::DynamicType::default(), options)
    }
}

impl<K> SharedInformer<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// An informer of a resource known at run time (`DynamicObject` with its `ApiResource`).
    pub fn new_with(api: Api<K>, dyntype: K::DynamicType, options: InformerOptions<K>) -> Self {
        let writer = Writer::new(dyntype.clone());
        let reader = writer.as_reader();
        let mut name = format!("{}.{}", K::plural(&dyntype), K::api_version(&dyntype));
        if let Some(form) = form::<K>() {
            // Apart from the full informer of the same kind in sync reports and metrics.
            name.push_str(&format!(" ({form})"));
        }
        let mut indices = HashMap::new();
        let by_namespace: IndexFn<K> = Arc::new(|o: &K| o.namespace().into_iter().collect());
        indices.insert(
            NAMESPACE_INDEX.to_owned(),
            Index {
                func: by_namespace,
                values: HashMap::new(),
                built: false,
            },
        );
        Self {
            inner: Arc::new(Inner {
                name,
                dyntype,
                api,
                options,
                reader,
                writer: Mutex::new(Some(writer)),
                listeners: Mutex::new(Listeners {
                    handlers: Vec::new(),
                    streams: Vec::new(),
                }),
                indices: RwLock::new(indices),
                synced: watch::channel(false).0,
                stop: watch::channel(false).0,
                task: Mutex::new(None),
                watch_errors: std::sync::atomic::AtomicU64::new(0),
                decode_errors: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// The cache key of object `name` in `namespace`.
    pub(crate) fn object_ref(&self, namespace: Option<&str>, name: &str) -> ObjectRef<K> {
        let key = ObjectRef::new_with(name, self.inner.dyntype.clone());
        match namespace {
            Some(ns) => key.within(ns),
            None => key,
        }
    }

    /// `plural.group`, as API errors name the resource.
    pub fn resource(&self) -> String {
        let group = K::group(&self.inner.dyntype);
        let plural = K::plural(&self.inner.dyntype);
        if group.is_empty() {
            plural.into_owned()
        } else {
            format!("{plural}.{group}")
        }
    }

    /// `plural.group/version`, for logs and sync reports (`plural.group/version (metadata)`
    /// for a metadata-only informer, `(encoded)` for an encoded one).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The cached object `name` of `namespace` (`None` for a cluster-scoped kind).
    pub fn object(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.inner.reader.get(&self.object_ref(namespace, name))
    }

    /// The cache, as kube's reflector `Store` (what `Controller::for_shared_stream` takes).
    pub fn store(&self) -> Store<K> {
        self.inner.reader.clone()
    }

    /// A read-only, cache-backed view with namespace and label-selector queries.
    pub fn lister(&self) -> crate::informer::lister::Lister<K> {
        crate::informer::lister::Lister::new(self.clone())
    }

    /// Registers event handlers; added after start, it first gets `on_add` for every cached object.
    pub fn add_event_handler(&self, handler: impl EventHandler<K>) {
        let handler: Arc<dyn EventHandler<K>> = Arc::new(handler);
        let mut listeners = lock(&self.inner.listeners);
        if self.has_synced() {
            for obj in self.inner.reader.state() {
                handler.on_add(&obj);
            }
        }
        listeners.handlers.push(handler);
    }

    /// A stream of every changed object (added, updated, deleted), for
    /// `Controller::for_shared_stream(stream, informer.store())`, `owns_shared_stream` or
    /// `watches_shared_stream`. Subscribed after start, it first yields every cached object.
    pub fn subscribe(&self) -> impl Stream<Item = Arc<K>> + Send + 'static {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut listeners = lock(&self.inner.listeners);
        if self.has_synced() {
            for obj in self.inner.reader.state() {
                let _ = tx.send(obj);
            }
        }
        listeners.streams.push(tx);
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|o| (o, rx)) })
    }

    /// Adds an index: `func` gives the values an object is indexed under (see [`Lister::by_index`](crate::informer::lister::Lister::by_index)).
    pub fn add_indexer(
        &self,
        name: &str,
        func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) {
        let func: IndexFn<K> = Arc::new(func);
        let index = Index {
            func,
            values: HashMap::new(),
            built: false,
        };
        self.inner
            .indices
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name.to_owned(), index);
    }

    /// The objects indexed under `value` by index `name` (empty for an unknown index).
    pub fn by_index(&self, name: &str, value: &str) -> Vec<Arc<K>> {
        let unbuilt = self
            .inner
            .indices
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .is_some_and(|i| !i.built);
        if unbuilt {
            let mut indices = self
                .inner
                .indices
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(index) = indices.get_mut(name).filter(|i| !i.built) {
                for obj in self.inner.reader.state() {
                    add_to_index(index, &obj, &self.inner.dyntype);
                }
                index.built = true;
            }
        }
        let indices = self
            .inner
            .indices
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(refs) = indices.get(name).and_then(|i| i.values.get(value)) else {
            return Vec::new();
        };
        let mut out: Vec<Arc<K>> = refs
            .iter()
            .filter_map(|r| self.inner.reader.get(r))
            .collect();
        out.sort_by_key(|o| (o.namespace(), o.name_any()));
        out
    }

    /// How many list and watch errors the informer has met (each also logged at warn).
    pub fn watch_errors(&self) -> u64 {
        self.inner
            .watch_errors
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many of those errors were objects the server sent that do not decode as `K`
    /// (each run of them logged once at error, bounded in size): the kind's schema or
    /// storage version moved away from this type, which waiting does not mend.
    pub fn decode_errors(&self) -> u64 {
        self.inner
            .decode_errors
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the first complete list has been cached.
    pub fn has_synced(&self) -> bool {
        *self.inner.synced.borrow()
    }

    /// Waits until the first list is cached, or `timeout`; true when synced.
    pub async fn wait_for_sync(&self, timeout: Duration) -> bool {
        let mut rx = self.inner.synced.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|s| *s))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Completes once the first list is cached (`true`), or when the informer is dropped
    /// first (`false`); no deadline, for a caller that races it with its own.
    pub fn synced(&self) -> impl std::future::Future<Output = bool> + Send + 'static {
        let mut rx = self.inner.synced.subscribe();
        async move { rx.wait_for(|s| *s).await.is_ok() }
    }

    /// Starts the watch on the current tokio runtime; later calls do nothing.
    pub fn start(&self) {
        let Some(writer) = lock(&self.inner.writer).take() else {
            return;
        };
        let inner = self.inner.clone();
        let handle = tokio::spawn(async move { inner.run(writer).await });
        *lock(&self.inner.task) = Some(handle);
    }

    /// Whether `start` was called.
    pub fn is_started(&self) -> bool {
        lock(&self.inner.writer).is_none()
    }

    /// Stops the watch and waits for its task to end; streams from `subscribe` end too.
    pub async fn shutdown(&self) {
        self.inner.stop.send_replace(true);
        let task = lock(&self.inner.task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
        lock(&self.inner.listeners).streams.clear();
    }

    /// Whether the informer's task is running.
    pub fn is_running(&self) -> bool {
        lock(&self.inner.task)
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }
}

/// An object's key in an index: its name and namespace only. The store's own keys also
/// copy the object's resourceVersion and uid (kube's `ObjectRef::extra`, which lookups
/// ignore); an index needs neither, and holds one key per object and value.
fn index_key<K: Resource>(obj: &K, dyntype: &K::DynamicType) -> ObjectRef<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    let meta = obj.meta();
    let key = ObjectRef::new_with(meta.name.as_deref().unwrap_or_default(), dyntype.clone());
    match meta.namespace.as_deref() {
        Some(ns) => key.within(ns),
        None => key,
    }
}

fn add_to_index<K: Resource>(index: &mut Index<K>, obj: &K, dyntype: &K::DynamicType)
where
    K::DynamicType: Eq + Hash + Clone,
{
    let key = index_key(obj, dyntype);
    for value in (index.func)(obj) {
        index.values.entry(value).or_default().insert(key.clone());
    }
}

fn remove_from_index<K: Resource>(index: &mut Index<K>, obj: &K, dyntype: &K::DynamicType)
where
    K::DynamicType: Eq + Hash + Clone,
{
    let key = index_key(obj, dyntype);
    for value in (index.func)(obj) {
        if let Some(set) = index.values.get_mut(&value) {
            set.remove(&key);
            if set.is_empty() {
                index.values.remove(&value);
            }
        }
    }
}

enum Change<K> {
    Added(Arc<K>),
    Updated(Arc<K>, Arc<K>),
    Deleted(Arc<K>),
}

impl<K> Inner<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn key(&self, obj: &K) -> ObjectRef<K> {
        ObjectRef::from_obj_with(obj, self.dyntype.clone())
    }

    /// Counts and logs a failed list or watch. Objects that do not decode as `K` are
    /// reported once per run of such failures (`decoding_failed`): the same objects fail
    /// again on every retry, and a list of thousands would flood the log.
    fn report(&self, err: &watcher::Error, decoding_failed: &mut bool) {
        self.watch_errors
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(why) = undecodable(err) else {
            tracing::warn!(resource = %self.name, error = %bounded(&err.to_string(), 1000), "watch error");
            return;
        };
        if !*decoding_failed {
            tracing::error!(
                resource = %self.name,
                error = %bounded(&why, 400),
                "objects from the API server do not decode as this informer's type: the kind's schema or storage version has probably moved (see the book's how-to on moving a storage version); retrying quietly"
            );
        }
        *decoding_failed = true;
        self.decode_errors
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A new watch of the objects, decoded without managedFields when the options say so.
    fn watch(&self) -> EventStream<K> {
        let config = self.options.watcher.clone();
        if self.options.skip_managed_fields {
            Box::pin(crate::informer::decode::watch(
                &self.api,
                &self.dyntype,
                config,
            ))
        } else {
            Box::pin(watcher(self.api.clone(), config))
        }
    }

    async fn run(self: Arc<Self>, mut writer: Writer<K>) {
        let new_stream = || self.watch();
        let mut stream = new_stream();
        let mut retry = Retry::new(self.options.backoff);
        let mut stop = self.stop.subscribe();
        let mut resync = self
            .options
            .resync
            .map(|p| tokio::time::interval_at(tokio::time::Instant::now() + p, p));
        let mut before_relist: Option<HashMap<ObjectRef<K>, Arc<K>>> = None;
        let mut decoding_failed = false;
        loop {
            // An event that is ready now is taken without polling the stop signal and the
            // resync timer as futures (a list of thousands arrives at once); the stop flag
            // is still read each time.
            if *stop.borrow() {
                break;
            }
            let ready = futures::FutureExt::now_or_never(stream.next());
            let event = if let Some(event) = ready {
                event
            } else {
                tokio::select! {
                _ = stop.wait_for(|s| *s) => break,
                () = tick(&mut resync) => {
                    for obj in self.reader.state() {
                        self.dispatch(&[Change::Updated(obj.clone(), obj)]);
                    }
                    continue;
                }
                event = stream.next() => event,
                }
            };
            let mut event = match event {
                None => break,
                Some(Err(err)) => {
                    self.report(&err, &mut decoding_failed);
                    if is_gone(&err) {
                        // The resource version is gone: list again now, from scratch.
                        stream = new_stream();
                        continue;
                    }
                    let wait = retry.wait();
                    tokio::select! {
                        _ = stop.wait_for(|s| *s) => break,
                        () = tokio::time::sleep(wait) => {}
                    }
                    continue;
                }
                Some(Ok(event)) => {
                    retry.reset();
                    if decoding_failed {
                        tracing::info!(resource = %self.name, "objects decode again");
                        decoding_failed = false;
                    }
                    event
                }
            };
            if let Some(transform) = &self.options.transform {
                event = event.modify(|o| transform(o));
            }
            let changes = match &event {
                watcher::Event::Init => {
                    // What the cache held, to tell listeners what the re-list changed.
                    before_relist = self.has_listeners().then(|| {
                        self.reader
                            .state()
                            .into_iter()
                            .map(|o| (self.key(&o), o))
                            .collect()
                    });
                    writer.apply_watcher_event(&event);
                    Vec::new()
                }
                watcher::Event::InitApply(_) => {
                    writer.apply_watcher_event(&event);
                    Vec::new()
                }
                watcher::Event::InitDone => {
                    writer.apply_watcher_event(&event);
                    self.rebuild_indices();
                    // Decided once, at `Init`: with no listener then, nobody is told of
                    // this list (the first sync of a large cache costs no more than kube's
                    // own reflector), and one that subscribed since got the cache replayed.
                    match before_relist.take() {
                        Some(before) => self.relisted(before),
                        None => Vec::new(),
                    }
                }
                watcher::Event::Apply(obj) => {
                    let key = self.key(obj);
                    let old = self.reader.get(&key);
                    writer.apply_watcher_event(&event);
                    let Some(new) = self.reader.get(&key) else {
                        continue;
                    };
                    self.reindex(old.as_deref(), Some(&new));
                    match old {
                        Some(old) => vec![Change::Updated(old, new)],
                        None => vec![Change::Added(new)],
                    }
                }
                watcher::Event::Delete(obj) => {
                    let key = self.key(obj);
                    let old = self
                        .reader
                        .get(&key)
                        .unwrap_or_else(|| Arc::new(obj.clone()));
                    writer.apply_watcher_event(&event);
                    self.reindex(Some(&old), None);
                    vec![Change::Deleted(Arc::new(obj.clone()))]
                }
            };
            self.dispatch(&changes);
            if matches!(event, watcher::Event::InitDone) {
                self.synced.send_replace(true);
            }
        }
        lock(&self.listeners).streams.clear();
    }

    /// Whether any handler or stream listens.
    fn has_listeners(&self) -> bool {
        let listeners = lock(&self.listeners);
        !listeners.handlers.is_empty() || !listeners.streams.is_empty()
    }

    /// What changed between the cache before a re-list and after it.
    fn relisted(&self, before: HashMap<ObjectRef<K>, Arc<K>>) -> Vec<Change<K>> {
        let after = self.reader.state();
        if before.is_empty() {
            return after.into_iter().map(Change::Added).collect();
        }
        let mut changes = Vec::new();
        let mut seen = HashSet::new();
        for new in after {
            let key = self.key(&new);
            match before.get(&key) {
                Some(old) if old.resource_version() == new.resource_version() => {}
                Some(old) => changes.push(Change::Updated(old.clone(), new)),
                None => changes.push(Change::Added(new)),
            }
            seen.insert(key);
        }
        for (key, old) in before {
            if !seen.contains(&key) {
                changes.push(Change::Deleted(old));
            }
        }
        changes
    }

    fn rebuild_indices(&self) {
        let mut indices = self
            .indices
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Rebuilt on their next query, from the new cache.
        for index in indices.values_mut() {
            index.values.clear();
            index.built = false;
        }
    }

    fn reindex(&self, old: Option<&K>, new: Option<&K>) {
        let mut indices = self
            .indices
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for index in indices.values_mut().filter(|i| i.built) {
            if let Some(old) = old {
                remove_from_index(index, old, &self.dyntype);
            }
            if let Some(new) = new {
                add_to_index(index, new, &self.dyntype);
            }
        }
    }

    fn dispatch(&self, changes: &[Change<K>]) {
        if changes.is_empty() {
            return;
        }
        let mut listeners = lock(&self.listeners);
        for change in changes {
            for h in &listeners.handlers {
                match change {
                    Change::Added(o) => h.on_add(o),
                    Change::Updated(old, new) => h.on_update(old, new),
                    Change::Deleted(o) => h.on_delete(o),
                }
            }
            let obj = match change {
                Change::Added(o) | Change::Updated(_, o) | Change::Deleted(o) => o,
            };
            listeners.streams.retain(|tx| tx.send(obj.clone()).is_ok());
        }
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_keys_hold_name_and_namespace_only_and_find_the_cached_object() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.resource_version = Some("7".into());
        cm.metadata.uid = Some("u".into());
        let key = index_key(&cm, &());
        assert_eq!(
            (key.name.as_str(), key.namespace.as_deref()),
            ("a", Some("ns"))
        );
        assert!(key.extra.resource_version.is_none() && key.extra.uid.is_none());
        // Equal (and hashed alike) to the store's key, which carries both.
        assert_eq!(key, ObjectRef::from_obj(&cm));
    }
}
