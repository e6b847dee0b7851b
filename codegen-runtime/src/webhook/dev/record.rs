//! What development mode changed on a cluster, recorded on each object it changes, and
//! putting it back.
//!
//! Every write of development mode carries, in the same request, the annotation
//! [`ANNOTATION`]: whom the change belongs to (the field manager, host and process) and what
//! the object held before (its `spec.conversion` or `webhooks`, and the annotations it
//! removes: cert-manager's CA injection), or that development mode created it. The record lives on the object itself, so it is there for
//! whoever talks to that cluster next (another process, another machine), it goes away with
//! the object, and it needs no permission beyond writing the object. [`restore`] puts every
//! recorded object of one field manager back (deleting those it created) and removes that
//! manager's entries from `managedFields`, so a later `kubectl apply --server-side` of the
//! operator's manifests meets no conflict with development mode.

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

/// The annotation holding the record: JSON `{"owner", "host", "pid", "before"}`.
pub const ANNOTATION: &str = "dev.kube-codegen.io/restore";

/// Annotations development mode leaves out while it owns an object: cert-manager's CA
/// injection would overwrite the development CA.
const DROPPED: &[&str] = &["cert-manager.io/inject-ca-from"];

/// The kinds development mode writes: `(group, kind, plural, the field it replaces)`.
pub(super) const KINDS: [(&str, &str, &str, &str); 3] = [
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        "/spec/conversion",
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        "/webhooks",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        "/webhooks",
    ),
];

/// A client for `kind`, one of [`KINDS`].
pub(super) fn api(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let (group, kind, plural, _) = KINDS
        .iter()
        .copied()
        .find(|k| k.1 == kind)
        .unwrap_or(KINDS[0]);
    let version = "v1";
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

/// The field of `kind` development mode replaces, as a JSON pointer.
fn field(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| k.1 == kind)
        .map_or("/spec/conversion", |k| k.3)
}

/// The record for a write by `owner` over `live` (`None`: development mode creates it). A
/// live object that already carries a record (a development run that died) keeps that
/// record's `before`: what was there before development mode, not what it left.
pub(super) fn record(owner: &str, kind: &str, live: Option<&Value>) -> Value {
    let before = match live {
        None => json!({"created": true}),
        Some(live) => match recorded(live) {
            Some(old) => old["before"].clone(),
            None => {
                // Only the annotations development mode removes: the others stay as they
                // are, and whoever changes them meanwhile (`kubectl apply`) keeps its change.
                let live_annotations = live.pointer("/metadata/annotations");
                let dropped: serde_json::Map<String, Value> = DROPPED
                    .iter()
                    .filter_map(|k| Some(((*k).to_owned(), live_annotations?.get(*k)?.clone())))
                    .collect();
                json!({
                    "value": live.pointer(field(kind)).cloned().unwrap_or(Value::Null),
                    "annotations": dropped,
                })
            }
        },
    };
    json!({
        "owner": owner,
        "host": hostname(),
        "pid": std::process::id(),
        "before": before,
    })
}

/// The record on `object`, if it carries one.
pub(super) fn recorded(object: &Value) -> Option<Value> {
    let text = object
        .pointer("/metadata/annotations")?
        .get(ANNOTATION)?
        .as_str()?;
    serde_json::from_str(text).ok()
}

/// `annotations` (of the live object) without the dropped ones, with `record`.
pub(super) fn annotations_with(annotations: Option<&Value>, record: &Value) -> Value {
    let mut out = annotations
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for key in DROPPED {
        out.remove(*key);
    }
    out.insert(ANNOTATION.to_owned(), Value::from(record.to_string()));
    Value::Object(out)
}

/// This machine's name, for a person reading the record.
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A JSON patch from its operations.
pub(super) fn json_patch(ops: Value) -> Result<Patch<()>, kube::Error> {
    let patch: json_patch::Patch = serde_json::from_value(ops).map_err(kube::Error::SerdeError)?;
    Ok(Patch::Json(patch))
}

