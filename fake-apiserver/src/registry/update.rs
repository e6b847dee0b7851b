//! PUT, and the final step of every PATCH: the object replaced, with every server-side
//! rule: the request's checks, the fields a write cannot change, validation against the
//! stored object, generation and `managedFields`, and no write at all when nothing changed.

use serde_json::{Value, json};

use super::managed::{self, Managed};
use super::strategy;
use crate::admission::Ctx;
use crate::admission::authorization::escalation;
use crate::admission::decode::type_meta::custom_kind_errors;
use crate::admission::decode::{check_kind, round_trip};
use crate::admission::defaulting::{after_field_manager, default_builtin};
use crate::admission::validation::{admit_rules, admit_schema, error_group, review_crd};
use crate::controllers;
use crate::conversion;
use crate::error::ApiError;
use crate::meta::{finalizers, name_of, rv_of, set_meta, without};
use crate::resource::{Generation, ObjectRef, ResourceType};
use crate::rules::field::FieldError;
use crate::rules::{kinds, meta};
use crate::store::State;
use crate::store::objects::ObjectKey;

/// PUT: replaces object `at` with `new`; `managedFields` given by the caller (server-side
/// apply) or, when `None`, recorded for the writer.
pub(crate) fn update(
    state: &mut State,
    at: ObjectRef<'_>,
    mut new: Value,
    ctx: &mut Ctx,
    given: Option<&Value>,
) -> Result<Value, ApiError> {
    let rt = at.rt;
    let key = State::key(rt, at.namespace, at.name);
    let old = state
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, at.name))?;
    if new.is_object() && escalation::guards(&rt.group, &rt.plural) {
        // RBAC escalation prevention comes before the version check and validation, as
        // the real server's update transform runs before them.
        let served_old = conversion::serve(rt, &old, &ctx.conversions)?;
        escalation::check(
            state,
            &ctx.user,
            &rt.plural,
            at.namespace.unwrap_or(""),
            at.name,
            &new,
            Some(&served_old),
        )?;
    }
    check_request(&at, &old, &new)?;
    let immutable = keep_server_fields(&at, &old, &mut new);
    check_finalizers(&at, &old, &new)?;
    default_builtin(rt, &mut new);
    // The stored object as this version serves it, which every check below compares with.
    let served_old = conversion::serve(rt, &old, &ctx.conversions)?;
    validate(&at, &served_old, &mut new, immutable, ctx)?;
    if rt.is("apiextensions.k8s.io", "customresourcedefinitions") && at.subresource.is_none() {
        strategy::accept_crd(Some(&served_old), &mut new);
    }
    rt.rewrite(&mut new);
    if let Some(generation) = next_generation(rt, &served_old, &new) {
        set_meta(&mut new, "generation", json!(generation));
    }
    let managed = match given {
        Some(given) => Managed::Given(given),
        None => Managed::Update {
            manager: &ctx.manager,
            old: Some(&served_old),
        },
    };
    managed::record(rt, at.subresource.unwrap_or(""), &mut new, managed);
    after_field_manager(state, rt, &mut new, Some(&old), ctx.dry_run)?;
    round_trip(rt, &mut new);
    // A write that changes nothing in storage is not a write: no new version, no event. As
    // kube-apiserver compares the bytes it would store, an object stored in another version
    // than the storage version is rewritten (how storage migration works), and a change to
    // a field the storage version prunes is a write that stores nothing new but its
    // generation.
    let mut stored_new = new.clone();
    conversion::to_storage(rt, &mut stored_new, &ctx.conversions)?;
    let unchanged = without_version(&stored_new) == without_version(&old);
    if unchanged {
        return Ok(served_old);
    }
    if ctx.dry_run {
        set_meta(
            &mut stored_new,
            "resourceVersion",
            json!(rv_of(&old).to_string()),
        );
        return conversion::serve(rt, &stored_new, &ctx.conversions);
    }
    store(state, rt, key, stored_new, ctx)
}

