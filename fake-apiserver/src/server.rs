//! Request handling: routing and content negotiation as the real server's router does it,
//! then every verb with its semantics, over one locked state.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::admission::Ctx;
use crate::admission::decode::options::{ListOptions, Query, WriteOptions};
use crate::admission::decode::type_meta::Expected;
use crate::admission::decode::{
    SERIALIZERS, decode_body, decode_builtin, delete_options, protobuf,
};
use crate::body::{self, ResponseBody};
use crate::control::{Action, Controls, Recorded};
use crate::conversion::{self, Conversions};
use crate::error::ApiError;
use crate::meta::{name_of, set_meta};
use crate::request::{self, Route, Target};
use crate::resource::ResourceType;
use crate::store::Shared;
use crate::store::State;
use crate::store::patch;

/// The verb a method and path mean, or why the path does not take the method.
fn verb_of(
    method: &Method,
    target: &Target,
    rt: &ResourceType,
    query: &Query,
) -> Result<&'static str, ApiError> {
    let item = target.name.is_some();
    let sub = target.subresource.is_some();
    // A namespaced resource across all namespaces is only listed and watched.
    let all_namespaces = rt.namespaced && target.namespace.is_none();
    let not_allowed = || Err(ApiError::method_not_allowed());
    match method.as_str() {
        "GET" if query.flag("watch") && !sub => Ok("watch"),
        "GET" if item => Ok("get"),
        "GET" => Ok("list"),
        _ if all_namespaces => not_allowed(),
        "POST" if !item => Ok("create"),
        // Custom resources create from the body even when the path names an object.
        "POST" if rt.custom && !sub => Ok("create"),
        "PUT" if item => Ok("update"),
        "PUT" if rt.custom => Err(ApiError::bad_request("name must be provided")),
        "PATCH" if item => Ok("patch"),
        "PATCH" if rt.custom => Err(ApiError::bad_request("name must be provided")),
        "DELETE" if item && !sub => Ok("delete"),
        // Namespaces cannot be deleted as a collection.
        "DELETE" if !item && !rt.is("", "namespaces") => Ok("deletecollection"),
        _ => not_allowed(),
    }
}

fn header(parts: &http::request::Parts, name: http::header::HeaderName) -> &str {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The media type without parameters, lower case.
fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether some entry of `Accept` is one the server can answer.
fn acceptable(accept: &str, stream: bool) -> bool {
    accept.trim().is_empty()
        || accept.split(',').any(|entry| {
            let t = media_type(entry);
            t == "*/*"
                || t == "application/*"
                || SERIALIZERS.contains(&t.as_str())
                || (stream && t == "application/json;stream=watch")
        })
}

/// Handles one request.
pub async fn handle(
    shared: &Arc<Shared>,
    controls: &Controls,
    req: http::Request<Bytes>,
) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let query = Query::parse(parts.uri.query());
    let target = match request::route(parts.uri.path()) {
        Route::Resource(t) => t,
        other => return crate::discovery::respond(shared, &other, parts.uri.path()),
    };
    let Some(rt) = shared
        .lock()
        .find_type(&target.group, &target.version, &target.plural)
    else {
        return body::error(&ApiError::no_route(parts.uri.path()));
    };
    let mut response = handle_resource(shared, controls, &parts, &query, &target, &rt, body).await;
    body::prepend_warnings(&mut response, &rt.warnings);
    response
}

