//! PATCH: a merge, JSON or strategic merge patch applied to the object as served, or a
//! server-side apply (which may create it); then the update (or create) rules.

use serde_json::{Value, json};

use super::create::create_with;
use super::managed::ssa_type;
use super::update::{resource_version_error, update};
use crate::admission::Ctx;
use crate::admission::decode::bodies::{self, APPLY, JSON_PATCH, MERGE, STRATEGIC};
use crate::admission::decode::{check_applied, check_converted, check_patched};
use crate::conversion;
use crate::error::ApiError;
use crate::meta::{name_of, now, set_meta};
use crate::resource::ObjectRef;
use crate::store::State;
use crate::store::patch;
use crate::store::ssa;

/// PATCH of object `at` with `body`, a patch of `content_type`.
pub(crate) fn patch(
    state: &mut State,
    at: ObjectRef<'_>,
    content_type: &str,
    body: &[u8],
    ctx: &mut Ctx,
) -> Result<Value, ApiError> {
    let rt = at.rt;
    let kind = content_type.split(';').next().unwrap_or("").trim();
    if ![APPLY, MERGE, STRATEGIC, JSON_PATCH].contains(&kind) {
        return Err(ApiError::unsupported_patch_type());
    }
    let parsed = bodies::patch(kind, body)?;
    let key = State::key(rt, at.namespace, at.name);
    let existing = state
        .store
        .get(&key)
        .map(|o| conversion::serve(rt, &o, &ctx.conversions))
        .transpose()?;
    if kind == APPLY {
        return apply(state, at, existing, &parsed, ctx);
    }
    let mut target = existing.ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, at.name))?;
    let had_rv = parsed.pointer("/metadata/resourceVersion").is_some();
    match kind {
        MERGE => patch::merge_patch(&mut target, &parsed),
        STRATEGIC => {
            patch::strategic_merge_patch(&mut target, &parsed, ssa_type(rt))
                .map_err(|e| ApiError::custom(500, "", &e))?;
        }
        JSON_PATCH => {
            patch::json_patch(&mut target, &parsed).map_err(|_| ApiError::patch_rejected())?;
        }
        _ => return Err(ApiError::unsupported_patch_type()),
    }
    // The patched object is decoded before its name is looked at.
    check_patched(rt, kind, &target, &parsed, at.subresource)?;
    if name_of(&target).is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({} based on URL) was undeterminable: name must be provided",
            at.name
        )));
    }
    if !had_rv && let Some(meta) = target.get_mut("metadata").and_then(Value::as_object_mut) {
        // A patch without a resourceVersion applies to whatever is stored.
        meta.remove("resourceVersion");
    }
    update(state, at, target, ctx, None)
}

/// Server-side apply of `config` to `existing` (as served): created when it does not
/// exist, else updated, with the `managedFields` the apply computed.
fn apply(
    state: &mut State,
    at: ObjectRef<'_>,
    existing: Option<Value>,
    config: &Value,
    ctx: &mut Ctx,
) -> Result<Value, ApiError> {
    check_applied(at.rt, at.name, config)?;
    let mut applied = server_side_apply(&at, existing.as_ref(), config, ctx)?;
    check_converted(at.rt, at.name, config, &applied)?;
    let managed = applied
        .pointer("/metadata/managedFields")
        .cloned()
        .unwrap_or(Value::Null);
    match existing {
        None => {
            // The storage parses the version before it finds nothing to update.
            let rv = config.pointer("/metadata/resourceVersion");
            if let Some(e) = resource_version_error(rv.and_then(Value::as_str).unwrap_or("")) {
                return Err(ApiError::custom(500, "", &e));
            }
            set_meta(&mut applied, "name", json!(at.name));
            // Authorized as `patch` by the request; creating needs `create` too.
            ctx.authorize_create = true;
            create_with(state, at.rt, at.namespace, applied, ctx, Some(&managed))
        }
        Some(_) => {
            if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            if let Some(rv) = config.pointer("/metadata/resourceVersion") {
                set_meta(&mut applied, "resourceVersion", rv.clone());
            }
            update(state, at, applied, ctx, Some(&managed))
        }
    }
}

/// The ownership side of a server-side apply: the merged object and its
/// `managedFields`, or the 409 of its conflicts.
fn server_side_apply(
    at: &ObjectRef<'_>,
    existing: Option<&Value>,
    config: &Value,
    ctx: &Ctx,
) -> Result<Value, ApiError> {
    let rt = at.rt;
    let sent_av = config
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let sent_kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
    if sent_av != rt.api_version() || sent_kind != rt.kind {
        let (g, v) = sent_av.rsplit_once('/').unwrap_or(("", sent_av));
        return Err(ApiError::bad_request(format!(
            "invalid object type: {g}/{v}, Kind={sent_kind}"
        )));
    }
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let ty = ssa_type(rt);
    let zero = ssa::schema::zero(ty, &rt.api_version(), &rt.kind);
    let sub = at.subresource.unwrap_or("");
    let reset = ssa::reset_fields(sub, rt.status, existing, config);
    let time = now();
    let w = ssa::Writer {
        manager: &ctx.manager,
        subresource: sub,
        api_version: &rt.api_version(),
        now: &time,
    };
    ssa::apply(existing, &zero, config, ty, &w, ctx.force, &reset).map_err(|c| {
        let (message, causes) = c.message_and_causes();
        ApiError::apply_conflict(message, causes)
    })
}
