//! Reading a request as kube-apiserver's handlers do, before anything else looks at it:
//! the query's options ([`options`]), the body by its content type (JSON, YAML, or
//! [`protobuf`] for built-in kinds; anything else is a 415), the type it names
//! ([`type_meta`], with Go's JSON syntax errors from [`go_json`] and the messages for
//! unreadable JSON and YAML, objects and patches, from [`bodies`]), and for a built-in kind
//! its Go type's decoding ([`builtin`]: wrong field types are 400s, unknown fields warnings
//! or, with `fieldValidation=Strict`, 400s). Objects that reach the store another way
//! (patched, applied) are held to the same types here.

pub mod bodies;
pub mod builtin;
pub mod go_json;
pub mod go_time;
pub mod options;
pub mod protobuf;
pub mod type_meta;

use serde_json::Value;

use crate::admission::Ctx;
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::rules::builtin::{Type, types};
use crate::rules::kinds;
use crate::store::patch;
use options::{DeleteOptions, FieldValidation, Query};
use protobuf::DecodeError;
use type_meta::Expected;

/// The media types bodies are read and answered in.
pub(crate) const SERIALIZERS: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// A request body as JSON, of the type `expected`: JSON or YAML by content type, protobuf
/// for the types Go clients send that way (built-in kinds, `Scale`, `DeleteOptions`);
/// anything else is a 415.
pub(crate) fn decode_body(
    expected: &Expected<'_>,
    content_type: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let obj = decode(expected, content_type, body)?;
    type_meta::check(expected, &obj, Some(body))?;
    Ok(obj)
}

/// A body as JSON, whatever type it names.
pub(crate) fn decode(
    expected: &Expected<'_>,
    content_type: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    Ok(match content_type {
        "" | "application/json" => bodies::json_object(expected.kind, body)?,
        "application/yaml" => bodies::yaml_object(expected.kind, body)?,
        "application/vnd.kubernetes.protobuf" if !expected.custom => protobuf::decode(body)
            .map_err(|e| match e {
                DecodeError::Envelope(why) => type_meta::unrecognized(expected.kind, &why, body),
                DecodeError::Object {
                    api_version,
                    kind,
                    message,
                } => type_meta::cannot_handle(
                    &kind,
                    api_version.rsplit('/').next().unwrap_or_default(),
                    expected.kind,
                    &message,
                ),
            })?,
        // Custom resources have no protobuf form (the real server's handler fails on one).
        "application/vnd.kubernetes.protobuf" => {
            return Err(ApiError::unsupported_media_type(&SERIALIZERS[..2]));
        }
        _ => return Err(ApiError::unsupported_media_type(&SERIALIZERS)),
    })
}

/// A built-in kind's body as the real server decodes it into its Go type: a value of the
/// wrong type is a 400 naming the Go field; unknown fields are warnings, or a 400 with
/// `fieldValidation=Strict`.
pub(crate) fn decode_builtin(
    rt: &ResourceType,
    sub: Option<&str>,
    obj: &Value,
    ctx: &mut Ctx,
) -> Result<(), ApiError> {
    if rt.custom {
        return Ok(());
    }
    let (api_version, kind) = match sub {
        Some("scale") => ("autoscaling/v1".to_owned(), "Scale".to_owned()),
        _ => (rt.api_version(), rt.kind.clone()),
    };
    let Some(ty) = types().kind(&api_version, &kind) else {
        return Ok(());
    };
    let decoded = builtin::check(ty, obj);
    let version = api_version.rsplit('/').next().unwrap_or("");
    let sent = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(&kind)
        .to_owned();
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{sent} in version \"{version}\" cannot be handled as a {kind}: {why}"
        ))
    };
    if let Some(e) = decoded.error() {
        return Err(cannot(e.clone()));
    }
    if let Some(e) = kinds::decode_error(&api_version, &kind, obj) {
        return Err(cannot(e));
    }
    let messages = decoded
        .unknown
        .iter()
        .map(|u| format!("unknown field \"{u}\""));
    match ctx.field_validation {
        FieldValidation::Strict if !decoded.unknown.is_empty() => Err(cannot(format!(
            "strict decoding error: {}",
            messages.collect::<Vec<_>>().join(", ")
        ))),
        FieldValidation::Warn => {
            ctx.warnings.extend(messages);
            Ok(())
        }
        _ => Ok(()),
    }
}

pub(crate) fn delete_options(
    content_type: &str,
    body: &[u8],
    query: &Query,
) -> Result<DeleteOptions, ApiError> {
    if body.is_empty() {
        DeleteOptions::parse(None, query)
    } else {
        let options_type = Expected {
            api_version: "meta.k8s.io/v1",
            kind: "DeleteOptions",
            custom: false,
        };
        let decoded = match content_type {
            "" | "application/json" => bodies::delete_options(body)?,
            _ => decode(&options_type, content_type, body)?,
        };
        DeleteOptions::parse(Some(&decoded), query)
    }
}

