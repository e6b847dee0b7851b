//! Request handling: every verb with the real server's semantics, over one locked state.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::body::{self, ResponseBody};
use crate::control::{Action, Faults};
use crate::error::ApiError;
use crate::patch;
use crate::registry::{self, ResourceType};
use crate::request::{self, Route, Target};
use crate::selector::{FieldSelector, LabelSelector};
use crate::state::{State, name_of, set_meta};
use crate::store::{Store, Watcher};

/// Settings of one server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Delete dependents whose owners are gone (on by default).
    pub garbage_collection: bool,
    /// How often open watches that asked for bookmarks get one.
    pub bookmark_interval: Duration,
    /// How many events are kept for watches that resume from a version.
    pub history: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            garbage_collection: true,
            bookmark_interval: Duration::from_secs(30),
            history: 10_000,
        }
    }
}

/// Everything one server shares between its clones.
#[derive(Debug)]
pub struct Shared {
    /// Objects and types.
    pub state: Mutex<State>,
    /// Recorded actions.
    pub actions: Mutex<Vec<Action>>,
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
                types: registry::builtins(),
                gc: config.garbage_collection,
            }),
            actions: Mutex::new(Vec::new()),
            faults: Mutex::new(Faults::default()),
            config,
        });
        {
            let mut state = shared.lock();
            for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
                let rt = ns_type(&state.types);
                let _ = state.create(&rt, None, obj, &Ctx::system());
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

fn ns_type(types: &[ResourceType]) -> ResourceType {
    types
        .iter()
        .find(|t| t.group.is_empty() && t.plural == "namespaces")
        .cloned()
        .expect("namespaces is built in")
}

/// Who writes and how: the field manager and dry-run.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub(crate) manager: String,
    pub(crate) dry_run: bool,
}

impl Ctx {
    pub(crate) fn system() -> Self {
        Self::named("fake-apiserver")
    }

    /// Writes as field manager `manager`.
    pub fn named(manager: &str) -> Self {
        Self {
            manager: manager.to_owned(),
            dry_run: false,
        }
    }
}

