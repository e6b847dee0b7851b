//! POST: a new object, with the checks in the real server's order: the body, the
//! namespace's lifecycle, validation, then whether the name is taken.

use serde_json::{Value, json};

use super::managed::{self, Managed};
use super::strategy;
use crate::admission::Ctx;
use crate::admission::authorization::{self, Attributes, escalation};
use crate::admission::decode::type_meta::custom_kind_errors;
use crate::admission::decode::{check_kind, round_trip};
use crate::admission::defaulting::{after_field_manager, default_builtin};
use crate::admission::lifecycle;
use crate::admission::validation::{admit_rules, admit_schema, error_group, review_crd};
use crate::controllers;
use crate::conversion;
use crate::error::ApiError;
use crate::meta::{name_of, now, random_suffix, set_meta};
use crate::resource::{Generation, ResourceType};
use crate::rules::{kinds, meta};
use crate::store::State;
use crate::store::objects::ObjectKey;

/// POST: a new object.
pub(crate) fn create(
    state: &mut State,
    rt: &ResourceType,
    namespace: Option<&str>,
    obj: Value,
    ctx: &mut Ctx,
) -> Result<Value, ApiError> {
    create_with(state, rt, namespace, obj, ctx, None)
}

/// POST, with `managedFields` given by the caller (creation by server-side apply) or, when
/// `None`, recorded for the writer.
pub(crate) fn create_with(
    state: &mut State,
    rt: &ResourceType,
    namespace: Option<&str>,
    mut obj: Value,
    ctx: &mut Ctx,
    given: Option<&Value>,
) -> Result<Value, ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    check_kind(rt, &obj)?;
    default_builtin(rt, &mut obj);
    let namespace = placement(rt, namespace, &obj)?;
    let namespace = namespace.as_deref();
    let generate = obj
        .pointer("/metadata/generateName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if name_of(&obj).is_none_or(str::is_empty) && !generate.is_empty() {
        let name = generate_name(state, rt, namespace, &generate)?;
        set_meta(&mut obj, "name", json!(name));
    }
    let name = name_of(&obj).unwrap_or("").to_owned();
    if let Some(ns) = namespace {
        let named = if name.is_empty() { &generate } else { &name };
        lifecycle::admit_create(state, rt, ns, named)?;
    }
    // RBAC escalation prevention, before the object is validated, as the real server's
    // storage of roles and bindings does it.
    if escalation::guards(&rt.group, &rt.plural) {
        escalation::check(
            state,
            &ctx.user,
            &rt.plural,
            namespace.unwrap_or(""),
            "",
            &obj,
            None,
        )?;
    }
    validate(rt, namespace, &name, &mut obj, ctx)?;
    place(rt, namespace, &mut obj);
    let mut errors = admit_schema(rt, &mut obj, None, ctx)?;
    admit_rules(rt, &obj, None, &mut errors, ctx);
    if !errors.is_empty() {
        return Err(ApiError::invalid(error_group(rt), &rt.kind, &name, errors)
            .with_warnings(std::mem::take(&mut ctx.warnings)));
    }
    if ctx.authorize_create {
        // An apply (or PUT) that finds nothing to update needs `create` as well as the
        // verb it was sent with, checked once the object is valid.
        let create = Attributes {
            verb: "create".to_owned(),
            resource_request: true,
            api_group: rt.group.clone(),
            api_version: rt.version.clone(),
            resource: rt.plural.clone(),
            namespace: namespace.unwrap_or("").to_owned(),
            name: name.clone(),
            ..Attributes::default()
        };
        authorization::check(state, &ctx.user, &create)?;
    }
    if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
        strategy::accept_crd(None, &mut obj);
    }
    let key = State::key(rt, namespace, &name);
    if let Some(existing) = state.store.get(&key) {
        let deleting = existing.pointer("/metadata/deletionTimestamp").is_some();
        return Err(ApiError::already_exists(
            &rt.group, &rt.plural, &name, deleting,
        ));
    }
    stamp(state, rt, &mut obj);
    let managed = match given {
        Some(given) => Managed::Given(given),
        None => Managed::Update {
            manager: &ctx.manager,
            old: None,
        },
    };
    managed::record(rt, "", &mut obj, managed);
    after_field_manager(state, rt, &mut obj, None, ctx.dry_run)?;
    round_trip(rt, &mut obj);
    if ctx.dry_run {
        // What the object would be stored as, read back: as kube-apiserver's dry run
        // round-trips it through the storage codec.
        let mut stored = obj;
        conversion::to_storage(rt, &mut stored, &ctx.conversions)?;
        return conversion::serve(rt, &stored, &ctx.conversions);
    }
    store(state, rt, key, obj, ctx)
}

