//! Object metadata, read and written on JSON objects: name, finalizers, owner references,
//! resource version, timestamps. Every layer uses these; this module uses none of them.

use serde_json::{Value, json};

/// The current time as the server writes timestamps: RFC 3339, whole seconds, UTC.
pub(crate) fn now() -> String {
    let ts = jiff::Timestamp::now();
    jiff::Timestamp::from_second(ts.as_second())
        .unwrap_or(ts)
        .to_string()
}

/// `metadata.name`.
pub(crate) fn name_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/name").and_then(Value::as_str)
}

/// Sets `metadata.<key>`, making `metadata` an object first if it is not one.
pub(crate) fn set_meta(obj: &mut Value, key: &str, value: Value) {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"][key] = value;
}

/// `metadata.finalizers`.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    crate::rules::json::strings(obj.pointer("/metadata/finalizers"))
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Sets `metadata.finalizers`, removing the key when `list` is empty.
pub(crate) fn set_finalizers(obj: &mut Value, list: &[String]) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".to_owned(), json!(list));
        }
    }
}

/// A copy of `obj` without the top-level `keys`.
pub(crate) fn without(obj: &Value, keys: &[&str]) -> Value {
    let mut copy = obj.clone();
    if let Some(map) = copy.as_object_mut() {
        for k in keys {
            map.remove(*k);
        }
    }
    copy
}

/// The `metadata.resourceVersion` of an object, as a number.
pub fn rv_of(obj: &Value) -> u64 {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The uids of `metadata.ownerReferences`.
pub(crate) fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|o| o.get("uid").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Removes the owner reference to `uid`, and `ownerReferences` when none is left.
pub(crate) fn remove_owner(obj: &mut Value, uid: &str) {
    if let Some(list) = obj
        .pointer_mut("/metadata/ownerReferences")
        .and_then(Value::as_array_mut)
    {
        list.retain(|o| o.get("uid").and_then(Value::as_str) != Some(uid));
        if list.is_empty()
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("ownerReferences");
        }
    }
}

/// Five characters of the alphabet `generateName` suffixes are made of, from `seed`.
pub(crate) fn random_suffix(seed: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xDEAD_BEEF;
    (0..5)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % ALPHABET.len() as u64) as usize] as char
        })
        .collect()
}
