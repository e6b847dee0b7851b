//! Reading and writing the JSON the commands handle (CRDs, the CRD runner's report, webhook
//! configurations): string lists (apiserver-rules' reader, shared by the workspace), and
//! objects with their keys in a stable order.

use serde_json::Value;

/// The strings of a JSON array, in order (items that are not strings are skipped); none
/// when `value` is absent or not an array.
pub fn strings(value: Option<&Value>) -> impl Iterator<Item = &str> {
    apiserver_rules::json::strings(value).into_iter()
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
