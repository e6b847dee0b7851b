//! Storage: objects, one global `resourceVersion` counter, the event history watches replay
//! from, and the open watches. Objects are JSON, kept in their storage version.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::registry::ResourceType;
use crate::selector::{FieldSelector, LabelSelector};

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

/// A change, kept for watches that resume from a `resourceVersion`.
#[derive(Debug, Clone)]
struct Event {
    rv: u64,
    resource: (String, String),
    kind: EventType,
    object: Arc<Value>,
    old: Option<Arc<Value>>,
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
    fn selects(&self, obj: &Value) -> bool {
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        self.namespace.as_deref().is_none_or(|n| n == ns)
            && self.labels.matches(obj.pointer("/metadata/labels"))
            && self.fields.matches(obj)
    }

    /// The event this watch sees for a change from `old` to `new`, as real watches do:
    /// an object that starts matching is `ADDED`, one that stops matching is `DELETED`.
    fn event_for<'v>(
        &self,
        kind: EventType,
        new: &'v Value,
        old: Option<&Value>,
    ) -> Option<(EventType, &'v Value)> {
        let now = self.selects(new);
        let before = old.is_some_and(|o| self.selects(o));
        match kind {
            EventType::Modified if now && !before => Some((EventType::Added, new)),
            EventType::Modified if !now && before => Some((EventType::Deleted, new)),
            EventType::Modified if !now => None,
            _ if now => Some((kind, new)),
            _ => None,
        }
    }

    /// Sends one event line; false when the watch is closed.
    pub fn send(&self, kind: &str, object: &Value) -> bool {
        let mut bytes = Vec::with_capacity(512);
        bytes.extend_from_slice(b"{\"type\":\"");
        bytes.extend_from_slice(kind.as_bytes());
        bytes.extend_from_slice(b"\",\"object\":");
        let written = if self.served.serves_as_is(object) {
            serde_json::to_writer(&mut bytes, object)
        } else {
            let mut object = object.clone();
            self.served.rewrite(&mut object);
            serde_json::to_writer(&mut bytes, &object)
        };
        if written.is_err() {
            return !self.tx.is_closed();
        }
        bytes.extend_from_slice(b"}\n");
        self.tx.send(Bytes::from(bytes)).is_ok()
    }
}

impl ResourceType {
    /// Whether `obj` already carries this served version's `apiVersion` and `kind`, so it
    /// can be sent without a rewritten copy.
    pub fn serves_as_is(&self, obj: &Value) -> bool {
        obj.get("kind").and_then(Value::as_str) == Some(self.kind.as_str())
            && obj
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|av| match av.split_once('/') {
                    Some((g, v)) => g == self.group && v == self.version,
                    None => self.group.is_empty() && av == self.version,
                })
    }

    /// Sets `apiVersion` and `kind` to this served version (conversion strategy `None`).
    pub fn rewrite(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("apiVersion".to_owned(), Value::String(self.api_version()));
            map.insert("kind".to_owned(), Value::String(self.kind.clone()));
        }
    }
}

/// The objects of one resource, by `namespace/name` (the order and key the real server's
/// storage lists in, and what continue tokens name).
type Objects = BTreeMap<String, Arc<Value>>;

/// All state behind one lock. Objects are shared (`Arc`) between the store, the watch
/// history and responses, so a stored object exists once however many events name it.
#[derive(Debug)]
pub struct Store {
    rv: u64,
    uid: u64,
    /// By `(group, plural)`.
    objects: BTreeMap<(String, String), Objects>,
    len: usize,
    /// Objects with owner references or a deletion timestamp: when none exist, garbage
    /// collection has nothing to do.
    gc_candidates: usize,
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
            len: 0,
            gc_candidates: 0,
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
    pub fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.shared(key).map(|v| &**v)
    }

    /// One object, shared.
    pub fn shared(&self, key: &ObjectKey) -> Option<&Arc<Value>> {
        self.resource(key)?.get(&position(key))
    }

    /// Objects of a resource, optionally in one namespace, in storage order
    /// (`namespace/name`), starting after the position `after` when given: a seek, so a
    /// page costs what it returns, not what precedes it.
    pub fn list<'a>(
        &'a self,
        resource: &(String, String),
        namespace: Option<&str>,
        after: Option<&str>,
    ) -> impl Iterator<Item = (&'a str, &'a Arc<Value>)> + 'a {
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
            .map(|(k, v)| (k.as_str(), v))
    }

    /// Every object, for garbage collection and namespace deletion.
    pub fn all(&self) -> impl Iterator<Item = (ObjectKey, &Arc<Value>)> {
        self.objects.iter().flat_map(|((g, p), objects)| {
            objects.iter().map(move |(pos, v)| {
                let (ns, name) = pos.split_once('/').unwrap_or(("", pos));
                ((g.clone(), p.clone(), ns.to_owned(), name.to_owned()), v)
            })
        })
    }

    /// Every object, without its key.
    pub fn values(&self) -> impl Iterator<Item = &Arc<Value>> {
        self.objects.values().flat_map(BTreeMap::values)
    }

    /// Whether any object has owner references or is being deleted.
    pub fn may_need_gc(&self) -> bool {
        self.gc_candidates > 0
    }

    /// Stores `obj` (which already carries its new `resourceVersion`) and notifies watches.
    pub fn put(&mut self, key: ObjectKey, obj: Value) {
        let rv = rv_of(&obj);
        let obj = Arc::new(obj);
        let (group, plural, ns, name) = key;
        let resource = (group, plural);
        let candidate = gc_candidate(&obj);
        let old = self
            .objects
            .entry(resource.clone())
            .or_default()
            .insert(format!("{ns}/{name}"), obj.clone());
        let kind = match &old {
            Some(old) => {
                self.gc_candidates -= usize::from(gc_candidate(old));
                EventType::Modified
            }
            None => {
                self.len += 1;
                EventType::Added
            }
        };
        self.gc_candidates += usize::from(candidate);
        self.record(Event {
            rv,
            resource,
            kind,
            object: obj,
            old,
        });
    }

    /// Removes an object; `tombstone` is its final state with the deletion's version.
    pub fn remove(&mut self, key: &ObjectKey, tombstone: Value) -> Option<Arc<Value>> {
        let resource = (key.0.clone(), key.1.clone());
        let objects = self.objects.get_mut(&resource)?;
        let old = objects.remove(&position(key))?;
        if objects.is_empty() {
            self.objects.remove(&resource);
        }
        self.len -= 1;
        self.gc_candidates -= usize::from(gc_candidate(&old));
        self.record(Event {
            rv: rv_of(&tombstone),
            resource,
            kind: EventType::Deleted,
            object: Arc::new(tombstone),
            old: Some(old.clone()),
        });
        Some(old)
    }

    fn record(&mut self, event: Event) {
        self.watchers.retain(|w| {
            if w.resource != event.resource {
                return !w.tx.is_closed();
            }
            match w.event_for(event.kind, &event.object, event.old.as_deref()) {
                Some((kind, obj)) => w.send(kind.as_str(), obj),
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
            if let Some((kind, obj)) = watcher.event_for(e.kind, &e.object, e.old.as_deref()) {
                watcher.send(kind.as_str(), obj);
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
        self.len
    }
}

/// The `metadata.resourceVersion` of an object, as a number.
pub fn rv_of(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