/// The namespace a new object goes in: the request's, else the body's, else `default`
/// (none for cluster-scoped kinds); a body naming another than the request is a 400.
fn placement(
    rt: &ResourceType,
    namespace: Option<&str>,
    obj: &Value,
) -> Result<Option<String>, ApiError> {
    if !rt.namespaced {
        return Ok(None);
    }
    let body_ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    let ns = namespace
        .map(str::to_owned)
        .or(body_ns.clone())
        .unwrap_or_else(|| "default".to_owned());
    if body_ns.as_ref().is_some_and(|b| *b != ns) {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(Some(ns))
}

/// A name for `generateName`: the prefix (at most 58 characters) and a random suffix; like
/// the real server, up to 8 tries for a name not taken yet.
fn generate_name(
    state: &State,
    rt: &ResourceType,
    namespace: Option<&str>,
    generate: &str,
) -> Result<String, ApiError> {
    let prefix: String = generate.chars().take(58).collect();
    let seed = state.store.resource_version();
    let candidates: Vec<String> = (0..8)
        .map(|i| format!("{prefix}{}", random_suffix(seed.wrapping_add(i * 7919))))
        .collect();
    let free = candidates
        .iter()
        .find(|n| !state.store.contains(&State::key(rt, namespace, n)));
    match free {
        Some(name) => Ok(name.clone()),
        None => Err(ApiError::generate_name_conflict(
            &rt.group,
            &rt.plural,
            &candidates[7],
        )),
    }
}

/// The validation of a new object before it is placed: a custom resource's kind, the
/// metadata, a built-in kind's rules (in its namespace), a CRD's review.
fn validate(
    rt: &ResourceType,
    namespace: Option<&str>,
    name: &str,
    obj: &mut Value,
    ctx: &mut Ctx,
) -> Result<(), ApiError> {
    if rt.custom {
        let errors = custom_kind_errors(&rt.kind, obj);
        if !errors.is_empty() {
            let kind = obj["kind"].as_str().unwrap_or_default();
            return Err(ApiError::invalid(&rt.group, kind, name, errors));
        }
    }
    let mut errors = meta::validate_create(obj, rt.meta);
    if !rt.custom {
        let mut placed = obj.clone();
        if let Some(ns) = namespace {
            set_meta(&mut placed, "namespace", json!(ns));
        }
        errors.extend(kinds::validate(&rt.api_version(), &rt.kind, &placed, None));
    }
    if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
        errors.extend(review_crd(None, obj, &mut ctx.warnings));
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(error_group(rt), &rt.kind, name, errors));
    }
    Ok(())
}

/// Puts the object in its namespace (or none) and drops what a create cannot set: a
/// deletion, and the status when it is a subresource.
fn place(rt: &ResourceType, namespace: Option<&str>, obj: &mut Value) {
    if let Some(ns) = namespace {
        set_meta(obj, "namespace", json!(ns));
    } else if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
    }
    if rt.status
        && let Some(map) = obj.as_object_mut()
    {
        map.remove("status");
    }
}

/// What the server sets on every new object: its served type, a uid, the creation time
/// and, for kinds that count them, generation 1.
fn stamp(state: &mut State, rt: &ResourceType, obj: &mut Value) {
    rt.rewrite(obj);
    set_meta(obj, "uid", json!(state.store.next_uid()));
    set_meta(obj, "creationTimestamp", json!(now()));
    if rt.generation != Generation::Untracked {
        set_meta(obj, "generation", json!(1));
    }
}

/// Stores the new object at a new version (in the storage version, pruned by its schema),
/// then what follows a create: an accepted CRD's resources are served, a new namespace gets its defaults.
fn store(
    state: &mut State,
    rt: &ResourceType,
    key: ObjectKey,
    mut obj: Value,
    ctx: &Ctx,
) -> Result<Value, ApiError> {
    let rv = state.store.next_rv();
    set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
    let mut stored = obj.clone();
    conversion::to_storage(rt, &mut stored, &ctx.conversions)?;
    // The answer is the object as stored, read back through the request's version; computed
    // before anything is written, so a pending conversion changes nothing.
    let response = conversion::serve(rt, &stored, &ctx.conversions)?;
    state.store.put(key, stored);
    if rt.plural == "customresourcedefinitions" && rt.group == "apiextensions.k8s.io" {
        state.serve_crd(&obj);
    }
    if rt.is("", "namespaces") {
        let name = name_of(&obj).unwrap_or("").to_owned();
        controllers::namespaces::ensure_defaults(state, &name);
    }
    Ok(response)
}
