//! Secret (`ValidateSecret`, `ValidateSecretUpdate`): keys, the 1 MiB total, the keys each
//! type needs, `type` and immutability, and the base64 decoding of `data`.

use serde_json::Value;

use super::configmap::{MAX_SIZE, immutable};
use super::{entries, key};
use crate::base64::base64_decode;
use crate::field::FieldError;
use crate::names::config_key;

pub(crate) fn validate(new: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let ty = new.get("type").and_then(Value::as_str).unwrap_or("Opaque");
    if let Some(old) = old {
        let old_ty = old.get("type").and_then(Value::as_str).unwrap_or("Opaque");
        if ty != old_ty {
            errors.push(FieldError::invalid_str("type", ty, "field is immutable"));
        }
        immutable(new, old, &["data"], errors);
    }
    let data = decoded(new);
    let mut size = 0;
    for (k, v) in &data {
        for msg in config_key(k) {
            errors.push(FieldError::invalid_str(key("data", k), k, msg));
        }
        size += v.len();
    }
    if size > MAX_SIZE {
        errors.push(FieldError::too_long("data", MAX_SIZE));
    }
    let get = |k: &str| data.iter().find(|(d, _)| d == k).map(|(_, v)| v.as_slice());
    let required = |k: &str| FieldError::required(key("data", k), "");
    match ty {
        "kubernetes.io/service-account-token" => {
            let name = new
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errors.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson" => {
            let k = if ty.ends_with("json") {
                ".dockerconfigjson"
            } else {
                ".dockercfg"
            };
            match get(k) {
                None => errors.push(required(k)),
                Some(bytes) => {
                    if let Some(why) = go_json_object_error(bytes) {
                        errors.push(FieldError::invalid_str(
                            key("data", k),
                            "<secret contents redacted>",
                            why,
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if get("username").is_none() && get("password").is_none() => {
            errors.push(required("username"));
            errors.push(required("password"));
        }
        "kubernetes.io/ssh-auth" if get("ssh-privatekey").is_none_or(<[u8]>::is_empty) => {
            errors.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for k in ["tls.crt", "tls.key"] {
                if get(k).is_none() {
                    errors.push(required(k));
                }
            }
        }
        _ => {}
    }
}

/// `data` decoded, with `stringData` merged over it as the real server merges it before
/// validating.
fn decoded(obj: &Value) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = entries(obj, "data")
        .into_iter()
        .map(|(k, v)| {
            let bytes = v
                .as_str()
                .and_then(|s| base64_decode(s).ok())
                .unwrap_or_default();
            (k.clone(), bytes)
        })
        .collect();
    for (k, v) in entries(obj, "stringData") {
        let bytes = v.as_str().unwrap_or("").as_bytes().to_vec();
        match out.iter_mut().find(|(d, _)| d == k) {
            Some(slot) => slot.1 = bytes,
            None => out.push((k.clone(), bytes)),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A value of a `[]byte` map (`field`) that is not base64: Go's decoder error.
pub(crate) fn decode_error(obj: &Value, field: &str) -> Option<String> {
    for (_, v) in entries(obj, field) {
        if let Some(s) = v.as_str()
            && let Err(at) = base64_decode(s)
        {
            return Some(format!("illegal base64 data at input byte {at}"));
        }
    }
    None
}

/// What Go's `json.Unmarshal` into a `map[string]interface{}` says about `bytes`, if it
/// fails (the common cases; anything else that is not an object gets the generic text).
fn go_json_object_error(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim_start();
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(_)) => None,
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                _ => return None,
            };
            Some(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(e) if e.is_eof() => Some("unexpected end of JSON input".into()),
        Err(_) => {
            let c = trimmed.chars().next().unwrap_or(' ');
            Some(format!(
                "invalid character '{c}' looking for beginning of value"
            ))
        }
    }
}
