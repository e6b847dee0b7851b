//! JSON and YAML bodies, objects and patches, read as kube-apiserver's decoders read them
//! and refused with their messages: Go's syntax errors (nesting past 10,000 levels
//! included), a top-level value of the wrong type, and YAML past the YAML reader's depth.
//!
//! Nothing here recurses on the input: Go's scanner ([`go_json`]) keeps its open arrays and
//! objects on the heap, `serde_json` stops at [`go_json::FAKE_MAX_DEPTH`] levels and
//! `serde_saphyr` at its own budget. What kube-apiserver reads and the fake does not (valid
//! JSON between those depths and Go's 10,000) is a 400 saying so ([`Unread::Deep`]).

use serde_json::Value;

use super::go_json::{self, Unread, go_type};
use super::type_meta;
use crate::error::ApiError;

/// What kube-apiserver's YAML reader says of YAML nested past its depth (`sigs.k8s.io/yaml`
/// over go-yaml, which allows 10,000 levels, as Go's JSON scanner does).
const YAML_TOO_DEEP: &str = "yaml: exceeded max depth of 10000";

/// What the fake says of YAML nested deeper than it reads.
const YAML_DEEP_FOR_FAKE: &str = "nested more than 64 deep, which the fake API server does not read (kube-apiserver reads up to 10000)";

/// Why a YAML body was not read.
enum YamlUnread {
    /// Nested past the YAML reader's depth.
    Deep,
    /// JSON (which is YAML) that `serde_saphyr` refused, read as JSON and refused there.
    Json(Unread),
    /// YAML that is not JSON, nested deeper than `serde_saphyr` reads it (its budget allows
    /// 64 levels): kube-apiserver would read it.
    DeepForFake,
    /// `serde_saphyr`'s message.
    Yaml(String),
}

/// A YAML body as JSON. JSON written as YAML is measured with Go's scanner first, so
/// 100,000 nested arrays get the real server's depth error, and JSON that `serde_saphyr`
/// refuses (it nests flow collections less deep than `serde_json`) is read as JSON.
fn yaml(body: &[u8]) -> Result<Value, YamlUnread> {
    match serde_saphyr::from_slice(body) {
        Ok(value) => Ok(value),
        Err(e) => match go_json::syntax_error(body) {
            Some(why) if why.ends_with("exceeded max depth") => Err(YamlUnread::Deep),
            None => go_json::parse(body).map_err(YamlUnread::Json),
            Some(_) => {
                let why = e.to_string();
                if why.contains("budget breached: Depth")
                    || why.contains("recursion limit exceeded")
                {
                    Err(YamlUnread::DeepForFake)
                } else {
                    Err(YamlUnread::Yaml(why))
                }
            }
        },
    }
}

/// The 400 for a JSON object body of type `kind` that was not read, as the decoder that
/// first reads its `apiVersion` and `kind` words it.
fn unread_object(kind: &str, why: &Unread, body: &[u8]) -> ApiError {
    match why {
        // Only the top-level value matters to that decoder: a deep array is not an object.
        Unread::Deep(top) if *top != "object" => type_meta::not_an_object(kind, top, body),
        why => type_meta::unrecognized(
            kind,
            &format!("couldn't get version/kind; json parse error: {why}"),
            body,
        ),
    }
}

/// A JSON body for an object of type `kind` (create, update, `/scale`).
pub(crate) fn json_object(kind: &str, body: &[u8]) -> Result<Value, ApiError> {
    go_json::parse(body).map_err(|why| unread_object(kind, &why, body))
}

/// A YAML body for an object of type `kind`.
pub(crate) fn yaml_object(kind: &str, body: &[u8]) -> Result<Value, ApiError> {
    yaml(body).map_err(|why| match why {
        YamlUnread::Deep => type_meta::unrecognized(kind, YAML_TOO_DEEP, body),
        YamlUnread::Json(why) => unread_object(kind, &why, body),
        YamlUnread::DeepForFake => {
            ApiError::bad_request(format!("error decoding YAML: {YAML_DEEP_FOR_FAKE}"))
        }
        YamlUnread::Yaml(e) => ApiError::bad_request(format!("error decoding YAML: {e}")),
    })
}

