//! What one server's clones share: the state (objects and types), the action log, the
//! programmed faults and the settings.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::json;

use crate::control::{ActionLog, Faults};
use crate::resource::{self, ResourceType};
use crate::state::State;
use crate::store::Store;
use crate::writer::Ctx;

/// Settings of one server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Delete dependents whose owners are gone (on by default).
    pub garbage_collection: bool,
    /// How often open watches that asked for bookmarks get one.
    pub bookmark_interval: Duration,
    /// How many events are kept for watches that resume from a version.
    pub history: usize,
    /// Put a `kube-root-ca.crt` ConfigMap and a `default` ServiceAccount in every namespace,
    /// as kube-controller-manager does (on by default; off for an empty world).
    pub namespace_defaults: bool,
    /// How many requests [`FakeApiServer::actions`](crate::FakeApiServer::actions) keeps,
    /// newest last; older ones are dropped (and counted), 0 records none.
    pub action_log: usize,
    /// Where the Services that webhook configurations name are served: `"namespace/name"`
    /// to a loopback address (the fake has no cluster network to find them in).
    pub webhook_services: std::collections::BTreeMap<String, std::net::SocketAddr>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            garbage_collection: true,
            bookmark_interval: Duration::from_secs(30),
            history: 10_000,
            namespace_defaults: true,
            action_log: 10_000,
            webhook_services: std::collections::BTreeMap::new(),
        }
    }
}

/// Everything one server shares between its clones.
#[derive(Debug)]
pub struct Shared {
    /// Objects and types.
    pub state: Mutex<State>,
    /// Recorded actions.
    pub actions: Mutex<ActionLog>,
    /// Programmed faults.
    pub faults: Mutex<Faults>,
    /// Settings.
    pub config: Config,
}

impl Shared {
    /// A server with the built-in kinds and the namespaces every cluster has.
    pub fn new(config: Config) -> Arc<Self> {
        let shared = Arc::new(Self {
            state: Mutex::new(State {
                store: Store::new(config.history),
                types: resource::builtins().into_iter().map(Arc::new).collect(),
                gc: config.garbage_collection,
                namespace_defaults: config.namespace_defaults,
                syncing_namespace: false,
            }),
            actions: Mutex::new(ActionLog::new(config.action_log)),
            faults: Mutex::new(Faults::default()),
            config,
        });
        {
            let mut state = shared.lock();
            for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                let rt = ns_type(&state.types);
                let _ = state.create(&rt, None, obj, &mut Ctx::system());
            }
        }
        shared
    }

    /// The state, even if a panicking test poisoned the lock.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn ns_type(types: &[Arc<ResourceType>]) -> Arc<ResourceType> {
    types
        .iter()
        .find(|t| t.group.is_empty() && t.plural == "namespaces")
        .cloned()
        .expect("namespaces is built in")
}
