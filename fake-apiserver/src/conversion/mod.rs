//! CRD version conversion: objects are stored in the storage version and served in the
//! version a request names. With strategy `None` only `apiVersion` changes; with
//! `Webhook` the CRD's conversion webhook converts them ([`webhook`]).
//!
//! The server's own work stays synchronous: a request that meets an object it has not
//! converted yet stops before changing anything with a pending error ([`pending_of`]
//! reads it), the caller converts what it names ([`webhook::convert`]), and runs the
//! request again with the results in [`Conversions`].

pub mod webhook;

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::resource::ResourceType;

/// The reason of the internal error that asks the handler to convert objects first; it
/// never reaches a client.
const PENDING: &str = "ConversionPending";

/// How many times one request is run again after converting what it met.
pub(crate) const ROUNDS: usize = 4;

/// One object converted: its content (metadata aside), the version asked for, the
/// content returned and the metadata the webhook returned (of which its labels and
/// annotations count).
#[derive(Debug, Clone)]
struct Converted {
    input: Value,
    desired: String,
    output: Value,
    metadata: Value,
}

/// The conversions done for one request.
#[derive(Debug, Default, Clone)]
pub(crate) struct Conversions(Vec<Converted>);

/// `obj` without its metadata: what a conversion depends on.
fn content(obj: &Value) -> Value {
    let mut content = obj.clone();
    if let Some(map) = content.as_object_mut() {
        map.remove("metadata");
    }
    content
}

impl Conversions {
    /// Records that `original` was converted to `converted`, in `desired`.
    pub(crate) fn record(&mut self, original: &Value, desired: &str, converted: &Value) {
        self.0.push(Converted {
            input: content(original),
            desired: desired.to_owned(),
            metadata: converted
                .get("metadata")
                .cloned()
                .unwrap_or_else(|| json!({})),
            output: content(converted),
        });
    }

    /// `obj` in `desired`, when this request has converted it: the webhook's content with
    /// `obj`'s metadata but the webhook's labels and annotations (kube-apiserver's
    /// `restoreObjectMeta`); `None` too when those do not pass its checks for `obj`, so the
    /// request converts it again and fails with them.
    fn lookup(&self, obj: &Value, desired: &str) -> Option<Value> {
        let input = content(obj);
        let done = self
            .0
            .iter()
            .find(|c| c.desired == desired && c.input == input)?;
        let mut out = done.output.clone();
        out.as_object_mut()?
            .insert("metadata".to_owned(), done.metadata.clone());
        crate::rules::conversion::restore_object_meta(obj.get("metadata"), &mut out).ok()?;
        Some(out)
    }
}

/// The internal error that stops a request until `objects` are converted to `desired`.
fn pending(objects: Vec<Value>, desired: &str) -> ApiError {
    let mut err = ApiError::custom(500, PENDING, "conversion pending");
    err.details = Some(json!({"objects": objects, "desired": desired}));
    err
}

/// What a [`pending`] error asks to convert: the objects and the version.
pub(crate) fn pending_of(err: &ApiError) -> Option<(Vec<Value>, String)> {
    if err.reason != PENDING {
        return None;
    }
    let details = err.details.as_ref()?;
    Some((
        details["objects"].as_array().cloned().unwrap_or_default(),
        details["desired"].as_str().unwrap_or("").to_owned(),
    ))
}

/// `objects` (as stored) in `rt`'s version: read as kube-apiserver's storage codec reads
/// them where no webhook converts them ([`ResourceType::read_as_served`]), else as this
/// request converted them, pruned by `rt`'s schema, or a [`pending`] error naming all it
/// has not.
pub(crate) fn serve_all(
    rt: &ResourceType,
    objects: Vec<Value>,
    done: &Conversions,
) -> Result<Vec<Value>, ApiError> {
    let desired = rt.api_version();
    if let Some(stored) = objects.iter().find_map(|o| removed_version(rt, o)) {
        return Err(ApiError::invalid_stored_version(&stored, None));
    }
    let mut missing = Vec::new();
    let out = objects
        .into_iter()
        .map(|mut obj| {
            let from = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            if rt.conversion.is_none() || from == desired {
                rt.read_as_served(&mut obj);
                return obj;
            }
            match done.lookup(&obj, &desired) {
                Some(mut converted) => {
                    // The webhook's answer, pruned by the schema of the version asked for.
                    if let Some(schema) = &rt.schema {
                        apiserver_rules::schema::coerce(schema, &mut converted, false);
                    }
                    converted
                }
                None => {
                    missing.push(obj.clone());
                    obj
                }
            }
        })
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(pending(missing, &desired))
    }
}

/// The `apiVersion` of `obj`, a custom resource stored in a version its CRD no longer has
/// (removed while objects were still stored in it), if it is.
pub(crate) fn removed_version(rt: &ResourceType, obj: &Value) -> Option<String> {
    if !rt.custom {
        return None;
    }
    let stored = obj.get("apiVersion").and_then(Value::as_str)?;
    let version = stored.rsplit('/').next().unwrap_or(stored);
    (!rt.schemas.is_empty() && !rt.schemas.contains_key(version)).then(|| stored.to_owned())
}

