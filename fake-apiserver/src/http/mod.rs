//! HTTP: what kube-apiserver's handler chain does before the registry. A request is read
//! (its body at most [`MAX_REQUEST_BODY_BYTES`]), routed ([`route`]) to discovery and
//! OpenAPI ([`discovery`], [`openapi`]) or to a served resource, checked (subresource,
//! method, `Accept`), recorded and faulted as a test programmed ([`control`]), then
//! streamed as a watch ([`watch`]) or run by the registry and written as JSON
//! ([`body`]). [`serve`] puts the server on loopback for kubectl, each connection
//! ([`conn`]) under the deadlines of [`HttpLimits`](crate::HttpLimits).

pub mod auth;
pub(crate) mod binding;
pub mod body;
pub(crate) mod conn;
pub mod control;
pub mod discovery;
pub mod impersonation;
pub mod openapi;
pub mod partial;
pub mod route;
pub mod serve;
pub mod token;
pub mod watch;

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::BodyExt;
use serde_json::Value;

use body::ResponseBody;
use control::{Action, Controls, Recorded};
use route::{Route, Target};

use crate::admission::decode::options::{ListOptions, Query};
use crate::admission::decode::{SERIALIZERS, protobuf};
use crate::admission::webhooks::Call;
use crate::error::ApiError;
use crate::registry::{self, reply::Out};
use crate::resource::{ObjectRef, ResourceType};
use crate::store::Shared;

/// A request from any transport: its body read (see [`read_body`]), then handled.
pub(crate) async fn call<B>(
    shared: &Arc<Shared>,
    controls: &Arc<Controls>,
    req: http::Request<B>,
) -> Response<ResponseBody>
where
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    let bytes = match read_body(&parts.method, body).await {
        Ok(bytes) => bytes,
        Err(err) => return body::error(&err),
    };
    handle(shared, controls, http::Request::from_parts(parts, bytes)).await
}

/// What a request body may fail with.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// kube-apiserver's limit on a request body (`--max-request-body-bytes`, 3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The body of a request that has one: at most [`MAX_REQUEST_BODY_BYTES`], read no further
/// than one byte past it (a larger one is a 413, as the real handlers answer it). Reads and
/// watches are answered without reading their body, as the real server does.
async fn read_body<B>(method: &http::Method, body: B) -> Result<bytes::Bytes, ApiError>
where
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    if !matches!(
        *method,
        http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
    ) {
        return Ok(bytes::Bytes::new());
    }
    match http_body_util::Limited::new(body, MAX_REQUEST_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::custom(
            413,
            "RequestEntityTooLarge",
            &format!("Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"),
        )),
        // Served over HTTP, a body slower than the body timeout: the connection closes.
        Err(e) if e.is::<conn::BodyTimedOut>() => {
            Err(ApiError::custom(408, "Timeout", &e.to_string()))
        }
        Err(e) => Err(ApiError::bad_request(format!(
            "cannot read the request body: {e}"
        ))),
    }
}

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
        // A ServiceAccount's TokenRequest; a Pod's Binding.
        "POST" if matches!(target.subresource.as_deref(), Some("token" | "binding")) => {
            Ok("create")
        }
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

/// A header's value, `""` when absent or not text.
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
async fn handle(
    shared: &Arc<Shared>,
    controls: &Arc<Controls>,
    req: http::Request<Bytes>,
) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let query = Query::parse(parts.uri.query());
    let user = match auth::authorize(shared, controls, &parts, &query) {
        Ok(user) => user,
        Err(e) => return body::error(&e),
    };
    let target = match route::route(parts.uri.path()) {
        Route::Resource(t) => t,
        other => return discovery::respond(shared, &other, parts.uri.path()),
    };
    if let Some(review) = auth::review(shared, &parts, &target, &user, &query, &body) {
        return review;
    }
    let Some(rt) = shared
        .lock()
        .find_type(&target.group, &target.version, &target.plural)
    else {
        return body::error(&ApiError::no_route(parts.uri.path()));
    };
    let request = ResourceRequest {
        shared,
        controls,
        parts: &parts,
        target: &target,
        rt: &rt,
        user: &user,
    };
    let mut response = request.handle(&query, body).await;
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
struct ResourceRequest<'a> {
    shared: &'a Arc<Shared>,
    controls: &'a Arc<Controls>,
    parts: &'a http::request::Parts,
    target: &'a Target,
    rt: &'a Arc<ResourceType>,
    /// Who asks (after impersonation): what escalation prevention and the `create` check
    /// of an apply that creates look at.
    user: &'a crate::admission::authorization::User,
}

impl ResourceRequest<'_> {
    /// A POST of a TokenRequest (`serviceaccounts/<name>/token`) or a Binding
    /// (`pods/<name>/binding`), each answered by its own module.
    fn create_subresource(
        &self,
        sub: &str,
        verb: &str,
        bytes: &[u8],
        dry_run: bool,
    ) -> Response<ResponseBody> {
        if verb != "create" {
            return body::error(&ApiError::method_not_allowed());
        }
        let target = self.target;
        let ns = target.namespace.as_deref().unwrap_or("");
        let name = target.name.as_deref().unwrap_or("");
        let made = if sub == "token" {
            token::create(self.shared, self.controls, self.rt, ns, name, bytes)
        } else {
            binding::create(self.shared, self.rt, ns, name, bytes, dry_run)
        };
        match made {
            Ok(value) => body::json(http::StatusCode::CREATED, &value),
            Err(e) => body::error(&e),
        }
    }

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
            Some("token") if rt.is("", "serviceaccounts") => {}
            Some("binding") if rt.is("", "pods") => {}
            Some(_) => return body::error(&ApiError::no_route(parts.uri.path())),
        }
        // A name kube-apiserver cannot take from a path (`..`, `a/b` once decoded).
        if let Some(name) = target.name.as_deref() {
            let problems = crate::rules::names::path_segment(name, false);
            if !problems.is_empty() {
                return body::error(&ApiError::bad_request(format!(
                    "Name parameter invalid: {}: {}",
                    crate::rules::field::go_quote(name),
                    problems.join(";")
                )));
            }
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
        let partial = match partial::target(accept) {
            Ok(p) => p,
            Err(e) => return body::error(&e),
        };
        if let Some(sub @ ("token" | "binding")) = target.subresource.as_deref() {
            return self.create_subresource(sub, verb, &body, query.get("dryRun").is_some());
        }
        if verb == "watch" {
            return match ListOptions::parse(query, true) {
                Ok(options) => {
                    watch::start(self.shared, self.controls, rt, target, &options, partial)
                }
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
            user: self.user,
        };
        let content_type = media_type(header(parts, http::header::CONTENT_TYPE));
        let call = Call {
            verb,
            query,
            content_type: &content_type,
            body: &body,
        };
        match (registry::run(&req, call).await, partial) {
            (Ok((code, out, warnings)), Some(p)) => {
                let value = match out {
                    Out::Owned(value) => value,
                    Out::Json(json) => serde_json::from_slice(&json).unwrap_or_default(),
                };
                match partial::convert(p, rt, value) {
                    Ok(value) => body::json_with_warnings(code, &value, &warnings),
                    Err(err) => body::error(&err),
                }
            }
            (Ok((code, Out::Owned(value), warnings)), None) => {
                body::json_with_warnings(code, &value, &warnings)
            }
            (Ok((code, Out::Json(json), _)), None) => body::json_bytes(code, json),
            (Err(err), _) => body::error(&err),
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
