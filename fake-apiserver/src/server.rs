//! [`FakeApiServer`], the server as its users hold it: a `tower::Service` for
//! `kube::Client`, HTTP on loopback for kubectl, and the test API (seeding, reading the
//! store, the action log, faults, watches) over the layers below.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use crate::admission::Ctx;
use crate::admission::authorization::access::{AccessLog, AccessReport, Acting};
use crate::admission::authorization::{User, bootstrap};
use crate::config::Config;
use crate::error::ApiError;
use crate::http::body::ResponseBody;
use crate::http::control::{self, Action, Controls, Matcher};
use crate::http::serve::Served;
use crate::registry;
use crate::resource::{self, ObjectRef};
use crate::store::Shared;

/// An in-memory Kubernetes API server; clones share one server.
#[derive(Clone, Debug)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
    controls: Arc<Controls>,
    /// The requests of each user a handle acted as, by user name.
    access: Arc<Mutex<BTreeMap<String, Arc<AccessLog>>>>,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// A server with the built-in kinds, the `default`, `kube-system`, `kube-public` and
    /// `kube-node-lease` namespaces, and garbage collection on.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// A server with other settings.
    pub fn with_config(config: Config) -> Self {
        let controls = Arc::new(Controls::new(config.action_log));
        let shared = Shared::new(config);
        {
            let mut state = shared.lock();
            let namespaces = state
                .type_of("", "namespaces")
                .expect("namespaces is built in");
            for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                let obj = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                let _ = registry::create::create(
                    &mut state,
                    &namespaces,
                    None,
                    obj,
                    &mut Ctx::system(),
                );
            }
            seed_rbac_defaults(&mut state);
        }
        Self {
            shared,
            controls,
            access: Arc::default(),
        }
    }

    /// Stores an object as a client's create would (CRDs start serving their resources),
    /// then sets its `status` as given, which a create would drop.
    pub fn seed(&self, object: impl serde::Serialize) -> Result<Value, ApiError> {
        let obj = serde_json::to_value(object).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let mut state = self.shared.lock();
        let rt = type_of(&state.types, &obj)?;
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let status = obj.get("status").cloned();
        let mut ctx = Ctx::named("fake-apiserver-seed");
        let created = registry::create::create(&mut state, &rt, ns.as_deref(), obj, &mut ctx)?;
        match status {
            Some(status) if rt.status => {
                let name = created
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let mut with_status = created.clone();
                with_status["status"] = status;
                let at = ObjectRef {
                    rt: &rt,
                    namespace: ns.as_deref(),
                    name: &name,
                    subresource: Some("status"),
                };
                registry::update::update(&mut state, at, with_status, &mut ctx, None)
            }
            _ => Ok(created),
        }
    }

    /// Seeds every document of a YAML stream (`---` separated), in order.
    pub fn seed_yaml(&self, yaml: &str) -> Result<Vec<Value>, ApiError> {
        let docs: Vec<Value> = serde_saphyr::from_multiple(yaml)
            .map_err(|e| ApiError::bad_request(format!("invalid YAML: {e}")))?;
        docs.into_iter()
            .filter(|d| !d.is_null())
            .map(|d| self.seed(d))
            .collect()
    }

    /// One stored object, as a client would read it (`apiVersion` like `apps/v1`).
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let state = self.shared.lock();
        let rt = find(&state.types, api_version, kind)?;
        state.get(&rt, namespace, name).ok()
    }

    /// One stored object, deserialized: `server.object::<Deployment>("apps/v1", "Deployment", Some("ns"), "web")`.
    pub fn object<K: serde::de::DeserializeOwned>(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<K> {
        serde_json::from_value(self.get(api_version, kind, namespace, name)?).ok()
    }

    /// Every stored object of a kind, optionally in one namespace, sorted by namespace and name.
    pub fn list(&self, api_version: &str, kind: &str, namespace: Option<&str>) -> Vec<Value> {
        let state = self.shared.lock();
        let Some(rt) = find(&state.types, api_version, kind) else {
            return Vec::new();
        };
        state
            .store
            .list(&rt.storage_key(), namespace, None)
            .filter_map(|(_, stored)| stored.value())
            .map(|mut o| {
                rt.rewrite(&mut o);
                o
            })
            .collect()
    }

    /// The requests the server received, in order: the newest [`Config::action_log`]
    /// (10 000 by default) since the last [`clear_actions`](Self::clear_actions).
    pub fn actions(&self) -> Vec<Action> {
        self.action_log().entries().collect()
    }

    /// How many requests were dropped from (or, with a log of 0, never put in) the action
    /// log since the last [`clear_actions`](Self::clear_actions).
    pub fn actions_dropped(&self) -> u64 {
        self.action_log().dropped()
    }

    fn action_log(&self) -> std::sync::MutexGuard<'_, control::ActionLog> {
        self.controls.actions()
    }

    /// The requests that write (not get, list or watch).
    pub fn writes(&self) -> Vec<Action> {
        self.actions()
            .into_iter()
            .filter(Action::is_write)
            .collect()
    }

    /// Forgets the recorded actions.
    pub fn clear_actions(&self) {
        self.action_log().clear();
    }

    /// Makes matching requests fail with `error`, `times` times (`None`: until cleared).
    pub fn fail(&self, matcher: Matcher, error: ApiError, times: Option<usize>) {
        self.faults().add(matcher, Some(error), None, times);
    }

    /// Delays matching requests by `delay`, `times` times (`None`: until cleared).
    pub fn delay(&self, matcher: Matcher, delay: Duration, times: Option<usize>) {
        self.faults().add(matcher, None, Some(delay), times);
    }

    /// Makes watches of `resource` (plural, `"*"` for every resource) deliver each event
    /// `lag` after it happened (after the watch took it from the server's queue, which is
    /// at once while its client keeps reading), open watches included, as a busy cluster's
    /// watch cache does: a controller's cache then lags behind the writes it made itself, so a
    /// reconcile can read the version from before its own write. `Duration::ZERO` removes
    /// the lag (events held back are then sent at once); [`clear_faults`](Self::clear_faults)
    /// leaves lags alone.
    pub fn lag_watches(&self, resource: &str, lag: Duration) {
        self.controls
            .lag_watches((resource != "*").then_some(resource), lag);
    }

    /// Removes every programmed fault.
    pub fn clear_faults(&self) {
        self.faults().clear();
    }

    fn faults(&self) -> std::sync::MutexGuard<'_, control::Faults> {
        self.controls.faults()
    }

    /// Closes every open watch; clients see the stream end and watch again.
    pub fn drop_watches(&self) {
        self.shared.lock().store.drop_watches();
    }

    /// Sends `410 Gone` to every open watch and forgets the history, so clients must re-list.
    pub fn expire_watches(&self) {
        let mut state = self.shared.lock();
        state.store.compact();
        let status = ApiError::gone("too old resource version").to_status();
        state.store.expire_watches(&status);
    }

    /// Forgets the watch history: a watch from any earlier version gets `410 Gone`.
    pub fn compact(&self) {
        self.shared.lock().store.compact();
    }

    /// Open watches.
    pub fn open_watches(&self) -> usize {
        self.shared.lock().store.open_watches()
    }

    /// Stored objects, the built-in namespaces included.
    pub fn object_count(&self) -> usize {
        self.shared.lock().store.len()
    }

    /// Serves over HTTP/1.1 on `addr`, which must be a loopback address (port 0 picks one),
    /// within the limits of [`Config::http`].
    pub async fn serve(&self, addr: std::net::SocketAddr) -> std::io::Result<Served> {
        let limits = self.shared.config.http.clone();
        crate::http::serve::listen(self.clone(), addr, limits).await
    }

    /// A handle whose requests the server takes as `user`'s: authorized by RBAC against
    /// the Roles, ClusterRoles and bindings stored here (a user in `system:masters` is
    /// allowed everything), and recorded for [`access_report`](Self::access_report). The
    /// server's own handle acts as `kubernetes-admin` in `system:masters`.
    pub fn as_user(&self, user: User) -> AsUser {
        let log = self
            .access
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(user.name.clone())
            .or_default()
            .clone();
        AsUser {
            server: self.clone(),
            acting: Arc::new(Acting { user, log }),
        }
    }

    /// A bearer token that authenticates `user` over HTTP ([`serve`](Self::serve)), as a
    /// token of a real cluster would: requests with it are authorized as that user (and
    /// may impersonate only what its RBAC allows). Each call gives a new token. A token
    /// the server did not give out is answered `401 Unauthorized`.
    pub fn token_for_user(&self, user: User) -> String {
        self.controls.mint_token(user)
    }

    /// A bearer token of ServiceAccount `name` of `namespace` (its user and groups), as
    /// its pod's projected token would be: see [`token_for_user`](Self::token_for_user).
    pub fn token_for_service_account(&self, namespace: &str, name: &str) -> String {
        self.token_for_user(User::service_account(namespace, name))
    }

    /// A handle acting as ServiceAccount `name` of `namespace`
    /// (`system:serviceaccount:<namespace>:<name>`, with its groups), as a controller's pod
    /// would with its token: `kube::Client::new(server.as_service_account("ns", "ctl"), "ns")`.
    pub fn as_service_account(&self, namespace: &str, name: &str) -> AsUser {
        self.as_user(User::service_account(namespace, name))
    }

    /// What the requests made through [`as_user`](Self::as_user) handles for `user_name`
    /// used of the rules granted to it, the grants they never used, and the requests
    /// refused: the least-privilege check of a test.
    pub fn access_report(&self, user_name: &str) -> AccessReport {
        let log = self
            .access
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(user_name)
            .cloned()
            .unwrap_or_default();
        let user = User::parse(user_name);
        AccessReport::new(&*self.shared.lock(), &user, &log)
    }

    /// The current global `resourceVersion`.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.resource_version()
    }
}