/// Handles one request.
pub async fn handle(shared: &Arc<Shared>, req: http::Request<Bytes>) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let params = request::query(parts.uri.query());
    let route = request::route(parts.uri.path());
    let target = match route {
        Route::Resource(t) => t,
        other => return crate::discovery::respond(shared, &other, parts.uri.path()),
    };
    let verb = verb_of(&parts.method, &target, &params);
    let action = Action {
        verb: verb.to_owned(),
        group: target.group.clone(),
        version: target.version.clone(),
        resource: target.plural.clone(),
        subresource: target.subresource.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        body: serde_json::from_slice(&body).ok(),
    };
    shared
        .actions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(action.clone());
    let (delay, fault) = shared
        .faults
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .check(&action);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(err) = fault {
        return body::error(&err);
    }
    if verb == "watch" {
        return crate::watch::start(shared, &target, &params);
    }
    let accept = parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let user_agent = parts
        .headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let ctx = Ctx {
        manager: params
            .get("fieldManager")
            .cloned()
            .unwrap_or_else(|| default_manager(user_agent)),
        dry_run: params.get("dryRun").is_some_and(|d| d == "All"),
    };
    if content_type.starts_with("application/vnd.kubernetes.protobuf")
        || content_type.starts_with("application/cbor")
    {
        // JSON and YAML only; clients that can fall back to JSON do so on a 415.
        return body::error(&ApiError::unsupported_media_type(&content_type));
    }
    let mut state = shared.lock();
    let Some(rt) = state.find_type(&target) else {
        return body::error(&ApiError::no_route(parts.uri.path()));
    };
    if rt.namespaced && target.namespace.is_none() && !matches!(verb, "list" | "watch") {
        return body::error(&ApiError::no_route(parts.uri.path()));
    }
    if !rt.namespaced && target.namespace.is_some() {
        return body::error(&ApiError::no_route(parts.uri.path()));
    }
    let ns = target.namespace.as_deref();
    let name = target.name.as_deref().unwrap_or("");
    let sub = target.subresource.as_deref();
    match sub {
        None | Some("status") if sub.is_none() || rt.status => {}
        Some("scale") if rt.scale.is_some() => {}
        Some(s) => return body::error(&ApiError::no_route(&format!("{}/{s}", rt.plural))),
        None => {}
    }
    let json_body = || -> Result<Value, ApiError> {
        if content_type.contains("yaml") {
            serde_saphyr::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
        } else {
            serde_json::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))
        }
    };
    let result: Result<(StatusCode, Value), ApiError> = (|| match (verb, sub) {
        ("get", Some("scale")) => Ok((StatusCode::OK, scale_of(&rt, &state.get(&rt, ns, name)?))),
        ("get", _) => Ok((StatusCode::OK, state.get(&rt, ns, name)?)),
        ("list", _) => list(&state, &rt, ns, &params, &accept).map(|v| (StatusCode::OK, v)),
        ("create", None) => {
            let obj = state.create(&rt, ns, json_body()?, &ctx)?;
            Ok((StatusCode::CREATED, obj))
        }
        ("update", Some("scale")) => {
            let scale = json_body()?;
            let obj = set_scale(&mut state, &rt, ns, name, &scale, &ctx)?;
            Ok((StatusCode::OK, scale_of(&rt, &obj)))
        }
        ("update", _) => Ok((
            StatusCode::OK,
            state.update(&rt, ns, name, json_body()?, sub, &ctx, None)?,
        )),
        ("patch", Some("scale")) => {
            let mut scale = scale_of(&rt, &state.get(&rt, ns, name)?);
            let patch_body: Value =
                serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            match content_type.split(';').next().unwrap_or("") {
                "application/json-patch+json" => {
                    patch::json_patch(&mut scale, &patch_body).map_err(ApiError::bad_request)?
                }
                _ => patch::merge_patch(&mut scale, &patch_body),
            }
            let obj = set_scale(&mut state, &rt, ns, name, &scale, &ctx)?;
            Ok((StatusCode::OK, scale_of(&rt, &obj)))
        }
        ("patch", _) => {
            let force = params.get("force").is_some_and(|f| f == "true");
            let existed = state.store.get(&State::key(&rt, ns, name)).is_some();
            let obj = state.patch(&rt, ns, name, &content_type, &body, sub, &ctx, force)?;
            Ok((
                if existed {
                    StatusCode::OK
                } else {
                    StatusCode::CREATED
                },
                obj,
            ))
        }
        ("delete", None) => {
            let options = if body.is_empty() {
                json!({})
            } else {
                json_body()?
            };
            let obj = state.delete(&rt, ns, name, &options, &ctx)?;
            Ok((StatusCode::OK, obj))
        }
        ("deletecollection", None) => {
            let options = if body.is_empty() {
                json!({})
            } else {
                json_body()?
            };
            let listed = list(&state, &rt, ns, &params, "")?;
            let mut deleted = Vec::new();
            for item in listed["items"].as_array().cloned().unwrap_or_default() {
                let item_ns = item
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let item_name = name_of(&item).unwrap_or("").to_owned();
                deleted.push(state.delete(&rt, item_ns.as_deref(), &item_name, &options, &ctx)?);
            }
            let rv = state.store.resource_version();
            Ok((
                StatusCode::OK,
                json!({"apiVersion": rt.api_version(), "kind": format!("{}List", rt.kind), "metadata": {"resourceVersion": rv.to_string()}, "items": deleted}),
            ))
        }
        (verb, sub) => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({verb} {}{})",
            rt.plural,
            sub.map(|s| format!("/{s}")).unwrap_or_default()
        ))),
    })();
    drop(state);
    match result {
        Ok((code, value)) => body::json(code, &value),
        Err(err) => body::error(&err),
    }
}

fn default_manager(user_agent: &str) -> String {
    let name = user_agent.split('/').next().unwrap_or("").trim();
    if name.is_empty() {
        "unknown".to_owned()
    } else {
        name.to_owned()
    }
}

fn verb_of(method: &Method, target: &Target, params: &HashMap<String, String>) -> &'static str {
    let watch = params.get("watch").is_some_and(|w| w == "true" || w == "1");
    match (method.as_str(), target.name.is_some()) {
        ("GET", _) if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    }
}

