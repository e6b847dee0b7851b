//! `managedFields` on a write: as server-side apply decided them, or with the writer's
//! update recorded, as kube-apiserver's field manager records every create, update and
//! non-apply patch.

use serde_json::Value;

use crate::meta::{now, set_meta};
use crate::resource::ResourceType;
use crate::store::ssa::{self, schema::Ty};

/// A resource's type as server-side apply sees it.
pub(crate) fn ssa_type(rt: &ResourceType) -> Ty<'_> {
    Ty::of(&rt.api_version(), &rt.kind, rt.schema.as_ref(), rt.custom)
}

/// How a write sets `managedFields`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Managed<'a> {
    /// Records the writer's update over the object before (none on a create).
    Update {
        /// The field manager.
        manager: &'a str,
        /// The object before, as served.
        old: Option<&'a Value>,
    },
    /// Sets them as given (by server-side apply); `null` removes them.
    Given(&'a Value),
}

/// Sets `obj`'s `managedFields` for a write of `rt`'s `subresource` (`""` for the main
/// resource).
pub(crate) fn record(rt: &ResourceType, subresource: &str, obj: &mut Value, managed: Managed<'_>) {
    match managed {
        Managed::Given(Value::Null) => {
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("managedFields");
            }
        }
        Managed::Given(given) => set_meta(obj, "managedFields", given.clone()),
        Managed::Update { manager, old } => {
            let ty = ssa_type(rt);
            let zero = ssa::schema::zero(ty, &rt.api_version(), &rt.kind);
            let reset = ssa::reset_fields(subresource, rt.status, old, obj);
            let time = now();
            let w = ssa::Writer {
                manager,
                subresource,
                api_version: &rt.api_version(),
                now: &time,
            };
            ssa::update(old, &zero, obj, ty, &w, &reset);
        }
    }
}
