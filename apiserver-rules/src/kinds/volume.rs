//! PersistentVolumeClaims, validated after their defaults as kube-apiserver 1.36 does:
//! access modes, the storage request, the class name and the volume mode.

use serde_json::{Value, json};

use super::pod::quantity;
use super::selector::label_selector;
use crate::field::FieldError;
use crate::names::dns1123_subdomain;

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// `ValidatePersistentVolumeClaimSpec` of a new claim.
pub(crate) fn persistent_volume_claim(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let modes = spec.get("accessModes").and_then(Value::as_array);
    let modes = modes.map_or(&[][..], Vec::as_slice);
    if modes.is_empty() {
        errors.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = spec.get("selector").filter(|s| !s.is_null()) {
        label_selector(selector, "spec.selector", errors);
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let known = mode.as_str().is_some_and(|m| ACCESS_MODES.contains(&m));
        if !known {
            errors.push(FieldError::not_supported(
                "spec.accessModes",
                mode,
                &ACCESS_MODES,
            ));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errors.push(FieldError::forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_at = "spec.resources[storage]";
    match spec
        .pointer("/resources/requests/storage")
        .and_then(Value::as_str)
    {
        None => errors.push(FieldError::required(storage_at, "")),
        Some(q) if quantity(q).is_none_or(|v| v <= 0.0) => {
            errors.push(FieldError::invalid_str(
                storage_at,
                q,
                "must be greater than zero",
            ));
        }
        Some(_) => {}
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str)
        && !class.is_empty()
    {
        for msg in dns1123_subdomain(class) {
            errors.push(FieldError::invalid_str("spec.storageClassName", class, msg));
        }
    }
    if let Some(mode) = spec.get("volumeMode").filter(|m| !m.is_null())
        && !matches!(mode.as_str(), Some("Block" | "Filesystem"))
    {
        errors.push(FieldError::not_supported(
            "spec.volumeMode",
            mode,
            &["Block", "Filesystem"],
        ));
    }
}
