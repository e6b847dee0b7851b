//! Storage: objects, one global `resourceVersion` counter, the event history watches replay
//! from, and the open watches. Objects are JSON, kept in their storage version.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::meta::{rv_of, set_meta};
use crate::resource::ResourceType;
use crate::store::selector::{FieldSelector, LabelSelector};

/// Where an object lives: group, plural, namespace (`""` for cluster-scoped), name.
pub type ObjectKey = (String, String, String, String);

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `ADDED`.
    Added,
    /// `MODIFIED`.
    Modified,
    /// `DELETED`.
    Deleted,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// An object as stored: its JSON, and the `apiVersion` it was written in (the storage
/// version at the time; a CRD whose storage version changes keeps older objects in the old
/// one until they are written again).
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The object's JSON.
    pub json: Bytes,
    /// Its `apiVersion`.
    pub api_version: Arc<str>,
}

impl Encoded {
    fn new(obj: &Value) -> Self {
        Self {
            json: Bytes::from(serde_json::to_vec(obj).unwrap_or_default()),
            api_version: obj
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into(),
        }
    }

    /// The object, read.
    pub fn value(&self) -> Option<Value> {
        serde_json::from_slice(&self.json).ok()
    }
}

/// A change, kept for watches that resume from a `resourceVersion`.
#[derive(Debug, Clone)]
struct Event {
    rv: u64,
    resource: (String, String),
    kind: EventType,
    /// The namespace of the object (`""` when cluster-scoped).
    namespace: String,
    object: Encoded,
    old: Option<Encoded>,
}

/// What one open watch selects and where its events go.
#[derive(Debug)]
pub struct Watcher {
    /// `(group, plural)`.
    pub resource: (String, String),
    /// The served version the watch was opened with (events are rewritten to it).
    pub served: ResourceType,
    /// Namespace filter.
    pub namespace: Option<String>,
    /// Label selector.
    pub labels: LabelSelector,
    /// Field selector.
    pub fields: FieldSelector,
    /// Encoded event lines.
    pub tx: mpsc::UnboundedSender<Bytes>,
}

impl Watcher {
    /// A watch of `rt` (in `namespace`, when given) that selects by `labels` and `fields`,
    /// and the receiver of its event lines.
    pub fn open(
        rt: &ResourceType,
        namespace: Option<&str>,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> (Self, mpsc::UnboundedReceiver<Bytes>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                resource: rt.storage_key(),
                served: rt.clone(),
                namespace: namespace.map(str::to_owned),
                labels,
                fields,
                tx,
            },
            rx,
        )
    }

    /// Whether the watch selects everything in its namespace: no object needs reading.
    fn selects_all(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether the watch selects the stored object `obj` in `namespace`.
    pub fn selects(&self, namespace: &str, obj: &Encoded) -> bool {
        if self.namespace.as_deref().is_some_and(|n| n != namespace) {
            return false;
        }
        self.selects_all() || selected(&self.labels, &self.fields, obj)
    }

    /// The event this watch sees for a change from `old` to `new`, as real watches do:
    /// an object that starts matching is `ADDED`, one that stops matching is `DELETED`.
    fn event_for(
        &self,
        kind: EventType,
        namespace: &str,
        new: &Encoded,
        old: Option<&Encoded>,
    ) -> Option<EventType> {
        let now = self.selects(namespace, new);
        let before = old.is_some_and(|o| self.selects(namespace, o));
        match kind {
            EventType::Modified if now && !before => Some(EventType::Added),
            EventType::Modified if !now && before => Some(EventType::Deleted),
            EventType::Modified if !now => None,
            _ if now => Some(kind),
            _ => None,
        }
    }

    /// Sends one event line with a stored object; false when the watch is closed.
    pub fn send_stored(&self, kind: &str, object: &Encoded) -> bool {
        if !self.served.is_api_version(&object.api_version) {
            return match object.value() {
                Some(obj) => self.send(kind, &obj),
                None => !self.tx.is_closed(),
            };
        }
        let mut bytes = Vec::with_capacity(object.json.len() + 32);
        bytes.extend_from_slice(b"{\"type\":\"");
        bytes.extend_from_slice(kind.as_bytes());
        bytes.extend_from_slice(b"\",\"object\":");
        bytes.extend_from_slice(&object.json);
        bytes.extend_from_slice(b"}\n");
        self.tx.send(Bytes::from(bytes)).is_ok()
    }

    /// Sends one event line; false when the watch is closed.
    pub fn send(&self, kind: &str, object: &Value) -> bool {
        let mut object = object.clone();
        // What the conversion webhook converts is left as stored: the watch's stream calls it.
        let stored = object.get("apiVersion").and_then(Value::as_str);
        if !stored.is_some_and(|v| self.served.converts(v)) {
            self.served.read_as_served(&mut object);
        }
        let line = json!({"type": kind, "object": object});
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        self.tx.send(Bytes::from(bytes)).is_ok()
    }
}