/// Selectors of a list or watch request.
pub fn selectors(
    rt: &ResourceType,
    params: &HashMap<String, String>,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels = LabelSelector::parse(params.get("labelSelector").map_or("", String::as_str))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
    let fields = FieldSelector::parse(
        params.get("fieldSelector").map_or("", String::as_str),
        &rt.selectable_fields,
    )
    .map_err(ApiError::bad_request)?;
    Ok((labels, fields))
}

fn list(
    state: &State,
    rt: &ResourceType,
    ns: Option<&str>,
    params: &HashMap<String, String>,
    accept: &str,
) -> Result<Value, ApiError> {
    let (labels, fields) = selectors(rt, params)?;
    let start_after = match params.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    let limit: usize = params
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let mut items = Vec::new();
    let mut more = false;
    let mut remaining = 0u64;
    for (key, obj) in state.store.list(&rt.storage_key(), ns) {
        let pos = format!("{}/{}", key.2, key.3);
        if start_after.as_ref().is_some_and(|s| pos <= *s) {
            continue;
        }
        let served = State::served(rt, obj);
        if !labels.matches(served.pointer("/metadata/labels")) || !fields.matches(&served) {
            continue;
        }
        if items.len() == limit {
            more = true;
            remaining += 1;
            continue;
        }
        items.push(served);
    }
    let rv = state.store.resource_version();
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if more && let Some(last) = items.last() {
        let ns = last
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        metadata["continue"] = json!(encode_continue(&format!(
            "{ns}/{}",
            name_of(last).unwrap_or("")
        )));
        metadata["remainingItemCount"] = json!(remaining);
    }
    if accept.contains("as=Table") {
        return Ok(crate::discovery::table(rt, &items, metadata));
    }
    Ok(
        json!({"apiVersion": rt.api_version(), "kind": format!("{}List", rt.kind), "metadata": metadata, "items": items}),
    )
}

fn encode_continue(pos: &str) -> String {
    pos.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_continue(token: &str) -> Result<String, ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid");
    if !token.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes: Result<Vec<u8>, _> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
        .collect();
    String::from_utf8(bytes.map_err(|_| bad())?).map_err(|_| bad())
}

fn path_get<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(obj, |v, k| v.get(k))
}

fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
    let paths = rt.scale.as_ref().expect("checked before");
    let meta = obj.get("metadata").cloned().unwrap_or(json!({}));
    let mut status =
        json!({"replicas": path_get(obj, &paths.status_replicas).cloned().unwrap_or(json!(0))});
    if let Some(sel) = paths
        .label_selector
        .as_deref()
        .and_then(|p| path_get(obj, p))
    {
        status["selector"] = sel.clone();
    }
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {
            "name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"), "creationTimestamp": meta.get("creationTimestamp"),
        },
        "spec": {"replicas": path_get(obj, &paths.spec_replicas).cloned().unwrap_or(json!(0))},
        "status": status,
    })
}

fn set_scale(
    state: &mut State,
    rt: &ResourceType,
    ns: Option<&str>,
    name: &str,
    scale: &Value,
    ctx: &Ctx,
) -> Result<Value, ApiError> {
    let paths = rt.scale.clone().expect("checked before");
    let mut obj = state.get(rt, ns, name)?;
    let replicas = scale.pointer("/spec/replicas").cloned().unwrap_or(json!(0));
    let mut node = &mut obj;
    let segs: Vec<&str> = paths
        .spec_replicas
        .trim_start_matches('.')
        .split('.')
        .collect();
    for seg in &segs[..segs.len() - 1] {
        if !node.get(*seg).is_some_and(Value::is_object) {
            node[*seg] = json!({});
        }
        node = node.get_mut(*seg).expect("created above");
    }
    node[segs[segs.len() - 1]] = replicas;
    if let Some(rv) = scale.pointer("/metadata/resourceVersion") {
        set_meta(&mut obj, "resourceVersion", rv.clone());
    } else if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    state.update(rt, ns, name, obj, None, ctx, None)
}

/// Registers an open watch: its channel and selectors. Returns the receiver.
pub fn open_watch(
    rt: &ResourceType,
    namespace: Option<&str>,
    labels: LabelSelector,
    fields: FieldSelector,
) -> (Watcher, mpsc::UnboundedReceiver<Bytes>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (
        Watcher {
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
