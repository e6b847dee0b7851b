//! ConfigMap (`ValidateConfigMap`, `ValidateConfigMapUpdate`): keys, a key in both `data`
//! and `binaryData`, the 1 MiB total, and immutability.

use serde_json::Value;

use super::{entries, key};
use crate::base64::base64_decode;
use crate::field::{ErrorType, FieldError};
use crate::names::config_key;

/// What `data` and `binaryData` may hold together, in bytes of values (keys do not count).
pub const MAX_SIZE: usize = 1024 * 1024;

const IMMUTABLE: &str = "field is immutable when `immutable` is set";

pub(crate) fn validate(new: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    if let Some(old) = old {
        immutable(new, old, &["data", "binaryData"], errors);
    }
    let binary = entries(new, "binaryData");
    let mut size = 0;
    for (k, v) in entries(new, "data") {
        for msg in config_key(k) {
            errors.push(FieldError::invalid_str(key("data", k), k, msg));
        }
        if binary.iter().any(|(b, _)| *b == k) {
            errors.push(FieldError::invalid_str(
                key("data", k),
                k,
                "duplicate of key present in binaryData",
            ));
        }
        size += v.as_str().map_or(0, str::len);
    }
    for (k, v) in binary {
        for msg in config_key(k) {
            errors.push(FieldError::invalid_str(key("binaryData", k), k, msg));
        }
        size += v
            .as_str()
            .and_then(|s| base64_decode(s).ok())
            .map_or(0, |b| b.len());
    }
    if size > MAX_SIZE {
        errors.push(FieldError::too_long("[]", MAX_SIZE));
    }
}

/// An object that was `immutable: true` keeps that and its `fields`.
pub(crate) fn immutable(new: &Value, old: &Value, fields: &[&str], errors: &mut Vec<FieldError>) {
    if old.get("immutable") != Some(&Value::Bool(true)) {
        return;
    }
    let forbidden = |field: &str| FieldError {
        kind: ErrorType::Forbidden,
        field: field.to_owned(),
        value: String::new(),
        detail: IMMUTABLE.to_owned(),
    };
    if new.get("immutable") != Some(&Value::Bool(true)) {
        errors.push(forbidden("immutable"));
    }
    for f in fields {
        if new.get(*f) != old.get(*f) {
            errors.push(forbidden(f));
        }
    }
}
