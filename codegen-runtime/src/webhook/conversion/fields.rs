//! Conversions between versions whose fields are the same ([`same_fields`]): what
//! `kube-codegen create webhook --conversion` starts a kind's conversions with, failing by
//! name on the first field one version has no place for.

use std::fmt::Display;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why [`same_fields`] could not convert: a field of one version with no place in the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsDiffer(String);

impl Display for FieldsDiffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FieldsDiffer {}

/// The conversion of two versions of a kind whose fields are the same: the object read as
/// `T`, its `apiVersion` `T`'s. What `kube-codegen create webhook --conversion` writes for
/// the versions of a kind while their fields still agree. Nothing is dropped: once a field
/// of one version has no place in the other, or is read back otherwise, converting is an
/// error naming it (the conversion webhook then fails the request), and the conversion is
/// yours to write field by field.
///
/// ```
/// # use kube_codegen_runtime::webhook::conversion::same_fields;
/// # mod v1 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v1", kind = "Backup", namespaced, schema = "disabled")]
/// #     pub struct BackupSpec { pub replicas: i32 }
/// # }
/// # mod v2 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v2", kind = "Backup", namespaced, schema = "disabled")]
/// #     pub struct BackupSpec { pub replicas: i32, pub paused: Option<bool> }
/// # }
/// let old = v1::Backup::new("nightly", v1::BackupSpec { replicas: 2 });
/// let new: v2::Backup = same_fields(&old).unwrap();
/// assert_eq!(new.spec.replicas, 2);
///
/// // v2's `paused` has no place in v1: an error, not a silent loss.
/// let paused = v2::Backup::new("nightly", v2::BackupSpec { replicas: 2, paused: Some(true) });
/// let err = same_fields::<_, v1::Backup>(&paused).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "`spec.paused` of example.com/v2 has no place in example.com/v1: \
///      write this conversion field by field"
/// );
/// ```
pub fn same_fields<F, T>(from: &F) -> Result<T, FieldsDiffer>
where
    F: Serialize,
    T: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    let mut value = serde_json::to_value(from).map_err(|e| FieldsDiffer(e.to_string()))?;
    let source = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("the source version")
        .to_owned();
    let target = T::api_version(&()).into_owned();
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(target.as_str()));
    }
    let converted: T = serde_json::from_value(value.clone())
        .map_err(|e| FieldsDiffer(format!("{source} does not read as {target}: {e}")))?;
    let back = serde_json::to_value(&converted).map_err(|e| FieldsDiffer(e.to_string()))?;
    match first_difference(&value, &back, "") {
        None => Ok(converted),
        Some(path) => Err(FieldsDiffer(format!(
            "`{path}` of {source} has no place in {target}: write this conversion field by field"
        ))),
    }
}

/// The dotted path of the first value of `a` that `b` does not hold (`a`'s fields in order):
/// what converting `a` would lose. A `null` held as absent is no loss, nor is a field `b` has
/// beside them (a field the target added, at its default).
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(k, v)| match b.get(k) {
            Some(w) => first_difference(v, w, &at(k)),
            None => (!v.is_null()).then(|| at(k)),
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, &format!("{path}[{i}]"))),
        _ => (a != b).then(|| path.to_owned()),
    }
}
