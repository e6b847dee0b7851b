//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (and
//! `as=PartialObjectMetadataList`): responses cut to their metadata, as kube-apiserver's
//! response transform does. An object becomes a `PartialObjectMetadata`, a list a
//! `PartialObjectMetadataList` that keeps the list's metadata, each watch event's object a
//! `PartialObjectMetadata`; a `Status` passes unchanged. Asking for the one of a list, or
//! the list of an object, is a 406 in the real server's words; so is any other `as=`.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::admission::decode::SERIALIZERS;
use crate::error::ApiError;
use crate::resource::ResourceType;

/// What a request asked its response to be made into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partial {
    /// `as=PartialObjectMetadata`: one object's metadata.
    Object(&'static str),
    /// `as=PartialObjectMetadataList`: a list's items' metadata.
    List(&'static str),
}

/// The parameters of one `Accept` entry, by name.
fn param<'a>(entry: &'a str, name: &str) -> Option<&'a str> {
    entry.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim() == name).then(|| v.trim())
    })
}

/// The conversion `Accept` asks for: none (also for `as=Table`, answered elsewhere), a
/// partial object or list, or a 406 when every entry asks for a conversion the server does
/// not make.
pub fn target(accept: &str) -> Result<Option<Partial>, ApiError> {
    let mut refused = false;
    for entry in accept.split(',') {
        let Some(kind) = param(entry, "as") else {
            return Ok(None);
        };
        let version = match (param(entry, "g"), param(entry, "v")) {
            (Some("meta.k8s.io"), Some("v1")) => "v1",
            (Some("meta.k8s.io"), Some("v1beta1")) => "v1beta1",
            _ => {
                refused = true;
                continue;
            }
        };
        match kind {
            "PartialObjectMetadata" => return Ok(Some(Partial::Object(version))),
            "PartialObjectMetadataList" => return Ok(Some(Partial::List(version))),
            "Table" => return Ok(None),
            _ => refused = true,
        }
    }
    if refused {
        return Err(ApiError::custom(
            406,
            "NotAcceptable",
            &format!(
                "only the following media types are accepted: {}",
                SERIALIZERS.join(", ")
            ),
        ));
    }
    Ok(None)
}

/// The Go type kube-apiserver names in its refusals: the internal type of a built-in kind,
/// `unstructured.Unstructured` for a custom one.
fn go_type(rt: &ResourceType, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if rt.custom {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = rt
        .group
        .split('.')
        .next()
        .filter(|g| !g.is_empty())
        .unwrap_or("core");
    format!("*{package}.{}{suffix}", rt.kind)
}

/// One object's metadata, as a `PartialObjectMetadata` of `meta.k8s.io/<version>`.
fn partial(obj: &Value, version: &str) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), "PartialObjectMetadata".into());
    out.insert("apiVersion".into(), format!("meta.k8s.io/{version}").into());
    out.insert(
        "metadata".into(),
        obj.get("metadata").cloned().unwrap_or(json!({})),
    );
    Value::Object(out)
}

/// A response body made into what was asked for; a `Status` passes unchanged.
pub fn convert(p: Partial, rt: &ResourceType, value: Value) -> Result<Value, ApiError> {
    if value.get("kind").and_then(Value::as_str) == Some("Status") {
        return Ok(value);
    }
    let items = value.get("items").and_then(Value::as_array);
    let refuse = |message: String| ApiError::custom(406, "NotAcceptable", &message);
    match (p, items) {
        (Partial::Object(_), Some(_)) => Err(refuse(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            go_type(rt, true)
        ))),
        (Partial::Object(version), None) => Ok(partial(&value, version)),
        (Partial::List(_), None) => Err(refuse(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(rt, false)
        ))),
        (Partial::List(version), Some(items)) => {
            let items: Vec<Value> = items.iter().map(|o| partial(o, version)).collect();
            Ok(json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": format!("meta.k8s.io/{version}"),
                "metadata": value.get("metadata").cloned().unwrap_or(json!({})),
                "items": items,
            }))
        }
    }
}

/// A watch event line with its object made into a `PartialObjectMetadata` (bookmarks
/// too, as the real server's watch encoder does; `ERROR` events' `Status` unchanged).
pub fn event(version: &str, line: Bytes) -> Bytes {
    let Ok(mut event) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    let Some(obj) = event.get("object") else {
        return line;
    };
    if obj.get("kind").and_then(Value::as_str) == Some("Status") {
        return line;
    }
    event["object"] = partial(obj, version);
    let mut bytes = serde_json::to_vec(&event).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_entries_pick_the_conversion() {
        let object = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        assert_eq!(target(object).unwrap(), Some(Partial::Object("v1")));
        let list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1";
        assert_eq!(target(list).unwrap(), Some(Partial::List("v1beta1")));
        assert_eq!(target("application/json").unwrap(), None);
        assert_eq!(
            target("application/json;as=Table;g=meta.k8s.io;v=v1").unwrap(),
            None
        );
        let refused = target("application/json;as=Foo;g=meta.k8s.io;v=v1").unwrap_err();
        assert_eq!(refused.code, 406);
        let bad_version = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2";
        assert!(target(bad_version).is_err());
        let fallback = format!("application/json;as=Foo;g=meta.k8s.io;v=v1, {object}");
        assert_eq!(target(&fallback).unwrap(), Some(Partial::Object("v1")));
    }
}
