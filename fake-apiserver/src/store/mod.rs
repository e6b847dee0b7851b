//! Storage: the served types and the stored objects behind one lock ([`State`], in
//! [`Shared`] with the server's settings), and what works on stored objects without asking
//! who writes: resource versions and watch history ([`objects`]), label and field
//! selectors ([`selector`]), patches ([`patch`]) and field ownership ([`ssa`]).

pub mod objects;
pub mod patch;
pub mod selector;
pub mod ssa;

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::config::Config;
use crate::error::ApiError;
use crate::resource::{self, ResourceType};
use objects::{ObjectKey, Store};

/// The served types and the stored objects.
#[derive(Debug)]
pub struct State {
    /// Objects, history and watches.
    pub store: Store,
    /// Served resource types, built-in and from CRDs.
    pub types: Vec<Arc<ResourceType>>,
    /// Whether garbage collection runs.
    pub gc: bool,
    /// Whether each namespace gets `kube-root-ca.crt` and a `default` ServiceAccount.
    pub namespace_defaults: bool,
    /// Set while the namespace controller deletes content, so removals do not re-enter it.
    pub syncing_namespace: bool,
    /// Service cluster IPs and node ports in use.
    pub services: crate::rules::defaults::Allocator,
}

/// The key of the Namespace object `ns`.
pub fn namespace_key(ns: &str) -> ObjectKey {
    (String::new(), "namespaces".into(), String::new(), ns.into())
}

impl State {
    /// The served type of `plural` in `group`/`version`.
    pub fn find_type(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    /// A served version of `plural` in `group` (the built-in kinds serve one).
    pub fn type_of(&self, group: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types.iter().find(|t| t.is(group, plural)).cloned()
    }

    /// Where object `name` of `rt` is stored (a cluster-scoped one has no namespace).
    pub fn key(rt: &ResourceType, namespace: Option<&str>, name: &str) -> ObjectKey {
        let (g, p) = rt.storage_key();
        (
            g,
            p,
            if rt.namespaced {
                namespace.unwrap_or("").to_owned()
            } else {
                String::new()
            },
            name.to_owned(),
        )
    }

    /// Whether namespace `ns` exists.
    pub fn namespace_exists(&self, ns: &str) -> bool {
        self.store.contains(&namespace_key(ns))
    }

    /// Whether namespace `ns` is being deleted.
    pub fn namespace_terminating(&self, ns: &str) -> bool {
        self.store
            .get(&namespace_key(ns))
            .is_some_and(|n| n.pointer("/metadata/deletionTimestamp").is_some())
    }

    /// One object, as `rt` serves it (see [`ResourceType::served`]), or its 404.
    pub fn get(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.store
            .get(&Self::key(rt, namespace, name))
            .map(|o| rt.served(&o))
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))
    }

    /// Serves the versions of an accepted CRD, in place of what it served before.
    pub fn serve_crd(&mut self, crd: &Value) {
        let Ok(new_types) = resource::crd::from_crd(crd) else {
            return;
        };
        if let Some(first) = new_types.first() {
            let (g, p) = (first.group.clone(), first.plural.clone());
            self.types.retain(|t| !(t.group == g && t.plural == p));
        }
        self.types.extend(new_types.into_iter().map(Arc::new));
    }

    /// Stops serving a deleted CRD's resource; its `(group, plural)`, whose objects remain.
    pub fn stop_serving_crd(&mut self, crd: &Value) -> (String, String) {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.types
            .retain(|t| !(t.custom && t.group == group && t.plural == plural));
        (group, plural)
    }
}

/// One server's state behind its lock, and its settings: what its clones, the requests in
/// flight and the open watches share. Webhook calls run without the lock and take it again.
#[derive(Debug)]
pub struct Shared {
    /// Objects and types.
    pub state: Mutex<State>,
    /// Settings.
    pub config: Config,
}

impl Shared {
    /// A server that serves the built-in kinds and stores nothing yet.
    pub fn new(config: Config) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                store: Store::new(config.history),
                types: resource::builtins().into_iter().map(Arc::new).collect(),
                gc: config.garbage_collection,
                namespace_defaults: config.namespace_defaults,
                syncing_namespace: false,
                services: crate::rules::defaults::Allocator::new(&config.service_cidr)
                    .unwrap_or_default(),
            }),
            config,
        })
    }

    /// The state, even if a panicking test poisoned the lock.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