/// The type an object names must be the resource's (patched objects reach here without
/// going through the request decoders).
pub(crate) fn check_kind(rt: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    let api_version = rt.api_version();
    let expected = type_meta::Expected {
        api_version: &api_version,
        kind: &rt.kind,
        custom: rt.custom,
    };
    type_meta::check(&expected, obj, None)
}

/// The Go type of a built-in kind an apply writes, and how the apply's errors name the
/// object (`ns/name; apps/v1, Kind=Deployment`) and its group-version.
fn applied_type(
    rt: &ResourceType,
    name: &str,
    config: &Value,
) -> Option<(&'static Type, String, String)> {
    if rt.custom {
        return None;
    }
    let api_version = rt.api_version();
    let ty = types().kind(&api_version, &rt.kind)?;
    let ns = config
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let gv = if rt.group.is_empty() {
        format!("/{}", rt.version)
    } else {
        api_version
    };
    let object = format!("{ns}/{name}; {gv}, Kind={}", rt.kind);
    Some((ty, object, gv))
}

/// An apply configuration of a built-in kind must have the types of its fields: otherwise
/// the real server's typed conversion fails with a 500.
pub(crate) fn check_applied(rt: &ResourceType, name: &str, config: &Value) -> Result<(), ApiError> {
    let Some((ty, object, _)) = applied_type(rt, name, config) else {
        return Ok(());
    };
    if let Some(e) = builtin::check(ty, config).typed_error {
        return Err(ApiError::custom(
            500,
            "",
            &format!("failed to create typed patch object ({object}): {e}"),
        ));
    }
    Ok(())
}

/// The object an apply merged (after its conflicts were found) must convert back to the
/// Go type: a time or quantity that does not parse, or bytes that are not base64, fail
/// that conversion with a 500.
pub(crate) fn check_converted(
    rt: &ResourceType,
    name: &str,
    config: &Value,
    merged: &Value,
) -> Result<(), ApiError> {
    let Some((ty, object, gv)) = applied_type(rt, name, config) else {
        return Ok(());
    };
    let kind = &rt.kind;
    let cannot = |why: String| {
        ApiError::custom(
            500,
            "",
            &format!(
                "failed to convert new object ({object}) to proper version: unable to convert unstructured object to {gv}, Kind={kind}: {why}"
            ),
        )
    };
    if let Some(e) = builtin::check(ty, merged).abort {
        return Err(cannot(e));
    }
    if let Some(e) = kinds::decode_error(&rt.api_version(), kind, merged) {
        return Err(cannot(format!("error decoding from json: {e}")));
    }
    Ok(())
}

/// A patched built-in object must still decode into its Go type: otherwise a 422 naming
/// the patched object (merge and JSON patches) or the patch as Go prints a map (strategic
/// merge), with the decoder's or the converter's words.
pub(crate) fn check_patched(
    rt: &ResourceType,
    patch_type: &str,
    patched: &Value,
    patch: &Value,
    subresource: Option<&str>,
) -> Result<(), ApiError> {
    if rt.custom || subresource.is_some() {
        return Ok(());
    }
    let api_version = rt.api_version();
    let Some(ty) = types().kind(&api_version, &rt.kind) else {
        return Ok(());
    };
    let error = builtin::check(ty, patched)
        .error()
        .cloned()
        .or_else(|| kinds::decode_error(&api_version, &rt.kind, patched));
    let Some(error) = error else {
        return Ok(());
    };
    if patch_type == "application/strategic-merge-patch+json" {
        return Err(ApiError::patch_invalid(
            &patch::go_map(patch),
            &converter_error(&error),
        ));
    }
    Err(ApiError::patch_invalid(&patched.to_string(), &error))
}

/// The unstructured converter's words for what `encoding/json` calls `cannot unmarshal
/// <kind> into Go struct field ... of type <type>`.
pub(crate) fn converter_error(json_error: &str) -> String {
    let kind = json_error
        .strip_prefix("json: cannot unmarshal ")
        .and_then(|r| r.split(' ').next());
    let go_type = json_error.rsplit(" of type ").next().unwrap_or("");
    match (kind, go_type) {
        (Some("number"), "string") => "cannot convert int64 to string".to_owned(),
        (Some("bool"), "string") => "cannot convert bool to string".to_owned(),
        (Some("string"), t @ ("int32" | "int64")) => format!("unrecognized type: {t}"),
        _ => json_error.to_owned(),
    }
}

/// A built-in kind is stored as its Go type would encode it.
pub(crate) fn round_trip(rt: &ResourceType, obj: &mut Value) {
    if rt.custom {
        return;
    }
    if let Some(ty) = types().kind(&rt.api_version(), &rt.kind) {
        crate::rules::defaults::go_type::round_trip(ty, obj);
    }
}
