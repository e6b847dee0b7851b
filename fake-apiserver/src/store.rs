//! Storage: objects, one global `resourceVersion` counter, the event history watches replay
//! from, and the open watches. Objects are JSON, kept in their storage version.

use std::collections::{BTreeMap, VecDeque};

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
    object: Value,
    old: Option<Value>,
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
    fn event_for(
        &self,
        kind: EventType,
        new: &Value,
        old: Option<&Value>,
    ) -> Option<(EventType, Value)> {
        let now = self.selects(new);
        let before = old.is_some_and(|o| self.selects(o));
        match kind {
            EventType::Modified if now && !before => Some((EventType::Added, new.clone())),
            EventType::Modified if !now && before => Some((EventType::Deleted, new.clone())),
            EventType::Modified if !now => None,
            _ if now => Some((kind, new.clone())),
            _ => None,
        }
    }

    /// Sends one event line; false when the watch is closed.
    pub fn send(&self, kind: &str, object: &Value) -> bool {
        let mut object = object.clone();
        self.served.rewrite(&mut object);
        let line = json!({"type": kind, "object": object});
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        self.tx.send(Bytes::from(bytes)).is_ok()
    }
}

impl ResourceType {
    /// Sets `apiVersion` and `kind` to this served version (conversion strategy `None`).
    pub fn rewrite(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("apiVersion".to_owned(), Value::String(self.api_version()));
            map.insert("kind".to_owned(), Value::String(self.kind.clone()));
        }
    }
}

/// All state behind one lock.
#[derive(Debug)]
pub struct Store {
    rv: u64,
    uid: u64,
    objects: BTreeMap<ObjectKey, Value>,
    history: VecDeque<Event>,
    /// Events at or below this version are no longer retained: older watches get 410.
    compacted: u64,
    retain: usize,
    watchers: Vec<Watcher>,
}

impl Store {
    /// An empty store that keeps the last `retain` events for watches.
    pub fn new(retain: usize) -> Self {
        Self {
            rv: 1,
            uid: 0,
            objects: BTreeMap::new(),
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

    /// One object.
    pub fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key)
    }

    /// Objects of a resource, optionally in one namespace, sorted by namespace and name.
    pub fn list(
        &self,
        resource: &(String, String),
        namespace: Option<&str>,
    ) -> Vec<(&ObjectKey, &Value)> {
        self.objects
            .iter()
            .filter(|(k, _)| {
                k.0 == resource.0 && k.1 == resource.1 && namespace.is_none_or(|n| n == k.2)
            })
            .collect()
    }

    /// Every object, for garbage collection.
    pub fn all(&self) -> impl Iterator<Item = (&ObjectKey, &Value)> {
        self.objects.iter()
    }

    /// Stores `obj` (which already carries its new `resourceVersion`) and notifies watches.
    pub fn put(&mut self, key: ObjectKey, obj: Value) {
        let rv = rv_of(&obj);
        let old = self.objects.insert(key.clone(), obj.clone());
        let kind = if old.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(Event {
            rv,
            resource: (key.0, key.1),
            kind,
            object: obj,
            old,
        });
    }

    /// Removes an object; `tombstone` is its final state with the deletion's version.
    pub fn remove(&mut self, key: &ObjectKey, tombstone: Value) -> Option<Value> {
        let old = self.objects.remove(key)?;
        let rv = rv_of(&tombstone);
        self.record(Event {
            rv,
            resource: (key.0.clone(), key.1.clone()),
            kind: EventType::Deleted,
            object: tombstone,
            old: Some(old.clone()),
        });
        Some(old)
    }

    fn record(&mut self, event: Event) {
        self.watchers.retain(|w| {
            if w.resource != event.resource {
                return !w.tx.is_closed();
            }
            match w.event_for(event.kind, &event.object, event.old.as_ref()) {
                Some((kind, obj)) => w.send(kind.as_str(), &obj),
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
            if let Some((kind, obj)) = watcher.event_for(e.kind, &e.object, e.old.as_ref()) {
                watcher.send(kind.as_str(), &obj);
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
        self.objects.len()
    }
}

/// The `metadata.resourceVersion` of an object, as a number.
pub fn rv_of(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}