impl<B> tower::Service<http::Request<B>> for FakeApiServer
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<crate::http::BoxError>,
{
    type Response = http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        let controls = self.controls.clone();
        Box::pin(async move { Ok(crate::http::call(&shared, &controls, req).await) })
    }
}

/// Stores the ClusterRoles and ClusterRoleBindings kube-apiserver creates at start.
fn seed_rbac_defaults(state: &mut crate::store::State) {
    let mut ctx = Ctx::named(bootstrap::MANAGER);
    for obj in bootstrap::stored() {
        let Ok(rt) = type_of(&state.types, &obj) else {
            continue;
        };
        let _ = registry::create::create(state, &rt, None, obj, &mut ctx);
    }
}

/// The server as one user sees it (see [`FakeApiServer::as_user`]): a `tower::Service`
/// for `kube::Client` whose requests the server authenticates as that user.
#[derive(Clone, Debug)]
pub struct AsUser {
    server: FakeApiServer,
    acting: Arc<Acting>,
}

impl AsUser {
    /// A client acting as the user, its default namespace the ServiceAccount's own (or
    /// `default` for other users). Without the `test-env` feature, use
    /// `kube::Client::new(handle, namespace)`.
    #[cfg(feature = "test-env")]
    pub fn client(&self) -> kube::Client {
        let namespace = self
            .acting
            .user
            .service_account_of()
            .map_or("default", |(ns, _)| ns);
        kube::Client::new(self.clone(), namespace)
    }

    /// The user.
    pub fn user(&self) -> &User {
        &self.acting.user
    }

    /// The report of what the user's requests used (see
    /// [`FakeApiServer::access_report`]).
    pub fn access_report(&self) -> AccessReport {
        AccessReport::new(
            &*self.server.shared.lock(),
            &self.acting.user,
            &self.acting.log,
        )
    }
}

impl<B> tower::Service<http::Request<B>> for AsUser
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<crate::http::BoxError>,
{
    type Response = http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        req.extensions_mut().insert(self.acting.clone());
        self.server.call(req)
    }
}

fn find(
    types: &[Arc<resource::ResourceType>],
    api_version: &str,
    kind: &str,
) -> Option<Arc<resource::ResourceType>> {
    types
        .iter()
        .find(|t| t.api_version() == api_version && (t.kind == kind || t.plural == kind))
        .cloned()
}

fn type_of(
    types: &[Arc<resource::ResourceType>],
    obj: &Value,
) -> Result<Arc<resource::ResourceType>, ApiError> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    find(types, av, kind).ok_or_else(|| {
        ApiError::bad_request(format!(
            "no resource is served for apiVersion `{av}`, kind `{kind}`"
        ))
    })
}