/// Whether a stored object matches label and field selectors (which read metadata and
/// fields, never `apiVersion`: the stored form answers for every served version).
pub fn selected(labels: &LabelSelector, fields: &FieldSelector, obj: &Encoded) -> bool {
    obj.value()
        .is_some_and(|obj| labels.matches(obj.pointer("/metadata/labels")) && fields.matches(&obj))
}

/// The objects of one resource, by `namespace/name` (the order and key the real server's
/// storage lists in, and what continue tokens name).
type Objects = BTreeMap<String, Stored>;

/// One stored object.
#[derive(Debug)]
struct Stored {
    encoded: Encoded,
    /// Its `metadata.uid`.
    uid: String,
}

/// All state behind one lock. Objects are kept as compact JSON (a few hundred bytes where a
/// parsed `Value` takes kilobytes), shared by the store, the watch history and responses,
/// so a stored object exists once however many events name it, and GETs, lists and watch
/// events in the version an object was stored in copy its bytes without parsing them.
#[derive(Debug)]
pub struct Store {
    rv: u64,
    uid: u64,
    /// By `(group, plural)`.
    objects: BTreeMap<(String, String), Objects>,
    /// How many objects each resource has in each namespace, so a first list page can say
    /// how many remain without walking them.
    counts: BTreeMap<(String, String), BTreeMap<String, usize>>,
    /// Objects with owner references or a deletion timestamp: all that garbage collection
    /// has to read (nothing, when there are none).
    candidates: BTreeSet<ObjectKey>,
    /// The uid of every object.
    uids: HashSet<String>,
    history: VecDeque<Event>,
    /// Events at or below this version are no longer retained: older watches get 410.
    compacted: u64,
    retain: usize,
    watchers: Vec<Watcher>,
}

/// The key of an object inside its resource: `namespace/name`.
fn position(key: &ObjectKey) -> String {
    format!("{}/{}", key.2, key.3)
}

/// The object key of position `pos` (`namespace/name`) of `resource`.
fn key_at(resource: &(String, String), pos: &str) -> ObjectKey {
    let (ns, name) = pos.split_once('/').unwrap_or(("", pos));
    (
        resource.0.clone(),
        resource.1.clone(),
        ns.to_owned(),
        name.to_owned(),
    )
}

/// Whether garbage collection may have to look at `obj`.
fn gc_candidate(obj: &Value) -> bool {
    let meta = obj.get("metadata");
    meta.and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .is_some_and(|refs| !refs.is_empty())
        || meta.and_then(|m| m.get("deletionTimestamp")).is_some()
}

impl Store {
    /// An empty store that keeps the last `retain` events for watches.
    pub fn new(retain: usize) -> Self {
        Self {
            rv: 1,
            uid: 0,
            objects: BTreeMap::new(),
            counts: BTreeMap::new(),
            candidates: BTreeSet::new(),
            uids: HashSet::new(),
            history: VecDeque::new(),
            compacted: 1,
            retain: retain.max(1),
            watchers: Vec::new(),
        }
    }

