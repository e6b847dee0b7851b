//! Reading the JSON of objects: the one reader of string lists that every crate of the
//! workspace uses.

use serde_json::Value;

/// The strings of a JSON array, in order (items that are not strings are skipped); none
/// when `value` is absent or not an array.
pub fn strings(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
