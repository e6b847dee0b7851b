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

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::admission::decode::options::Query;
use crate::error::ApiError;
use crate::resource::{ObjectRef, ResourceType};
use crate::rules::kinds::webhook::strings;
use crate::store::Shared;
use crate::store::{State, namespace_key};
use crate::webhook_client::Endpoint;

/// One webhook whose rules match a request.
struct Hook {
    name: String,
    endpoint: Endpoint,
    fail: bool,
    timeout: Duration,
    /// `reinvocationPolicy: IfNeeded`.
    reinvoke: bool,
    /// With `matchPolicy: Equivalent`, the other version of the resource its rules name,
    /// in which it sees the request (as kube-apiserver converts it).
    version: Option<Arc<ResourceType>>,
}

/// What a request is, as admission sees it.
#[derive(Clone, Copy)]
pub(crate) struct Attributes<'a> {
    pub shared: &'a Shared,
    pub rt: &'a ResourceType,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    pub subresource: Option<&'a str>,
    /// `CREATE`, `UPDATE`, `DELETE`.
    pub operation: &'static str,
    pub dry_run: bool,
}

/// Whether any webhook configuration exists (requests skip admission otherwise).
pub(crate) fn configured(state: &State) -> bool {
    [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    ]
    .iter()
    .any(|plural| {
        !state
            .store
            .keys(&("admissionregistration.k8s.io".into(), (*plural).into()))
            .is_empty()
    })
}

fn rule_matches(rule: &Value, a: &Attributes<'_>) -> bool {
    let any = |list: &[&str], v: &str| list.iter().any(|x| *x == "*" || *x == v);
    // kube-apiserver's rule: `res/sub`, where `*` matches anything and no `/sub` means no
    // subresource (so `pods/*` matches `pods` too).
    let sub = a.subresource.unwrap_or("");
    let resources_match = strings(rule.get("resources")).iter().any(|r| {
        let (res, want) = r.split_once('/').unwrap_or((r, ""));
        (res == "*" || res == a.rt.plural) && (want == "*" || want == sub)
    });
    let scope_matches = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => a.namespace.is_none(),
        "Namespaced" => a.namespace.is_some(),
        _ => true,
    };
    any(&strings(rule.get("operations")), a.operation)
        && any(&strings(rule.get("apiGroups")), &a.rt.group)
        && any(&strings(rule.get("apiVersions")), &a.rt.version)
        && resources_match
        && scope_matches
}

fn selects(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    let empty = json!({});
    match selector {
        None => true,
        Some(s) => crate::rules::kinds::pod::selector_matches(s, labels.unwrap_or(&empty)),
    }
}

/// The webhooks of one kind of configuration that match the request, in kube-apiserver's
/// order; `objects` are the object and the old object (either may be absent).
fn matching(
    state: &State,
    shared: &Shared,
    mutating: bool,
    a: &Attributes<'_>,
    objects: [Option<&Value>; 2],
) -> Result<Vec<Hook>, ApiError> {
    // Configurations never pass through webhooks themselves, so a broken webhook can
    // always be removed.
    if a.rt.group == "admissionregistration.k8s.io" {
        return Ok(Vec::new());
    }
    let plural = if mutating {
        "mutatingwebhookconfigurations"
    } else {
        "validatingwebhookconfigurations"
    };
    let mut keys = state
        .store
        .keys(&("admissionregistration.k8s.io".into(), plural.into()));
    keys.sort();
    let namespace_labels = a.namespace.and_then(|ns| {
        state
            .store
            .get(&namespace_key(ns))
            .and_then(|n| n.pointer("/metadata/labels").cloned())
    });
    let mut out = Vec::new();
    for key in keys {
        let Some(config) = state.store.get(&key) else {
            continue;
        };
        for hook in config["webhooks"].as_array().into_iter().flatten() {
            let rules = hook["rules"].as_array().into_iter().flatten();
            let version = if rules.clone().any(|r| rule_matches(r, a)) {
                None
            } else if hook["matchPolicy"].as_str() != Some("Exact")
                && let Some(other) = equivalent(state, a, rules)
            {
                Some(other)
            } else {
                continue;
            };
            // The namespace selector applies to namespaced objects and to namespaces.
            let ns_labels = if a.rt.is("", "namespaces") {
                objects
                    .iter()
                    .flatten()
                    .next()
                    .and_then(|o| o.pointer("/metadata/labels"))
                    .cloned()
            } else {
                namespace_labels.clone()
            };
            if (a.namespace.is_some() || a.rt.is("", "namespaces"))
                && !selects(hook.get("namespaceSelector"), ns_labels.as_ref())
            {
                continue;
            }
            let selector = hook.get("objectSelector");
            let everything = selector.is_none_or(|s| {
                s.get("matchLabels")
                    .and_then(Value::as_object)
                    .is_none_or(|m| m.is_empty())
                    && s.get("matchExpressions")
                        .and_then(Value::as_array)
                        .is_none_or(|e| e.is_empty())
            });
            let object_selected = everything
                || objects
                    .iter()
                    .flatten()
                    .any(|o| selects(selector, o.pointer("/metadata/labels")));
            if !object_selected {
                continue;
            }
            let mut found = hook_of(hook, shared)?;
            found.version = version;
            out.push(found);
        }
    }
    Ok(out)
}