/// A JSON `DeleteOptions` body: its errors are the type decoder's, without the wrapper
/// that names the expected type.
pub(crate) fn delete_options(body: &[u8]) -> Result<Value, ApiError> {
    let value = go_json::parse(body).map_err(|why| match why {
        Unread::Deep(top) if top != "object" => {
            ApiError::bad_request(type_meta::not_an_object_why(top))
        }
        why => ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {why}"
        )),
    })?;
    match go_type(&value) {
        "object" => Ok(value),
        other => Err(ApiError::bad_request(type_meta::not_an_object_why(other))),
    }
}

/// The patch types the registry applies.
pub(crate) const MERGE: &str = "application/merge-patch+json";
/// Strategic merge patch.
pub(crate) const STRATEGIC: &str = "application/strategic-merge-patch+json";
/// JSON patch (RFC 6902).
pub(crate) const JSON_PATCH: &str = "application/json-patch+json";
/// Server-side apply.
pub(crate) const APPLY: &str = "application/apply-patch+yaml";

/// A patch body of `patch_type` (one of the four above), with the messages of the real
/// server's patch handlers: a merge patch must be an object, a JSON patch an array, and
/// an apply configuration a YAML (or JSON) object.
pub(crate) fn patch(patch_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    if patch_type == APPLY {
        return apply_patch(body);
    }
    // The strategic merge handler quotes the decoder's error alone.
    let prefix = if patch_type == STRATEGIC {
        ""
    } else {
        "error decoding patch: "
    };
    let value =
        go_json::parse(body).map_err(|why| ApiError::bad_request(format!("{prefix}{why}")))?;
    let (wanted, go_target) = if patch_type == JSON_PATCH {
        ("array", "[]handlers.jsonPatchOp")
    } else {
        ("object", "map[string]interface {}")
    };
    let got = go_type(&value);
    if got != wanted && !value.is_null() {
        return Err(ApiError::bad_request(format!(
            "{prefix}json: cannot unmarshal {got} into Go value of type {go_target}"
        )));
    }
    Ok(value)
}

/// A server-side apply body: YAML (JSON is YAML) holding an object.
fn apply_patch(body: &[u8]) -> Result<Value, ApiError> {
    let value = yaml(body).map_err(|why| {
        let why = match why {
            YamlUnread::Deep => format!("error converting YAML to JSON: {YAML_TOO_DEEP}"),
            YamlUnread::Json(why) => why.to_string(),
            YamlUnread::DeepForFake => YAML_DEEP_FOR_FAKE.to_owned(),
            YamlUnread::Yaml(e) => e,
        };
        ApiError::bad_request(format!("error decoding YAML: {why}"))
    })?;
    match go_type(&value) {
        "object" => Ok(value),
        other => Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {other} into Go value of type map[string]interface {{}}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays(d: usize) -> Vec<u8> {
        format!("{}{}", "[".repeat(d), "]".repeat(d)).into_bytes()
    }

    fn message(r: Result<Value, ApiError>) -> String {
        r.expect_err("refused").message
    }

    #[test]
    fn deep_bodies_get_the_real_server_s_words() {
        let deep = arrays(100_000);
        assert_eq!(
            message(patch(MERGE, &deep)),
            "error decoding patch: invalid character '[' exceeded max depth"
        );
        assert_eq!(
            message(patch(STRATEGIC, &deep)),
            "invalid character '[' exceeded max depth"
        );
        assert_eq!(
            message(patch(APPLY, &deep)),
            "error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of 10000"
        );
        assert!(message(yaml_object("ConfigMap", &deep)).contains(YAML_TOO_DEEP));
        // Deeper than the fake reads, an array is still not an object.
        assert!(
            message(json_object("ConfigMap", &arrays(3_000)))
                .contains("cannot unmarshal array into Go value of type struct")
        );
        assert!(
            message(yaml_object("ConfigMap", &arrays(3_000)))
                .contains("cannot unmarshal array into Go value of type struct")
        );
        // Block YAML past the YAML reader's budget: the fake says it does not read it.
        let block: String = (0..1_000)
            .map(|i| format!("{}a:\n", "  ".repeat(i)))
            .collect();
        assert!(
            message(yaml_object("ConfigMap", block.as_bytes()))
                .contains("which the fake API server does not read")
        );
    }

    #[test]
    fn a_patch_of_the_wrong_shape_is_refused_as_go_refuses_it() {
        assert_eq!(
            message(patch(JSON_PATCH, b"{\"a\":1}")),
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
        );
        assert_eq!(
            message(patch(STRATEGIC, b"[1]")),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            message(patch(APPLY, b"[1]")),
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert!(patch(MERGE, b"null").is_ok());
        assert!(patch(APPLY, b"a: 1\n").is_ok());
    }
}