    /// The current global resource version.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// Drops all retained history: watches from any older version get 410 Gone.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    /// Next version, for a write.
    pub fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// A new uid, unique in this server.
    pub fn next_uid(&mut self) -> String {
        self.uid += 1;
        let seed = self.uid.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5851_F42D_4C95_7F2D;
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (seed >> 32) as u32,
            (seed >> 16) as u16,
            (seed & 0xfff) as u16,
            (self.uid >> 48 & 0xfff) as u16,
            self.uid & 0xffff_ffff_ffff
        )
    }

    fn resource(&self, key: &ObjectKey) -> Option<&Objects> {
        // Few resources exist: a scan avoids building an owned `(group, plural)` key.
        self.objects
            .iter()
            .find(|((g, p), _)| *g == key.0 && *p == key.1)
            .map(|(_, objects)| objects)
    }

    /// One object.
    pub fn get(&self, key: &ObjectKey) -> Option<Value> {
        self.raw(key)?.value()
    }

    /// Whether an object exists.
    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.raw(key).is_some()
    }

    /// One object as stored.
    pub fn raw(&self, key: &ObjectKey) -> Option<&Encoded> {
        self.resource(key)?.get(&position(key)).map(|s| &s.encoded)
    }

    /// Objects of a resource (their stored JSON), optionally in one namespace, in storage
    /// order (`namespace/name`), starting after the position `after` when given: a seek,
    /// so a page costs what it returns, not what precedes it.
    pub fn list<'a>(
        &'a self,
        resource: &(String, String),
        namespace: Option<&str>,
        after: Option<&str>,
    ) -> impl Iterator<Item = (&'a str, &'a Encoded)> + 'a {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        let prefix = namespace.map(|ns| format!("{ns}/"));
        let lower = match (after, &prefix) {
            (Some(a), Some(p)) if a < p.as_str() => Included(p.clone()),
            (Some(a), _) => Excluded(a.to_owned()),
            (None, Some(p)) => Included(p.clone()),
            (None, None) => Unbounded,
        };
        self.objects
            .get(resource)
            .into_iter()
            .flat_map(move |objects| objects.range((lower.clone(), Unbounded)))
            .take_while(move |(k, _)| prefix.as_ref().is_none_or(|p| k.starts_with(p.as_str())))
            .map(|(k, v)| (k.as_str(), &v.encoded))
    }

    /// How many objects a resource has, in namespace `namespace` or in all: what `list`
    /// would yield from the start, without walking it.
    pub fn count(&self, resource: &(String, String), namespace: Option<&str>) -> usize {
        match namespace {
            None => self.objects.get(resource).map_or(0, BTreeMap::len),
            Some(ns) => self
                .counts
                .get(resource)
                .and_then(|counts| counts.get(ns))
                .copied()
                .unwrap_or(0),
        }
    }

    /// The keys of a resource's objects.
    pub fn keys(&self, resource: &(String, String)) -> Vec<ObjectKey> {
        self.list(resource, None, None)
            .map(|(pos, _)| key_at(resource, pos))
            .collect()
    }

    /// Every object of namespace `ns`, of every resource.
    pub fn in_namespace(&self, ns: &str) -> Vec<(ObjectKey, Value)> {
        self.objects
            .keys()
            .flat_map(|resource| {
                self.list(resource, Some(ns), None)
                    .filter_map(move |(pos, e)| Some((key_at(resource, pos), e.value()?)))
            })
            .collect()
    }

    /// Whether any object has owner references or is being deleted.
    pub fn may_need_gc(&self) -> bool {
        !self.candidates.is_empty()
    }

    /// The objects with owner references or a deletion timestamp.
    pub fn gc_candidates(&self) -> impl Iterator<Item = (ObjectKey, Value)> + '_ {
        self.candidates
            .iter()
            .filter_map(|key| Some((key.clone(), self.get(key)?)))
    }

    /// Whether an object with this uid exists.
    pub fn has_uid(&self, uid: &str) -> bool {
        self.uids.contains(uid)
    }

    /// Stores `obj` (which already carries its new `resourceVersion`) and notifies watches.
    pub fn put(&mut self, key: ObjectKey, obj: Value) {
        let rv = rv_of(&obj);
        if gc_candidate(&obj) {
            self.candidates.insert(key.clone());
        } else {
            self.candidates.remove(&key);
        }
        let uid = obj
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.uids.insert(uid.clone());
        let new_uid = uid.clone();
        let encoded = Encoded::new(&obj);
        let position = position(&key);
        let (group, plural, namespace, _) = key;
        let resource = (group, plural);
        let stored = Stored {
            encoded: encoded.clone(),
            uid,
        };
        let old = self
            .objects
            .entry(resource.clone())
            .or_default()
            .insert(position, stored);
        if let Some(old) = old.as_ref().filter(|o| o.uid != new_uid) {
            self.uids.remove(&old.uid);
        }
        if old.is_none() {
            let counts = self.counts.entry(resource.clone()).or_default();
            *counts.entry(namespace.clone()).or_default() += 1;
        }
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(Event {
            rv,
            resource,
            kind,
            namespace,
            object: encoded,
            old: old.map(|o| o.encoded),
        });
    }

    /// Stores `obj` at a new version.
    pub fn bump_and_put(&mut self, key: ObjectKey, mut obj: Value) {
        let rv = self.next_rv();
        set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
        self.put(key, obj);
    }

    /// Removes an object; `tombstone` is its final state with the deletion's version.
    pub fn remove(&mut self, key: &ObjectKey, tombstone: &Value) {
        let resource = (key.0.clone(), key.1.clone());
        let Some(objects) = self.objects.get_mut(&resource) else {
            return;
        };
        let Some(old) = objects.remove(&position(key)) else {
            return;
        };
        if objects.is_empty() {
            self.objects.remove(&resource);
        }
        if let Some(counts) = self.counts.get_mut(&resource) {
            let left = counts.get_mut(&key.2).map(|n| {
                *n -= 1;
                *n
            });
            if left == Some(0) {
                counts.remove(&key.2);
            }
            if counts.is_empty() {
                self.counts.remove(&resource);
            }
        }
        self.candidates.remove(key);
        self.uids.remove(&old.uid);
        self.record(Event {
            rv: rv_of(tombstone),
            resource,
            kind: EventType::Deleted,
            namespace: key.2.clone(),
            object: Encoded::new(tombstone),
            old: Some(old.encoded),
        });
    }

    fn record(&mut self, event: Event) {
        self.watchers.retain(|w| {
            if w.resource != event.resource {
                return !w.tx.is_closed();
            }
            match w.event_for(
                event.kind,
                &event.namespace,
                &event.object,
                event.old.as_ref(),
            ) {
                Some(kind) => w.send_stored(kind.as_str(), &event.object),
                None => !w.tx.is_closed(),
            }
        });
        self.history.push_back(event);
        while self.history.len() > self.retain {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
    }

    /// The newest version whose events are no longer kept (0 while all are): a list
    /// continued from an older version is refused as too old, as etcd's compaction does.
    pub fn compacted(&self) -> u64 {
        self.compacted
    }

    /// Registers a watch and sends it every retained event after `since`.
    /// Fails with the oldest available version when `since` is older than the history.
    pub fn watch_from(&mut self, watcher: Watcher, since: u64) -> Result<(), u64> {
        if since < self.compacted {
            return Err(self.compacted);
        }
        for e in self
            .history
            .iter()
            .filter(|e| e.rv > since && e.resource == watcher.resource)
        {
            if let Some(kind) = watcher.event_for(e.kind, &e.namespace, &e.object, e.old.as_ref()) {
                watcher.send_stored(kind.as_str(), &e.object);
            }
        }
        self.watchers.push(watcher);
        Ok(())
    }

    /// Registers a watch after its initial events were sent by the caller.
    pub fn watch_now(&mut self, watcher: Watcher) {
        self.watchers.push(watcher);
    }

    /// Ends every open watch (clients see the stream close and re-watch).
    pub fn drop_watches(&mut self) {
        self.watchers.clear();
    }

    /// Sends a 410 `ERROR` event to every open watch, then ends them.
    pub fn expire_watches(&mut self, status: &Value) {
        for w in self.watchers.drain(..) {
            let line = json!({"type": "ERROR", "object": status});
            let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
            bytes.push(b'\n');
            let _ = w.tx.send(Bytes::from(bytes));
        }
    }

    /// Number of open watches (closed ones are pruned on the next event).
    pub fn open_watches(&self) -> usize {
        self.watchers.iter().filter(|w| !w.tx.is_closed()).count()
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.objects.values().map(BTreeMap::len).sum()
    }
}