/// A PUT body's `metadata.uid` is a precondition on the stored object: another one is a
/// 409 from storage, before the object is looked at.
pub(crate) fn check_uid_precondition(
    state: &State,
    at: ObjectRef<'_>,
    obj: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    let (rt, ns, name) = (at.rt, at.namespace, at.name);
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

/// What a PUT body must agree with before anything else: an object of the resource's
/// type, in the URL's namespace and name, at the stored version when it names one.
fn check_request(at: &ObjectRef<'_>, old: &Value, new: &Value) -> Result<(), ApiError> {
    let (rt, name) = (at.rt, at.name);
    if !new.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    check_kind(rt, new)?;
    if let (Some(url_ns), Some(body_ns)) = (
        at.namespace.filter(|_| rt.namespaced),
        new.pointer("/metadata/namespace").and_then(Value::as_str),
    ) && !body_ns.is_empty()
        && body_ns != url_ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    if let Some(body_name) = name_of(new)
        && body_name != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let wanted_rv = new
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Some(e) = resource_version_error(wanted_rv) {
        return Err(ApiError::custom(500, "", &e));
    }
    if !wanted_rv.is_empty() && wanted_rv != rv_of(old).to_string() {
        return Err(ApiError::conflict(
            &rt.group,
            &rt.plural,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    Ok(())
}

/// The storage's `strconv.ParseUint` error for a resource version the update sent that is
/// not a number (the real server answers it as a 500 with no reason).
pub(crate) fn resource_version_error(rv: &str) -> Option<String> {
    if rv.is_empty() {
        return None;
    }
    let why = if !rv.bytes().all(|c| c.is_ascii_digit()) {
        "invalid syntax"
    } else if rv.parse::<u64>().is_err() {
        "value out of range"
    } else {
        return None;
    };
    Some(format!("strconv.ParseUint: parsing {rv:?}: {why}"))
}

/// Puts back what this write cannot change: the status (or everything but it, through
/// `/status`), a namespace's registry fields, and the metadata only the server sets.
/// Returns the errors of immutable metadata the body changed.
fn keep_server_fields(at: &ObjectRef<'_>, old: &Value, new: &mut Value) -> Vec<FieldError> {
    match at.subresource {
        Some("status") => {
            // Only the status changes.
            let status = new.get("status").cloned();
            *new = without(old, &["status"]);
            if let Some(status) = status {
                new["status"] = status;
            }
        }
        _ if at.rt.status => {
            // The main endpoint ignores status when the status subresource is on.
            match old.get("status") {
                Some(status) => new["status"] = status.clone(),
                None => {
                    if let Some(map) = new.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        _ => {}
    }
    strategy::keep_namespace_fields(at.rt, old, new, at.subresource);
    let immutable = meta::validate_immutable(new, old);
    // Server-owned metadata keeps its values.
    for k in [
        "uid",
        "creationTimestamp",
        "namespace",
        "name",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old.pointer(&format!("/metadata/{k}")) {
            Some(v) => set_meta(new, k, v.clone()),
            None => {
                if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove(k);
                }
            }
        }
    }
    immutable
}

/// An object being deleted takes no new finalizers.
fn check_finalizers(at: &ObjectRef<'_>, old: &Value, new: &Value) -> Result<(), ApiError> {
    if at.subresource.is_some() || old.pointer("/metadata/deletionTimestamp").is_none() {
        return Ok(());
    }
    let before = finalizers(old);
    match finalizers(new).iter().find(|f| !before.contains(f)) {
        Some(added) => Err(ApiError::invalid(
            &at.rt.group,
            &at.rt.kind,
            at.name,
            vec![FieldError::forbidden(
                "metadata.finalizers",
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{\"{added}\"}}"
                ),
            )],
        )),
        None => Ok(()),
    }
}

/// The validation of an update against the object as served (`old`): metadata (with the
/// `immutable` errors found before), a built-in kind's rules, a CRD's review, and a custom
/// resource's kind, schema and CEL rules; one 422 for all.
fn validate(
    at: &ObjectRef<'_>,
    old: &Value,
    new: &mut Value,
    immutable: Vec<FieldError>,
    ctx: &mut Ctx,
) -> Result<(), ApiError> {
    let (rt, name) = (at.rt, at.name);
    let mut errors = meta::validate_update(new, rt.meta);
    errors.extend(immutable);
    if !rt.custom && at.subresource.is_none() {
        errors.extend(kinds::validate(&rt.api_version(), &rt.kind, new, Some(old)));
    }
    if rt.is("apiextensions.k8s.io", "customresourcedefinitions") && at.subresource.is_none() {
        errors.extend(review_crd(Some(old), new, &mut ctx.warnings));
    }
    let kind_errors = if rt.custom {
        custom_kind_errors(&rt.kind, new)
    } else {
        Vec::new()
    };
    // A custom resource of another kind is not checked against the schema.
    if !kind_errors.is_empty() {
        errors.extend(kind_errors);
        let kind = new["kind"].as_str().unwrap_or_default().to_owned();
        return Err(ApiError::invalid(&rt.group, &kind, name, errors));
    }
    errors.extend(admit_schema(rt, new, Some(old), ctx)?);
    admit_rules(rt, new, Some(old), &mut errors, ctx);
    if !errors.is_empty() {
        return Err(ApiError::invalid(error_group(rt), &rt.kind, name, errors)
            .with_warnings(std::mem::take(&mut ctx.warnings)));
    }
    Ok(())
}

/// `obj` without its `metadata.resourceVersion`: what kube-apiserver's no-op check compares.
fn without_version(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    out
}

/// Stores the updated object (already in the storage version) at a new version, then what
/// follows an update: an object being deleted whose last finalizer went is removed; a CRD's
/// resources are served again; the garbage collector and the root CA publisher look at the
/// change. Returns the object as the request's version serves it.
fn store(
    state: &mut State,
    rt: &ResourceType,
    key: ObjectKey,
    mut stored: Value,
    ctx: &Ctx,
) -> Result<Value, ApiError> {
    // Removing the last finalizer of an object being deleted deletes it.
    let held_by_spec = rt.is("", "namespaces")
        && stored
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
    let rv = state.store.next_rv();
    set_meta(&mut stored, "resourceVersion", json!(rv.to_string()));
    // Converted back before anything is written, so a pending conversion changes nothing.
    let response = conversion::serve(rt, &stored, &ctx.conversions)?;
    if stored.pointer("/metadata/deletionTimestamp").is_some()
        && finalizers(&stored).is_empty()
        && !held_by_spec
    {
        state.store.remove(&key, &stored);
        controllers::after_delete(state, &response);
        return Ok(response);
    }
    state.store.put(key, stored);
    if rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions" {
        state.serve_crd(&response);
    }
    controllers::gc::collect(state);
    controllers::namespaces::reconcile_root_ca(state, rt, &response);
    Ok(response)
}

/// The generation an update gives an object, when its kind counts them.
fn next_generation(rt: &ResourceType, old: &Value, new: &Value) -> Option<i64> {
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)?;
    let at = |obj: &'_ Value, path: &str| obj.pointer(path).cloned();
    let changed = match rt.generation {
        Generation::Untracked => false,
        Generation::Spec => at(old, "/spec") != at(new, "/spec"),
        Generation::SpecOrAnnotations => {
            at(old, "/spec") != at(new, "/spec")
                || at(old, "/metadata/annotations") != at(new, "/metadata/annotations")
        }
        Generation::AllButMetadata => {
            let ignored: &[&str] = if rt.status {
                &["metadata", "status", "apiVersion", "kind"]
            } else {
                &["metadata", "apiVersion", "kind"]
            };
            without(new, ignored) != without(old, ignored)
        }
    };
    Some(if changed { generation + 1 } else { generation })
}