fn hook_of(hook: &Value, shared: &Shared) -> Result<Hook, ApiError> {
    Ok(Hook {
        name: hook["name"].as_str().unwrap_or("").to_owned(),
        endpoint: Endpoint::of(&hook["clientConfig"], &shared.config.webhook_services),
        fail: hook["failurePolicy"].as_str() != Some("Ignore"),
        timeout: Duration::from_secs(hook["timeoutSeconds"].as_u64().unwrap_or(10)),
        reinvoke: hook["reinvocationPolicy"].as_str() == Some("IfNeeded"),
        version: None,
    })
}

/// `matchPolicy: Equivalent`: another served version of the request's resource that one of
/// `rules` matches.
fn equivalent<'v>(
    state: &State,
    a: &Attributes<'_>,
    rules: impl Iterator<Item = &'v Value> + Clone,
) -> Option<Arc<ResourceType>> {
    state
        .types
        .iter()
        .filter(|t| t.group == a.rt.group && t.plural == a.rt.plural && t.version != a.rt.version)
        .find(|t| {
            let other = Attributes { rt: t, ..*a };
            rules.clone().any(|r| rule_matches(r, &other))
        })
        .cloned()
}

/// The AdmissionReview sent for a request.
async fn review(
    uid: &str,
    a: &Attributes<'_>,
    hook: &Hook,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Value, ApiError> {
    let gvk =
        |rt: &ResourceType| json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let gvr = |rt: &ResourceType| json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
    // In the version the webhook asked for; the request's own stays in `request*`.
    let seen = hook.version.as_deref().unwrap_or(a.rt);
    let converted = async |o: Option<&Value>| match o {
        Some(o) => crate::conversion::webhook::into_version(a.shared, seen, o)
            .await
            .map(Some),
        None => Ok(None),
    };
    let (object, old) = (converted(object).await?, converted(old).await?);
    let (object, old) = (object.as_ref(), old.as_ref());
    let mut request = json!({
        "uid": uid,
        "kind": gvk(seen),
        "resource": gvr(seen),
        "requestKind": gvk(a.rt),
        "requestResource": gvr(a.rt),
        "name": a.name,
        "operation": a.operation,
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": a.dry_run,
    });
    if let Some(ns) = a.namespace {
        request["namespace"] = json!(ns);
    }
    if let Some(sub) = a.subresource {
        request["subResource"] = json!(sub);
        request["requestSubResource"] = json!(sub);
    }
    Ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}))
}

/// Calls one webhook: its response, `None` when it failed and `failurePolicy: Ignore` skips
/// it, or the error the request fails with.
async fn call(
    hook: &Hook,
    review: &Value,
    uid: &str,
    mutating: bool,
) -> Result<Option<Value>, ApiError> {
    let failed = |why: String| {
        let message = format!("failed calling webhook \"{}\": {why}", hook.name);
        let mut err = ApiError::internal(format!("Internal error occurred: {message}"));
        err.details = Some(json!({"causes": [{"message": message}]}));
        err
    };
    let answer =
        match tokio::time::timeout(hook.timeout, hook.endpoint.post(hook.timeout, review)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(why)) => Err(format!(
                "failed to call webhook: Post \"{}?timeout={}s\": {why}",
                hook.endpoint.url,
                hook.timeout.as_secs()
            )),
            Err(_) => Err(format!(
                "failed to call webhook: Post \"{}?timeout={}s\": context deadline exceeded",
                hook.endpoint.url,
                hook.timeout.as_secs()
            )),
        };
    let response = answer.and_then(|a| match a.get("response").filter(|r| r.is_object()) {
        None => Err("received invalid webhook response: response is nil".to_owned()),
        Some(r) if r["uid"].as_str() != Some(uid) => Err(format!(
            "received invalid webhook response: expected response.uid=\"{uid}\", got \"{}\"",
            r["uid"].as_str().unwrap_or("")
        )),
        Some(r) if !mutating && r.get("patch").is_some_and(|p| !p.is_null()) => Err(
            "received invalid webhook response: validating webhook may not return response.patch"
                .to_owned(),
        ),
        Some(r) => Ok(r.clone()),
    });
    match response {
        Ok(r) => Ok(Some(r)),
        Err(_) if !hook.fail => Ok(None),
        Err(why) => Err(failed(why)),
    }
}

