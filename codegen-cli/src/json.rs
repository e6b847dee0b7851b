//! Reading and writing the JSON the commands handle (CRDs, the CRD runner's report, webhook
//! configurations): string lists, and objects with their keys in a stable order.

use serde_json::Value;

/// The strings of a JSON array, in order (items that are not strings are skipped); none
/// when `value` is absent or not an array.
pub fn strings(value: Option<&Value>) -> impl Iterator<Item = &str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The same JSON with every object's keys in sorted order, so that what is written from it
/// (YAML, a canonical text) does not depend on how `serde_json` was built.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
