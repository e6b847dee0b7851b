//! Admission webhooks: the fake calls the webhooks that MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration objects register, as kube-apiserver does, so a webhook
//! is tested through `kube::Client` like the rest of a controller.
//!
//! For a create, update, patch or delete that a webhook's rules match (operation, group,
//! version, resource and subresource, scope, namespace and object selectors):
//!
//! 1. mutating webhooks, in the order of their configurations' names, each seeing the
//!    object as the ones before left it; their JSON patches are applied;
//! 2. the server's own defaulting and validation (a dry run of the request);
//! 3. validating webhooks, on the object as it would be stored;
//! 4. the request itself.
//!
//! Calls go over HTTPS to the webhook's `url`, or to the loopback address a test gives for a
//! Service (`Config::webhook_services`), verified against the `caBundle`. A refusal is the
//! real server's `admission webhook "<name>" denied the request: <message>` with the
//! webhook's code and reason; a webhook that cannot be called fails the request with 500
//! (`failurePolicy: Fail`) or is skipped (`Ignore`); warnings become `Warning` headers.
//! A mutating webhook with `reinvocationPolicy: IfNeeded` is called once more when a later
//! one changed the object. With `matchPolicy: Equivalent` (the default), a webhook whose
//! rules name another served version of the resource sees the request in that version.
//! Not emulated: `matchConditions` (a matching webhook is called whatever they say).

pub mod calls;
pub mod matching;

use serde_json::{Value, json};

use crate::admission::decode::options::Query;
use crate::error::ApiError;
use crate::resource::ObjectRef;
use crate::store::Shared;
use calls::{mutate, refuse_only, validate};
pub(crate) use matching::configured;
use matching::{Attributes, Hook, matching};

/// What admission may change of a request before the server handles it: the verb (a patch
/// the webhooks changed becomes an update or a create), the query (a dry run first), and
/// the body with its content type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    /// `create`, `update`, `patch`, `delete`, ...
    pub verb: &'a str,
    /// The query string.
    pub query: &'a Query,
    /// The body's media type.
    pub content_type: &'a str,
    /// The body.
    pub body: &'a [u8],
}

/// What the server answers for a request: the status code, the object and the warnings.
pub(crate) type Reply = (http::StatusCode, Value, Vec<String>);

/// The request as the mutating webhooks left it.
struct Rewritten<'a> {
    verb: &'a str,
    content_type: String,
    body: Vec<u8>,
}

impl Rewritten<'_> {
    fn call<'b>(&'b self, query: &'b Query) -> Call<'b> {
        Call {
            verb: self.verb,
            query,
            content_type: &self.content_type,
            body: &self.body,
        }
    }
}

