//! Request handling: routing and content negotiation as the real server's router does it,
//! the action log and programmed faults, then a watch, or the registry's verb.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use serde_json::Value;

use crate::admission::decode::options::{ListOptions, Query};
use crate::admission::decode::{SERIALIZERS, protobuf};
use crate::admission::webhooks::Call;
use crate::body::{self, ResponseBody};
use crate::control::{Action, Controls, Recorded};
use crate::error::ApiError;
use crate::registry::{self, reply::Out};
use crate::request::{self, Route, Target};
use crate::resource::{ObjectRef, ResourceType};
use crate::store::Shared;

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
    let served = Served {
        shared,
        controls,
        parts: &parts,
        target: &target,
        rt: &rt,
    };
    let mut response = served.handle(&query, body).await;
    body::prepend_warnings(&mut response, &rt.warnings);
    response
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

/// A request for a served resource: the server, the request's head, and what it addresses.
struct Served<'a> {
    shared: &'a Arc<Shared>,
    controls: &'a Controls,
    parts: &'a http::request::Parts,
    target: &'a Target,
    rt: &'a Arc<ResourceType>,
}

impl Served<'_> {
    /// Handles the request: its subresource and method checked, recorded and faulted as
    /// programmed, `Accept` checked, then watched or run by the registry.
    async fn handle(&self, query: &Query, body: Bytes) -> Response<ResponseBody> {
        let (parts, target, rt) = (self.parts, self.target, self.rt);
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
        if let Err(err) = self.record(verb, &body).await {
            return body::error(&err);
        }
        let accept = header(parts, http::header::ACCEPT);
        if !acceptable(accept, matches!(verb, "list" | "watch")) && !accept.contains("as=Table") {
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
                Ok(options) => crate::watch::start(self.shared, rt, target, &options),
                Err(e) => body::error(&e),
            };
        }
        let req = registry::Request {
            shared: self.shared,
            at: ObjectRef {
                rt,
                namespace: target.namespace.as_deref(),
                name: target.name.as_deref().unwrap_or(""),
                subresource: target.subresource.as_deref(),
            },
            user_agent: header(parts, http::header::USER_AGENT),
            table: accept.contains("as=Table"),
        };
        let content_type = media_type(header(parts, http::header::CONTENT_TYPE));
        let call = Call {
            verb,
            query,
            content_type: &content_type,
            body: &body,
        };
        match registry::run(&req, call).await {
            Ok((code, Out::Owned(value), warnings)) => {
                body::json_with_warnings(code, &value, &warnings)
            }
            Ok((code, Out::Json(json), _)) => body::json_bytes(code, json),
            Err(err) => body::error(&err),
        }
    }

    /// Records the request in the action log, then applies the faults programmed for it:
    /// a delay, and the error it fails with.
    async fn record(&self, verb: &str, body: &Bytes) -> Result<(), ApiError> {
        let target = self.target;
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
        self.controls.actions().push(
            action.clone(),
            Recorded {
                // A copy, sized to the body: a slice would keep the whole read buffer alive.
                bytes: Bytes::copy_from_slice(body),
                content_type: header(self.parts, http::header::CONTENT_TYPE).to_owned(),
                decode: logged_body,
            },
        );
        let (delay, fault) = self.controls.faults().check(&action);
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        match fault {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }
}
