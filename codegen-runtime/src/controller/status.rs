//! Status writes that are skipped when nothing changed: a controller in steady state makes
//! no requests, and a status written on every reconcile (each write an event that queues
//! the object again) does not turn into a loop.

use std::fmt::Debug;

use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::FieldManager;

/// Whether `wanted` says something `current` does not: a field of `wanted` missing from
/// `current` or different there. Fields only `current` has (another manager's) do not
/// count, as server-side apply leaves them; lists compare whole, as atomic lists do, and
/// condition-style lists (maps keyed by `type`) entry by entry.
pub fn differs(current: &Value, wanted: &Value) -> bool {
    match (current, wanted) {
        (Value::Object(have), Value::Object(want)) => want.iter().any(|(k, w)| match have.get(k) {
            Some(h) => differs(h, w),
            None => !w.is_null(),
        }),
        (Value::Array(have), Value::Array(want)) => {
            let keyed = |items: &[Value]| {
                items
                    .iter()
                    .all(|i| i.get("type").is_some_and(Value::is_string))
            };
            if !want.is_empty() && keyed(want) && keyed(have) {
                want.iter().any(|w| {
                    have.iter()
                        .find(|h| h.get("type") == w.get("type"))
                        .is_none_or(|h| differs(h, w))
                })
            } else {
                have.len() != want.len() || have.iter().zip(want).any(|(h, w)| differs(h, w))
            }
        }
        (h, w) => h != w,
    }
}

/// Applies `status` to `obj`'s status subresource with server-side apply as `manager`,
/// unless `obj` already says all of it ([`differs`]); the written object, or `None` when
/// nothing was sent. `obj` should be the freshest copy the controller has (its cache, or
/// [`crate::ReadYourWrites::latest`]).
pub async fn apply_status_if_changed<K, S>(
    api: &Api<K>,
    obj: &K,
    status: &S,
    manager: &FieldManager,
) -> Result<Option<K>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
    S: Serialize,
{
    let wanted = serde_json::to_value(status).map_err(kube::Error::SerdeError)?;
    let current = serde_json::to_value(obj).map_err(kube::Error::SerdeError)?;
    if !differs(current.get("status").unwrap_or(&Value::Null), &wanted) {
        return Ok(None);
    }
    let patch = serde_json::json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": {"name": obj.name_any()},
        "status": wanted,
    });
    let params: PatchParams = manager.apply_params();
    api.patch_status(&obj.name_any(), &params, &Patch::Apply(&patch))
        .await
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_the_object_already_says_is_no_change() {
        let current = json!({
            "observedGeneration": 2,
            "replicas": 3,
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Done", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "Other", "status": "False"},
            ],
        });
        assert!(!differs(&current, &json!({"observedGeneration": 2})));
        assert!(!differs(
            &current,
            &json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Done"}]})
        ));
        assert!(differs(&current, &json!({"observedGeneration": 3})));
        assert!(differs(
            &current,
            &json!({"conditions": [{"type": "Ready", "status": "False"}]})
        ));
        assert!(differs(&current, &json!({"message": "new"})));
        assert!(!differs(&current, &json!({"message": null})));
        assert!(differs(
            &json!({"tags": ["a", "b"]}),
            &json!({"tags": ["a"]})
        ));
        assert!(differs(&Value::Null, &json!({"replicas": 1})));
    }
}