/// A request for object `at` through admission: what `respond` (the server's own handling
/// of a request) answers for it, after the webhooks that match it have mutated and
/// validated it.
pub(crate) async fn admit<R>(
    shared: &Shared,
    at: ObjectRef<'_>,
    call: Call<'_>,
    respond: R,
) -> Result<Reply, ApiError>
where
    R: Fn(Call<'_>) -> Result<Reply, ApiError>,
{
    // The stored object; its metadata is all the matching reads, so it is converted to the
    // request's version only once a webhook matches.
    let stored = shared.lock().get(at.rt, at.namespace, at.name).ok();
    let operation = match call.verb {
        "delete" => "DELETE",
        "create" => "CREATE",
        "patch" if stored.is_none() => "CREATE",
        _ => "UPDATE",
    };
    let mut object = requested_object(at.namespace, call, &respond)?;
    let object_name = object
        .as_ref()
        .and_then(|o| o.pointer("/metadata/name"))
        .and_then(Value::as_str)
        .unwrap_or(at.name)
        .to_owned();
    let a = Attributes {
        shared,
        rt: at.rt,
        namespace: at.namespace,
        name: &object_name,
        subresource: at.subresource,
        operation,
        dry_run: dry_run(call),
    };
    let (mutating, validating, uid) = {
        let mut state = shared.lock();
        let objects = [object.as_ref(), stored.as_ref()];
        let m = if object.is_none() && operation != "DELETE" {
            Vec::new()
        } else {
            matching(&state, shared, true, &a, objects)?
        };
        let v = matching(&state, shared, false, &a, objects)?;
        (m, v, state.store.next_uid())
    };
    if mutating.is_empty() && validating.is_empty() {
        return respond(call);
    }
    let old = match stored {
        Some(o) => Some(crate::conversion::webhook::into_version(shared, at.rt, &o).await?),
        None => None,
    };
    let hooks = Hooks {
        a: &a,
        uid: &uid,
        old: old.as_ref(),
    };
    let mut warnings = Vec::new();
    let mut run = Rewritten {
        verb: call.verb,
        content_type: call.content_type.to_owned(),
        body: call.body.to_vec(),
    };
    // Errors carry the warnings the webhooks gave before them, as kube-apiserver's do.
    hooks
        .mutate_request(&mutating, object.as_mut(), &mut run, &mut warnings)
        .await
        .map_err(|e| with_warnings(e, &warnings))?;
    if !validating.is_empty() {
        hooks
            .validate_request(&validating, call.query, &mut run, &respond, &mut warnings)
            .await
            .map_err(|e| with_warnings(e, &warnings))?;
    }
    let (code, value, more) =
        respond(run.call(call.query)).map_err(|e| with_warnings(e, &warnings))?;
    warnings.extend(more);
    Ok((code, value, warnings))
}

/// `e` with `warnings` before its own.
fn with_warnings(mut e: ApiError, warnings: &[String]) -> ApiError {
    e.warnings.splice(0..0, warnings.iter().cloned());
    e
}

/// Whether the request is a dry run; deletes may say it in their DeleteOptions body, as
/// kube-rs and client-go do.
fn dry_run(call: Call<'_>) -> bool {
    let in_body = call.verb == "delete"
        && serde_json::from_slice::<Value>(call.body)
            .ok()
            .and_then(|o| {
                o.get("dryRun")
                    .and_then(Value::as_array)
                    .map(|d| !d.is_empty())
            })
            .unwrap_or(false);
    in_body || call.query.get("dryRun").is_some_and(|d| !d.is_empty())
}

/// The object the request makes: the body, or for a patch the result of a dry run, in
/// the request's namespace.
fn requested_object<R>(
    namespace: Option<&str>,
    call: Call<'_>,
    respond: &R,
) -> Result<Option<Value>, ApiError>
where
    R: Fn(Call<'_>) -> Result<Reply, ApiError>,
{
    let mut object: Option<Value> = match call.verb {
        "create" | "update" => serde_json::from_slice(call.body).ok(),
        "patch" => {
            let dry = call.query.with("dryRun", "All");
            Some(
                respond(Call {
                    query: &dry,
                    ..call
                })?
                .1,
            )
        }
        _ => None,
    };
    if let (Some(obj), Some(ns)) = (object.as_mut(), namespace)
        && obj.pointer("/metadata/namespace").is_none()
        && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.insert("namespace".into(), json!(ns));
    }
    Ok(object)
}

/// The webhooks' side of one request: what they are told about it.
struct Hooks<'a> {
    a: &'a Attributes<'a>,
    uid: &'a str,
    /// The stored object, in the request's version.
    old: Option<&'a Value>,
}

impl Hooks<'_> {
    /// The mutating webhooks: on a delete they may refuse, not change; otherwise a body
    /// they changed is sent as the whole object they saw.
    async fn mutate_request(
        &self,
        hooks: &[Hook],
        object: Option<&mut Value>,
        run: &mut Rewritten<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let (a, uid, old) = (self.a, self.uid, self.old);
        if a.operation == "DELETE" {
            // Mutating webhooks see deletes too (no object), and may refuse, not change them.
            return refuse_only(hooks, a, uid, old, warnings).await;
        }
        let Some(obj) = object else {
            return Ok(());
        };
        if mutate(hooks, a, uid, obj, old, warnings).await? {
            run.body = serde_json::to_vec(obj).unwrap_or_default();
            run.content_type = "application/json".to_owned();
            // A patch the webhooks changed is written as the whole object they saw.
            if run.verb == "patch" {
                run.verb = if old.is_some() { "update" } else { "create" };
            }
        }
        Ok(())
    }

    /// The validating webhooks, on the object as the request would store it (a dry run of
    /// it; none for a delete).
    async fn validate_request<R>(
        &self,
        hooks: &[Hook],
        query: &Query,
        run: &mut Rewritten<'_>,
        respond: &R,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError>
    where
        R: Fn(Call<'_>) -> Result<Reply, ApiError>,
    {
        let stored = if self.a.operation == "DELETE" {
            None
        } else {
            let dry = query.with("dryRun", "All");
            let stored = respond(run.call(&dry))?.1;
            keep_generated_name(run, &stored);
            Some(stored)
        };
        let stored_name = stored
            .as_ref()
            .and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or(self.a.name)
            .to_owned();
        let a = Attributes {
            name: &stored_name,
            ..*self.a
        };
        validate(hooks, &a, self.uid, stored.as_ref(), self.old, warnings).await
    }
}

/// A name the server generated (generateName) in the dry run is the one the create keeps.
fn keep_generated_name(run: &mut Rewritten<'_>, stored: &Value) {
    if run.verb == "create"
        && let (Ok(mut sent), Some(generated)) = (
            serde_json::from_slice::<Value>(&run.body),
            stored.pointer("/metadata/name").cloned(),
        )
        && sent
            .pointer("/metadata/name")
            .is_none_or(|n| n.as_str() == Some(""))
        && let Some(meta) = sent.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.insert("name".into(), generated);
        run.body = serde_json::to_vec(&sent).unwrap_or_default();
        run.content_type = "application/json".to_owned();
    }
}