/// The error of a refusal, as kube-apiserver words it.
fn denied(hook: &Hook, response: &Value) -> ApiError {
    let status = response.get("status").cloned().unwrap_or(json!({}));
    let code = status["code"].as_u64().unwrap_or(0).max(400);
    let reason = status["reason"].as_str().unwrap_or("");
    let message = status["message"].as_str().unwrap_or("");
    let denied_by = format!("admission webhook \"{}\" denied the request", hook.name);
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let mut err = ApiError::custom(u16::try_from(code).unwrap_or(400), reason, &message);
    err.details = status.get("details").cloned();
    err
}

fn warnings_of(response: &Value, into: &mut Vec<String>) {
    into.extend(
        strings(response.get("warnings"))
            .into_iter()
            .map(str::to_owned),
    );
}

/// Calls one mutating webhook and applies its patch; whether it changed `object`.
async fn mutate_once(
    hook: &Hook,
    a: &Attributes<'_>,
    uid: &str,
    object: &mut Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<bool, ApiError> {
    let review = review(uid, a, hook, Some(object), old).await?;
    let Some(response) = call(hook, &review, uid, true).await? else {
        return Ok(false);
    };
    warnings_of(&response, warnings);
    if response["allowed"].as_bool() != Some(true) {
        return Err(denied(hook, &response));
    }
    let Some(patch) = response.get("patch").filter(|p| !p.is_null()) else {
        return Ok(false);
    };
    // Go decodes a []byte from base64 text or from an array of numbers (what kube-rs'
    // AdmissionResponse writes); both are accepted.
    let bytes = match patch {
        Value::String(text) => apiserver_rules::base64::base64_decode(text).ok(),
        Value::Array(items) => items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect(),
        _ => None,
    };
    let ops = bytes.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let Some(ops) = ops else {
        return Err(ApiError::internal(format!(
            "Internal error occurred: admission webhook \"{}\" returned a patch that is not JSON",
            hook.name
        )));
    };
    let before = object.clone();
    // The patch is against the object in the webhook's version; applied there, and the
    // result converted back.
    if let Some(version) = &hook.version {
        *object = crate::conversion::webhook::into_version(a.shared, version, object).await?;
    }
    let applied = crate::store::patch::json_patch(object, &ops);
    if hook.version.is_some() {
        *object = crate::conversion::webhook::into_version(a.shared, a.rt, object).await?;
    }
    applied.map_err(|e| {
        ApiError::internal(format!(
            "Internal error occurred: admission webhook \"{}\" returned a patch that does not apply: {e}",
            hook.name
        ))
    })?;
    Ok(*object != before)
}

/// Runs the mutating webhooks on `object`; whether any changed it. As kube-apiserver
/// does, a webhook with `reinvocationPolicy: IfNeeded` is called once more when a webhook
/// after it changed the object it left.
async fn mutate(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    object: &mut Value,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<bool, ApiError> {
    let mut changed = false;
    // The object as each webhook left it.
    let mut left: Vec<Value> = Vec::with_capacity(hooks.len());
    for hook in hooks {
        changed |= mutate_once(hook, a, uid, object, old, warnings).await?;
        left.push(object.clone());
    }
    for (hook, left) in hooks.iter().zip(&left) {
        if hook.reinvoke && *left != *object {
            changed |= mutate_once(hook, a, uid, object, old, warnings).await?;
        }
    }
    Ok(changed)
}

/// Mutating webhooks on a delete: they may refuse it, but a patch is an error (kube-apiserver:
/// the operation does not support modifying the object).
async fn refuse_only(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    for hook in hooks {
        let review = review(uid, a, hook, None, old).await?;
        let Some(response) = call(hook, &review, uid, true).await? else {
            continue;
        };
        warnings_of(&response, warnings);
        if response["allowed"].as_bool() != Some(true) {
            return Err(denied(hook, &response));
        }
        let patched = match response.get("patch") {
            Some(Value::String(p)) => !p.is_empty(),
            Some(Value::Array(p)) => !p.is_empty(),
            _ => false,
        };
        if patched {
            return Err(ApiError::internal(format!(
                "Internal error occurred: admission webhook \"{}\" attempted to modify the object, which is not supported for this operation",
                hook.name
            )));
        }
    }
    Ok(())
}

/// Runs the validating webhooks.
async fn validate(
    hooks: &[Hook],
    a: &Attributes<'_>,
    uid: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    for hook in hooks {
        let review = review(uid, a, hook, object, old).await?;
        let Some(response) = call(hook, &review, uid, false).await? else {
            continue;
        };
        warnings_of(&response, warnings);
        if response["allowed"].as_bool() != Some(true) {
            return Err(denied(hook, &response));
        }
    }
    Ok(())
}

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