/// Handles one request for a served resource.
async fn handle_resource(
    shared: &Arc<Shared>,
    controls: &Controls,
    parts: &http::request::Parts,
    query: &Query,
    target: &Target,
    rt: &Arc<ResourceType>,
    body: Bytes,
) -> Response<ResponseBody> {
    if !rt.namespaced && target.namespace.is_some() {
        return body::error(&ApiError::no_route(parts.uri.path()));
    }
    match target.subresource.as_deref() {
        None => {}
        Some("status") if rt.status => {}
        Some("scale") if rt.scale.is_some() => {}
        Some("finalize") if rt.is("", "namespaces") => {}
        Some(_) => return body::error(&ApiError::no_route(parts.uri.path())),
    }
    let verb = match verb_of(&parts.method, target, rt, query) {
        Ok(v) => v,
        Err(e) => return body::error(&e),
    };
    let action = Action {
        verb: verb.to_owned(),
        group: target.group.clone(),
        version: target.version.clone(),
        resource: target.plural.clone(),
        subresource: target.subresource.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
        body: None,
    };
    controls.actions().push(
        action.clone(),
        Recorded {
            // A copy, sized to the body: a slice would keep the whole read buffer alive.
            bytes: Bytes::copy_from_slice(&body),
            content_type: header(parts, http::header::CONTENT_TYPE).to_owned(),
            decode: logged_body,
        },
    );
    let (delay, fault) = controls.faults().check(&action);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(err) = fault {
        return body::error(&err);
    }
    let accept = header(parts, http::header::ACCEPT).to_owned();
    if !acceptable(&accept, matches!(verb, "list" | "watch")) && !accept.contains("as=Table") {
        let mut available = SERIALIZERS.to_vec();
        if matches!(verb, "list" | "watch") {
            available.extend([
                "application/json;stream=watch",
                "application/vnd.kubernetes.protobuf;stream=watch",
            ]);
        }
        return body::error_indented(&ApiError::not_acceptable(&available));
    }
    if verb == "watch" {
        return match ListOptions::parse(query, true) {
            Ok(options) => crate::watch::start(shared, rt, target, &options),
            Err(e) => body::error(&e),
        };
    }
    let content_type = media_type(header(parts, http::header::CONTENT_TYPE));
    let user_agent = header(parts, http::header::USER_AGENT).to_owned();
    let writes = matches!(verb, "create" | "update" | "patch" | "delete");
    // Objects a conversion webhook converts stop the request before it changes anything;
    // it runs again once they are converted.
    let mut conversions = Conversions::default();
    let mut rounds = 0;
    let result = loop {
        let req = Req {
            shared,
            rt,
            target,
            user_agent: &user_agent,
            accept: &accept,
            conversions: &conversions,
        };
        let result = run(&req, verb, query, &content_type, &body, writes).await;
        let pending = result.as_ref().err().and_then(conversion::pending_of);
        match pending {
            Some((objects, desired)) if rounds < conversion::ROUNDS => {
                rounds += 1;
                if let Err(e) =
                    conversion::webhook::convert(shared, rt, &objects, &desired, &mut conversions)
                        .await
                {
                    break Err(e);
                }
            }
            Some(_) => {
                break Err(ApiError::internal(
                    "the objects of this request kept changing while they were converted",
                ));
            }
            None => break result,
        }
    };
    match result {
        Ok((code, Out::Owned(value), warnings)) => {
            body::json_with_warnings(code, &value, &warnings)
        }
        Ok((code, Out::Json(json), _)) => body::json_bytes(code, json),
        Err(err) => body::error(&err),
    }
}

/// What stays the same across the runs of one request that is not a watch (admission runs
/// it again with another verb, query or body; a conversion, with more objects converted).
#[derive(Clone, Copy)]
struct Req<'a> {
    shared: &'a Arc<Shared>,
    rt: &'a ResourceType,
    target: &'a Target,
    user_agent: &'a str,
    accept: &'a str,
    /// What the CRD's conversion webhook has converted for the request so far.
    conversions: &'a Conversions,
}

/// One run of a request that is not a watch: through the admission webhooks when
/// configurations register some.
async fn run(
    req: &Req<'_>,
    verb: &str,
    query: &Query,
    content_type: &str,
    body: &[u8],
    writes: bool,
) -> Result<Answer, ApiError> {
    let Req {
        shared, rt, target, ..
    } = *req;
    let this = |verb: &str, query: &Query, content_type: &str, body: &[u8]| {
        respond(req, verb, query, content_type, body)
    };
    if writes && crate::admission::webhooks::configured(&shared.lock()) {
        // Through the admission webhooks the configurations register.
        let respond = |verb: &str, query: &Query, content_type: &str, body: &[u8]| {
            this(verb, query, content_type, body)
                .map(|(code, out, warnings)| (code, out.into_value(), warnings))
        };
        crate::admission::webhooks::admit(
            shared,
            rt,
            target,
            verb,
            query,
            content_type,
            body,
            respond,
        )
        .await
        .map(|(code, value, warnings)| (code, Out::Owned(value), warnings))
    } else {
        this(verb, query, content_type, body)
    }
}

/// A request body as the action log keeps it: JSON, whatever it was sent as.
fn logged_body(content_type: &str, body: &[u8]) -> Option<Value> {
    match media_type(content_type).as_str() {
        "application/vnd.kubernetes.protobuf" => protobuf::decode(body).ok(),
        "application/yaml" | "application/apply-patch+yaml" => serde_json::from_slice(body)
            .ok()
            .or_else(|| serde_saphyr::from_slice(body).ok()),
        _ => serde_json::from_slice(body).ok(),
    }
}

type Answer = (StatusCode, Out, Vec<String>);