/// Puts back the object `kind`/`name` if development mode as `owner` changed it (any owner
/// when `owner` is `None`); whether there was something to put back.
pub async fn restore_object(
    client: &kube::Client,
    kind: &str,
    name: &str,
    owner: Option<&str>,
) -> Result<bool, kube::Error> {
    let api = api(client, kind);
    let Some(live) = api.get_opt(name).await? else {
        return Ok(false);
    };
    let live = serde_json::to_value(&live).map_err(kube::Error::SerdeError)?;
    let Some(record) = recorded(&live) else {
        return Ok(false);
    };
    let manager = record["owner"].as_str().unwrap_or_default().to_owned();
    if owner.is_some_and(|o| o != manager) {
        return Ok(false);
    }
    let before = &record["before"];
    if before["created"] == true {
        return match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(true),
            Err(e) => Err(e),
        };
    }
    let version = live.pointer("/metadata/resourceVersion").cloned();
    // The live annotations, without the record, with those development mode removed.
    let mut annotations = live
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    annotations.remove(ANNOTATION);
    for (key, value) in before["annotations"].as_object().into_iter().flatten() {
        annotations.insert(key.clone(), value.clone());
    }
    let mut value = before["value"].clone();
    if value.is_null() && kind == "CustomResourceDefinition" {
        value = json!({"strategy": "None"});
    }
    let ops = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": version},
        {"op": "add", "path": field(kind), "value": value},
        {"op": "add", "path": "/metadata/annotations", "value": annotations},
    ]);
    let params = PatchParams {
        field_manager: Some(manager.clone()),
        ..PatchParams::default()
    };
    let restored = api.patch(name, &params, &json_patch(ops)?).await?;
    forget_manager(&api, name, &restored, &manager).await?;
    Ok(true)
}

/// Removes `manager`'s update entries from `object`'s `managedFields`: what it put back is
/// nobody's, so the next server-side apply of the manifests takes it without a conflict.
async fn forget_manager(
    api: &Api<DynamicObject>,
    name: &str,
    object: &DynamicObject,
    manager: &str,
) -> Result<(), kube::Error> {
    let entries = object.metadata.managed_fields.clone().unwrap_or_default();
    let kept: Vec<_> = entries
        .iter()
        .filter(|e| {
            e.manager.as_deref() != Some(manager) || e.operation.as_deref() != Some("Update")
        })
        .cloned()
        .collect();
    // An empty list would not change them; nothing else then owns anything either.
    if kept.len() == entries.len() || kept.is_empty() {
        return Ok(());
    }
    let ops = json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": object.metadata.resource_version},
        {"op": "replace", "path": "/metadata/managedFields", "value": kept},
    ]);
    match api
        .patch(name, &PatchParams::default(), &json_patch(ops)?)
        .await
    {
        Ok(_) => Ok(()),
        // Changed meanwhile: someone else writes it now, and the entries are only a nicety.
        Err(kube::Error::Api(status)) if status.code == 409 || status.code == 422 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Puts back every CRD conversion and webhook configuration development mode changed as
/// `owner` (every owner's when `None`), as a development run that died left them; the
/// `(kind, name)` of each put back. Run at the start of development mode, and by
/// `kube-codegen dev restore`.
pub async fn restore(
    client: &kube::Client,
    owner: Option<&str>,
) -> Result<Vec<(String, String)>, kube::Error> {
    let mut done = Vec::new();
    for (_, kind, _, _) in KINDS {
        let list = api(client, kind).list(&ListParams::default()).await?;
        for object in list {
            let Some(name) = object.metadata.name.clone() else {
                continue;
            };
            let has_record = object
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(ANNOTATION));
            if has_record && restore_object(client, kind, &name, owner).await? {
                done.push((kind.to_owned(), name));
            }
        }
    }
    Ok(done)
}
