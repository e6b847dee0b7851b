//! The scale subresource: an object's replicas and selector as an `autoscaling/v1` `Scale`,
//! read and written through its type's scale paths.

use serde_json::{Value, json};

use super::update::update;
use crate::admission::Ctx;
use crate::admission::decode::bodies;
use crate::error::ApiError;
use crate::meta::set_meta;
use crate::resource::{ObjectRef, ResourceType};
use crate::store::State;
use crate::store::patch;

/// The value at a `.a.b.c` JSON path.
fn path_get<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(obj, |v, k| v.get(k))
}

/// The `autoscaling/v1` `Scale` of an object, by its type's scale paths.
pub(crate) fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
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

/// PUT of `/scale`: the object `at` with the `Scale`'s replicas (and resourceVersion, a
/// precondition when given), written by the update rules.
pub(crate) fn set_scale(
    state: &mut State,
    at: ObjectRef<'_>,
    scale: &Value,
    ctx: &mut Ctx,
) -> Result<Value, ApiError> {
    let (rt, ns, name) = (at.rt, at.namespace, at.name);
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
    let at = ObjectRef {
        subresource: Some("scale"),
        ..at
    };
    update(state, at, obj, ctx, None)
}

/// PATCH of `/scale`: a JSON patch, or a merge patch (of any other patch type), of the
/// object's `Scale`, then [`set_scale`].
pub(crate) fn patch_scale(
    state: &mut State,
    at: ObjectRef<'_>,
    patch_type: &str,
    body: &[u8],
    ctx: &mut Ctx,
) -> Result<Value, ApiError> {
    let mut scale = scale_of(at.rt, &state.get(at.rt, at.namespace, at.name)?);
    let read_as = match patch_type {
        bodies::JSON_PATCH => bodies::JSON_PATCH,
        _ => bodies::MERGE,
    };
    let patch_body = bodies::patch(read_as, body)?;
    match patch_type {
        bodies::JSON_PATCH => {
            patch::json_patch(&mut scale, &patch_body).map_err(ApiError::bad_request)?
        }
        _ => patch::merge_patch(&mut scale, &patch_body),
    }
    set_scale(state, at, &scale, ctx)
}