/// One object of [`serve_all`].
pub(crate) fn serve(rt: &ResourceType, obj: &Value, done: &Conversions) -> Result<Value, ApiError> {
    serve_all(rt, vec![obj.clone()], done).map(|mut v| v.remove(0))
}

/// `objects` of `rt`'s CRD in `desired` (any of its versions).
pub(crate) fn to_version(
    rt: &ResourceType,
    desired: &str,
    objects: Vec<Value>,
    done: &Conversions,
) -> Result<Vec<Value>, ApiError> {
    let mut missing = Vec::new();
    let out = objects
        .into_iter()
        .map(|mut obj| {
            let from = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            if rt.conversion.is_none() || from == desired {
                if let Some(map) = obj.as_object_mut() {
                    map.insert("apiVersion".to_owned(), Value::from(desired));
                    map.insert("kind".to_owned(), Value::from(rt.kind.as_str()));
                }
                return obj;
            }
            done.lookup(&obj, desired).unwrap_or_else(|| {
                missing.push(obj.clone());
                obj
            })
        })
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(pending(missing, desired))
    }
}

/// `obj`, written in `rt`'s version, in the storage version, as kube-apiserver's storage
/// codec writes it: rewritten (strategy `None`) or as this request converted it (else a
/// pending error), then coerced by the storage version's schema, so that a field the
/// storage version does not know is not stored.
pub(crate) fn to_storage(
    rt: &ResourceType,
    obj: &mut Value,
    done: &Conversions,
) -> Result<(), ApiError> {
    if !rt.custom || rt.storage_version == rt.version {
        return Ok(());
    }
    let desired = format!("{}/{}", rt.group, rt.storage_version);
    *obj = to_version(rt, &desired, vec![obj.take()], done)?.remove(0);
    rt.coerce_for_storage(obj, &rt.storage_version);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gizmo(api_version: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": "Gizmo",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                "labels": {"app": "a"}},
            "spec": spec})
    }

    #[test]
    fn a_converted_object_keeps_the_original_metadata_but_the_webhooks_labels() {
        let original = gizmo("example.com/v1", json!({"size": 1}));
        let mut converted = gizmo("example.com/v2", json!({"look": {"size": 1}}));
        converted["metadata"]["resourceVersion"] = json!("0");
        converted["metadata"]["labels"] = json!({"app": "a", "converted": "yes"});
        converted["metadata"]["annotations"] = json!({"note": "v2"});
        let mut done = Conversions::default();
        done.record(&original, "example.com/v2", &converted);
        // A later write of the same content (new resourceVersion) finds it too.
        let mut rewritten = original.clone();
        rewritten["metadata"]["resourceVersion"] = json!("8");
        let out = done.lookup(&rewritten, "example.com/v2").unwrap();
        assert_eq!(out["spec"], json!({"look": {"size": 1}}));
        assert_eq!(out["metadata"]["resourceVersion"], "8");
        assert_eq!(
            out["metadata"]["labels"],
            json!({"app": "a", "converted": "yes"})
        );
        assert_eq!(out["metadata"]["annotations"], json!({"note": "v2"}));
        assert!(done.lookup(&original, "example.com/v3").is_none());
        let mut changed = original.clone();
        changed["spec"]["size"] = json!(2);
        assert!(done.lookup(&changed, "example.com/v2").is_none());
        // What kube-apiserver refuses of the returned labels is not served.
        let mut bad = converted.clone();
        bad["metadata"]["labels"] = json!({"bad key!": "x"});
        let mut done = Conversions::default();
        done.record(&original, "example.com/v2", &bad);
        assert!(done.lookup(&original, "example.com/v2").is_none());
        // Labels the webhook leaves out are removed.
        converted["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("labels");
        let mut done = Conversions::default();
        done.record(&original, "example.com/v2", &converted);
        let out = done.lookup(&original, "example.com/v2").unwrap();
        assert_eq!(out["metadata"].get("labels"), None);
        assert_eq!(out["metadata"]["uid"], "u1");
    }

    #[test]
    fn a_request_that_meets_an_unconverted_object_names_all_it_needs() {
        let rt = crate::resource::crd::from_crd(&json!({"spec": {"group": "example.com",
            "scope": "Namespaced", "names": {"plural": "gizmos", "kind": "Gizmo"},
            "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://127.0.0.1:1/c"}}},
            "versions": [{"name": "v1", "served": true, "storage": true},
                         {"name": "v2", "served": true, "storage": false}]}}))
        .unwrap()
        .into_iter()
        .find(|t| t.version == "v2")
        .unwrap();
        let stored = vec![
            gizmo("example.com/v1", json!({"n": 1})),
            gizmo("example.com/v2", json!({"n": 2})),
            gizmo("example.com/v1", json!({"n": 3})),
        ];
        let err = serve_all(&rt, stored, &Conversions::default()).unwrap_err();
        let (objects, desired) = pending_of(&err).unwrap();
        assert_eq!(desired, "example.com/v2");
        let sizes: Vec<&Value> = objects.iter().map(|o| &o["spec"]["n"]).collect();
        assert_eq!(sizes, [&json!(1), &json!(3)]);
        assert!(pending_of(&ApiError::internal("x")).is_none());
    }
}