/// A response body: built for this request, or JSON the store holds, served as it is.
enum Out {
    Owned(Value),
    Json(Bytes),
}

impl Out {
    fn into_value(self) -> Value {
        match self {
            Out::Owned(v) => v,
            Out::Json(json) => serde_json::from_slice(&json).unwrap_or_default(),
        }
    }
}

/// The server's own handling of one run of a request that is not a watch.
fn respond(
    req: &Req<'_>,
    verb: &str,
    query: &Query,
    content_type: &str,
    body: &[u8],
) -> Result<Answer, ApiError> {
    let Req {
        shared,
        rt,
        target,
        user_agent,
        accept,
        conversions,
    } = *req;
    let ns = target.namespace.as_deref();
    let name = target.name.as_deref().unwrap_or("");
    let sub = target.subresource.as_deref();
    let write_ctx = |kind: &str, apply: bool| -> Result<(Ctx, bool), ApiError> {
        let options = WriteOptions::parse(query, kind, apply)?;
        let ctx = Ctx {
            manager: options
                .field_manager
                .clone()
                .unwrap_or_else(|| default_manager(user_agent)),
            dry_run: options.dry_run,
            field_validation: options.field_validation,
            warnings: Vec::new(),
            conversions: conversions.clone(),
        };
        Ok((ctx, options.force))
    };
    let done =
        |code: StatusCode, value: Value, ctx: Ctx| Ok((code, Out::Owned(value), ctx.warnings));
    let api_version = rt.api_version();
    let own_type = Expected {
        api_version: &api_version,
        kind: &rt.kind,
        custom: rt.custom,
    };
    let scale_type = Expected {
        api_version: "autoscaling/v1",
        kind: "Scale",
        custom: false,
    };
    match (verb, sub) {
        ("get", _) => {
            if let Some(rv) = query.get("resourceVersion") {
                check_get_resource_version(rv, shared.lock().store.resource_version())?;
            }
            let state = shared.lock();
            let key = State::key(rt, ns, name);
            let value = match state.store.raw(&key) {
                None => return Err(ApiError::not_found(&rt.group, &rt.plural, name)),
                // Stored in the version asked for: its bytes as they are.
                Some(stored) if sub.is_none() && rt.is_api_version(&stored.api_version) => {
                    Out::Json(stored.json.clone())
                }
                Some(_) => {
                    let obj = conversion::serve(rt, &state.get(rt, ns, name)?, conversions)?;
                    Out::Owned(if sub == Some("scale") {
                        scale_of(rt, &obj)
                    } else {
                        obj
                    })
                }
            };
            Ok((StatusCode::OK, value, Vec::new()))
        }
        ("list", _) => {
            let options = ListOptions::parse(query, false)?;
            let state = shared.lock();
            let value = list(&state, rt, ns, &options, accept, conversions)?;
            Ok((StatusCode::OK, value, Vec::new()))
        }
        ("create", _) => {
            let (mut ctx, _) = write_ctx("CreateOptions", false)?;
            let obj = decode_body(&own_type, content_type, body)?;
            decode_builtin(rt, sub, &obj, &mut ctx)?;
            let obj = shared.lock().create(rt, ns, obj, &mut ctx)?;
            done(StatusCode::CREATED, obj, ctx)
        }
        ("update", Some("scale")) => {
            let (mut ctx, _) = write_ctx("UpdateOptions", false)?;
            let scale = decode_body(&scale_type, content_type, body)?;
            decode_builtin(rt, sub, &scale, &mut ctx)?;
            let mut state = shared.lock();
            let obj = set_scale(&mut state, rt, ns, name, &scale, &mut ctx)?;
            done(StatusCode::OK, scale_of(rt, &obj), ctx)
        }
        ("update", Some("finalize")) => {
            let (ctx, _) = write_ctx("UpdateOptions", false)?;
            let obj = decode_body(&own_type, content_type, body)?;
            let mut state = shared.lock();
            let done_obj = state
                .finalize_namespace(name, &obj)
                .ok_or_else(|| ApiError::not_found("", "namespaces", name))?;
            done(StatusCode::OK, rt.served(&done_obj), ctx)
        }
        ("update", _) => {
            let (mut ctx, _) = write_ctx("UpdateOptions", false)?;
            let obj = decode_body(&own_type, content_type, body)?;
            decode_builtin(rt, sub, &obj, &mut ctx)?;
            let mut state = shared.lock();
            check_uid_precondition(&state, rt, ns, name, &obj, ctx.dry_run)?;
            let obj = state.update(rt, ns, name, obj, sub, &mut ctx, None)?;
            done(StatusCode::OK, obj, ctx)
        }
        ("patch", _) => {
            let kind = patch_kind(rt, content_type)?;
            let apply = kind == "application/apply-patch+yaml";
            let (mut ctx, force) = write_ctx("PatchOptions", apply)?;
            let mut state = shared.lock();
            if sub == Some("scale") {
                let mut scale = scale_of(rt, &state.get(rt, ns, name)?);
                let patch_body: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                match kind {
                    "application/json-patch+json" => {
                        patch::json_patch(&mut scale, &patch_body).map_err(ApiError::bad_request)?
                    }
                    _ => patch::merge_patch(&mut scale, &patch_body),
                }
                let obj = set_scale(&mut state, rt, ns, name, &scale, &mut ctx)?;
                return done(StatusCode::OK, scale_of(rt, &obj), ctx);
            }
            let existed = state.store.contains(&State::key(rt, ns, name));
            let obj = state.patch(rt, ns, name, kind, body, sub, &mut ctx, force)?;
            let code = if existed {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            done(code, obj, ctx)
        }
        ("delete", _) => {
            let options = delete_options(content_type, body, query)?;
            let mut ctx = Ctx::named(&default_manager(user_agent));
            ctx.dry_run = options.dry_run;
            ctx.conversions = conversions.clone();
            let obj = shared.lock().delete(rt, ns, name, &options, &ctx)?;
            Ok((StatusCode::OK, Out::Owned(obj), Vec::new()))
        }
        ("deletecollection", _) => {
            let options = delete_options(content_type, body, query)?;
            let list_options = ListOptions::parse(query, false)?;
            let mut ctx = Ctx::named(&default_manager(user_agent));
            ctx.dry_run = options.dry_run;
            ctx.conversions = conversions.clone();
            let mut state = shared.lock();
            let listed = list(&state, rt, ns, &list_options, "", conversions)?.into_value();
            let mut deleted = Vec::new();
            for item in listed["items"].as_array().cloned().unwrap_or_default() {
                let item_ns = item
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let item_name = name_of(&item).unwrap_or("").to_owned();
                deleted.push(state.delete(rt, item_ns.as_deref(), &item_name, &options, &ctx)?);
            }
            let rv = state.store.resource_version();
            Ok((
                StatusCode::OK,
                Out::Owned(
                    json!({"apiVersion": rt.api_version(), "kind": format!("{}List", rt.kind), "metadata": {"resourceVersion": rv.to_string()}, "items": deleted}),
                ),
                Vec::new(),
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// A PUT body's `metadata.uid` is a precondition on the stored object: another one is a
/// 409 from storage, before the object is looked at.
fn check_uid_precondition(
    state: &State,
    rt: &ResourceType,
    ns: Option<&str>,
    name: &str,
    obj: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    let Some(uid) = obj.pointer("/metadata/uid").and_then(Value::as_str) else {
        return Ok(());
    };
    let Ok(stored) = state.get(rt, ns, name) else {
        return Ok(());
    };
    let stored_uid = stored.pointer("/metadata/uid").and_then(Value::as_str);
    if uid.is_empty() || Some(uid) == stored_uid {
        return Ok(());
    }
    Err(ApiError::conflict(
        &rt.group,
        &rt.plural,
        name,
        &format!(
            "StorageError: invalid object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            rt.etcd_key(ns, name, dry_run),
            stored_uid.unwrap_or_default()
        ),
    ))
}

/// The patch types a resource takes; anything else is a 415 (the router's for built-in
/// kinds, the handler's for custom resources, which have no strategic merge).
fn patch_kind<'a>(rt: &ResourceType, content_type: &'a str) -> Result<&'a str, ApiError> {
    match content_type {
        "application/json-patch+json"
        | "application/merge-patch+json"
        | "application/apply-patch+yaml" => Ok(content_type),
        "application/strategic-merge-patch+json" if !rt.custom => Ok(content_type),
        _ if rt.custom => Err(ApiError::unsupported_media_type(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ])),
        _ => Err(ApiError::unsupported_patch_type()),
    }
}

/// A `resourceVersion` on a get must be a number the server has reached.
fn check_get_resource_version(rv: &str, current: u64) -> Result<(), ApiError> {
    if rv.is_empty() || rv == "0" {
        return Ok(());
    }
    match rv.parse::<u64>() {
        Ok(n) if n > current => Err(ApiError::too_large_resource_version(n, current)),
        Ok(_) => Ok(()),
        Err(_) => Err(ApiError::custom(
            500,
            "",
            &format!(
                "resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
            ),
        )),
    }
}

/// The field manager of a request without `fieldManager`: the user agent's product name.
fn default_manager(user_agent: &str) -> String {
    let name: String = user_agent
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect();
    if name.is_empty() {
        "unknown".to_owned()
    } else {
        name
    }
}

/// The resource version a list reads at: a number at most the current version.
fn list_version(options: &ListOptions, current: u64) -> Result<u64, ApiError> {
    let rv = options.resource_version.as_str();
    if rv.is_empty() || rv == "0" {
        return Ok(current);
    }
    let n: u64 = rv.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "invalid resource version: resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
        ))
    })?;
    if n > current {
        return Err(ApiError::too_large_resource_version(n, current));
    }
    Ok(current)
}

