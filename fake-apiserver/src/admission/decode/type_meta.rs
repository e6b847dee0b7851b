//! Which type a request body names (`apiVersion`, `kind`), checked as kube-apiserver's
//! decoders check it, with their messages.
//!
//! A built-in kind's body may leave either out (the URL's type fills in); naming another
//! type is a 400 from the scheme. A custom resource's body must name its kind and
//! `apiVersion`; a different kind in the right `apiVersion` gets through decoding and is a
//! 422 from validation ([`custom_kind_errors`]).

use serde_json::Value;

use super::go_json::go_type;
use crate::error::ApiError;
use crate::rules::field::FieldError;

/// The type a body must be: the resource's own, or `autoscaling/v1 Scale` for `/scale`.
pub(crate) struct Expected<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    /// A custom resource: decoded as unstructured JSON, not through a scheme.
    pub custom: bool,
}

/// What `summarizeData` prints of a body in a decode error: JSON objects as text, anything
/// else as hex, each cut at 30 bytes.
pub(crate) fn summary(raw: &[u8]) -> String {
    const MAX: usize = 30;
    let cut = &raw[..raw.len().min(MAX)];
    let mut out = match raw.first() {
        None => return "<empty>".to_owned(),
        Some(b'{') => String::from_utf8_lossy(cut).into_owned(),
        Some(_) => cut.iter().map(|b| format!("{b:02x}")).collect(),
    };
    if raw.len() > MAX {
        out.push_str(" ...");
    }
    out
}

/// The 400 for a body whose type could not be read at all.
pub(crate) fn unrecognized(kind: &str, why: &str, raw: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({})",
        summary(raw)
    ))
}

/// What Go's decoder says when the type of a body cannot be read because the body is a
/// `go_type` (`array`, `string`, ...), not an object.
pub(crate) fn not_an_object_why(go_type: &str) -> String {
    format!(
        "couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
    )
}

/// The 400 for a body that is a `go_type`, not an object.
pub(crate) fn not_an_object(kind: &str, go_type: &str, raw: &[u8]) -> ApiError {
    unrecognized(kind, &not_an_object_why(go_type), raw)
}

/// The 400 for a body of a known type that cannot become the expected one.
pub(crate) fn cannot_handle(
    sent_kind: &str,
    sent_version: &str,
    kind: &str,
    why: &str,
) -> ApiError {
    ApiError::bad_request(format!(
        "{sent_kind} in version \"{sent_version}\" cannot be handled as a {kind}: {why}"
    ))
}

fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Checks the type a decoded body names. `raw` is the body as sent, for the messages that
/// quote it (the object as JSON when there is none: a patched object).
pub(crate) fn check(
    expected: &Expected<'_>,
    obj: &Value,
    raw: Option<&[u8]>,
) -> Result<(), ApiError> {
    let result = check_decoded(expected, obj, raw.unwrap_or_default());
    match (result, raw) {
        (Err(_), None) => check_decoded(expected, obj, obj.to_string().as_bytes()),
        (result, _) => result,
    }
}

fn check_decoded(expected: &Expected<'_>, obj: &Value, raw: &[u8]) -> Result<(), ApiError> {
    if !matches!(obj, Value::Object(_) | Value::Null) {
        return Err(not_an_object(expected.kind, go_type(obj), raw));
    }
    if expected.custom {
        check_custom(expected, obj, raw)
    } else {
        check_builtin(expected, obj)
    }
}

fn check_custom(expected: &Expected<'_>, obj: &Value, raw: &[u8]) -> Result<(), ApiError> {
    if text(obj, "kind").is_empty() {
        let body = if raw.first() == Some(&b'{') || raw == b"null" {
            String::from_utf8_lossy(raw).into_owned()
        } else {
            obj.to_string()
        };
        let why = format!("Object 'Kind' is missing in '{body}'");
        return Err(unrecognized(expected.kind, &why, raw));
    }
    let api_version = text(obj, "apiVersion");
    if api_version != expected.api_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            expected.api_version
        )));
    }
    Ok(())
}

fn check_builtin(expected: &Expected<'_>, obj: &Value) -> Result<(), ApiError> {
    let api_version = Some(text(obj, "apiVersion"))
        .filter(|s| !s.is_empty())
        .unwrap_or(expected.api_version);
    let kind = Some(text(obj, "kind"))
        .filter(|s| !s.is_empty())
        .unwrap_or(expected.kind);
    if api_version == expected.api_version && kind == expected.kind {
        return Ok(());
    }
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    let group_of = |av: &str| av.rsplit_once('/').map_or("", |(g, _)| g).to_owned();
    let (group, expected_group) = (group_of(api_version), group_of(expected.api_version));
    // CRDs have a scheme of their own; everything else shares the legacy scheme.
    const CRD_GROUP: &str = "apiextensions.k8s.io";
    let scheme = if expected_group == CRD_GROUP {
        "pkg/apiserver/apiserver.go:55"
    } else {
        "pkg/api/legacyscheme/scheme.go:30"
    };
    let registered = crate::rules::builtin::types()
        .kind(api_version, kind)
        .is_some()
        && (group == CRD_GROUP) == (expected_group == CRD_GROUP);
    let why = if registered {
        // Go's internal package of the expected group: `core`, `apps`, `rbac`, ...
        let internal = expected_group.split('.').next().filter(|g| !g.is_empty());
        format!(
            "converting ({version}.{kind}) to ({}.{}): unknown conversion",
            internal.unwrap_or("core"),
            expected.kind
        )
    } else {
        format!(
            "no kind \"{kind}\" is registered for version \"{api_version}\" in scheme \"{scheme}\""
        )
    };
    Err(cannot_handle(kind, version, expected.kind, &why))
}

/// A custom resource whose body names another kind of its group version: validation's
/// errors (the object's own kind names the error, as the real server's does).
pub(crate) fn custom_kind_errors(kind: &str, obj: &Value) -> Vec<FieldError> {
    let sent = text(obj, "kind");
    if sent == kind {
        return Vec::new();
    }
    vec![FieldError::invalid_str(
        "kind",
        sent,
        format!("must be {kind}"),
    )]
}