fn list(
    state: &State,
    rt: &ResourceType,
    ns: Option<&str>,
    options: &ListOptions,
    accept: &str,
    conversions: &Conversions,
) -> Result<Out, ApiError> {
    let (labels, fields) = options.selectors(rt)?;
    let start_after = match options.continue_token.as_str() {
        "" => None,
        token => {
            if !matches!(options.resource_version.as_str(), "" | "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            Some(decode_continue(token)?)
        }
    };
    let rv = list_version(options, state.store.resource_version())?;
    let limit = usize::try_from(options.limit)
        .ok()
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    // A seek to the continue position, then only what the page needs: with selectors the
    // scan stops at the first match past the page; without, the rest is only counted
    // (`remainingItemCount`, which the real server sets only for lists without selectors).
    let unselected = labels.is_empty() && fields.is_empty();
    let mut items = Vec::new();
    let mut last_pos = "";
    let mut more = false;
    let mut remaining = 0u64;
    let mut objects = state
        .store
        .list(&rt.storage_key(), ns, start_after.as_deref());
    for (pos, obj) in objects.by_ref() {
        if !unselected && !crate::store::objects::selected(&labels, &fields, obj) {
            continue;
        }
        if items.len() == limit {
            more = true;
            remaining = 1;
            break;
        }
        items.push(obj);
        last_pos = pos;
    }
    if more && unselected {
        remaining += objects.count() as u64;
    }
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if more {
        metadata["continue"] = json!(encode_continue(last_pos, rv));
        if unselected {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let kind = format!("{}List", rt.kind);
    let as_stored = items.iter().all(|e| rt.is_api_version(&e.api_version));
    if accept.contains("as=Table") || !as_stored {
        let items: Vec<Value> = items
            .into_iter()
            .filter_map(crate::store::objects::Encoded::value)
            .collect();
        let items = conversion::serve_all(rt, items, conversions)?;
        if accept.contains("as=Table") {
            return Ok(Out::Owned(crate::discovery::table(rt, &items, metadata)));
        }
        return Ok(Out::Owned(
            json!({"apiVersion": rt.api_version(), "kind": kind, "metadata": metadata, "items": items}),
        ));
    }
    // Every item is stored in the version asked for: its JSON as it is, between the list's
    // own fields.
    let head = json!({"apiVersion": rt.api_version(), "kind": kind, "metadata": metadata});
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&item.json);
    }
    out.extend_from_slice(b"]}");
    Ok(Out::Json(Bytes::from(out)))
}

/// A continue token as the real server writes it: base64 of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`.
fn encode_continue(pos: &str, rv: u64) -> String {
    let json = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{pos}\u{0}")});
    crate::body::base64_encode(json.to_string().as_bytes())
}

fn decode_continue(token: &str) -> Result<String, ApiError> {
    let bad = |why: String| ApiError::bad_request(format!("invalid continue token: {why}"));
    let bytes = crate::body::base64_decode(token).map_err(|at| {
        bad(format!(
            "continue key is not valid: illegal base64 data at input byte {at}"
        ))
    })?;
    let parsed: Value = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("continue key is not valid: {e}")))?;
    if parsed.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        let v = parsed.get("v").and_then(Value::as_str).unwrap_or("");
        return Err(bad(format!(
            "continue key is not valid: server does not recognize this encoded version {v}"
        )));
    }
    if parsed.get("rv").and_then(Value::as_u64).unwrap_or(0) == 0 {
        return Err(bad(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
        ));
    }
    let start = parsed.get("start").and_then(Value::as_str).unwrap_or("");
    if start.is_empty() {
        return Err(bad(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
        ));
    }
    Ok(start.trim_end_matches('\u{0}').to_owned())
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
    ctx: &mut Ctx,
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
    state.update(rt, ns, name, obj, Some("scale"), ctx, None)
}
