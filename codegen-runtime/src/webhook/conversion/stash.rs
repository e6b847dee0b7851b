//! The fields of a spoke version that its hub has no place for, kept on the hub object in an
//! annotation and given back on the way out: what Go operators do with Cluster API's
//! `MarshalData` and `UnmarshalData`, so a field new in a spoke survives being stored as
//! the hub.

use std::fmt::Display;

use kube::Resource;
use kube::core::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Where a hub object keeps one spoke version's own fields: an annotation holding them as
/// JSON. The spoke's conversion to the hub [`keep`](Stash::keep)s them, the hub's conversion
/// to the spoke [`take`](Stash::take)s them back, so an object written in the spoke reads
/// back unchanged in it; the annotation shows on the object read as the hub, and a client
/// of the hub that updates the object carries it over untouched.
///
/// kube-apiserver keeps the annotations a conversion returns (and nothing else of its
/// metadata): a field carried any other way is lost on the way to storage.
///
/// ```
/// # use kube_codegen_runtime::webhook::conversion::{Stash, StashError};
/// # use serde::{Deserialize, Serialize};
/// # mod v1 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v1", kind = "Volume", namespaced, schema = "disabled")]
/// #     pub struct VolumeSpec { pub size: String }
/// # }
/// # mod v2 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v2", kind = "Volume", namespaced, schema = "disabled", derive = "PartialEq")]
/// #     pub struct VolumeSpec { pub storage: Storage }
/// #     #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     pub struct Storage { pub size: String, pub class: Option<String> }
/// # }
/// // v1 (the hub) has `spec.size`; v2 has `spec.storage: {size, class}`, and `class` has no
/// // place in v1.
/// #[derive(Serialize, Deserialize)]
/// struct V2Only {
///     class: Option<String>,
/// }
///
/// impl TryFrom<v2::Volume> for v1::Volume {
///     type Error = StashError;
///     fn try_from(volume: v2::Volume) -> Result<Self, StashError> {
///         let mut metadata = volume.metadata;
///         let kept = V2Only { class: volume.spec.storage.class };
///         Stash::of::<v2::Volume>().keep(&mut metadata, &kept)?;
///         let spec = v1::VolumeSpec { size: volume.spec.storage.size };
///         Ok(Self { metadata, spec })
///     }
/// }
///
/// impl TryFrom<v1::Volume> for v2::Volume {
///     type Error = StashError;
///     fn try_from(mut volume: v1::Volume) -> Result<Self, StashError> {
///         let kept: Option<V2Only> = Stash::of::<v2::Volume>().take(&mut volume.metadata)?;
///         let storage = v2::Storage {
///             size: volume.spec.size,
///             class: kept.and_then(|k| k.class),
///         };
///         Ok(Self { metadata: volume.metadata, spec: v2::VolumeSpec { storage } })
///     }
/// }
///
/// let storage = v2::Storage { size: "5Gi".into(), class: Some("standard".into()) };
/// let written = v2::Volume::new("data", v2::VolumeSpec { storage });
/// let stored = v1::Volume::try_from(written.clone())?;
/// assert_eq!(
///     stored.metadata.annotations.as_ref().unwrap()["example.com/conversion-v2"],
///     r#"{"class":"standard"}"#
/// );
/// assert_eq!(v2::Volume::try_from(stored)?, written);
/// # Ok::<(), StashError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stash {
    annotation: String,
}

/// Why a [`Stash`] could not keep or give back its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StashError(String);

impl Display for StashError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StashError {}

/// Whether `value` holds nothing: `null`, or an object of such values.
fn holds_nothing(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.values().all(holds_nothing),
        _ => false,
    }
}

impl Stash {
    /// The stash of spoke version `S`: the annotation `<group>/conversion-<version>`
    /// (`samplecontroller.k8s.io/conversion-v1beta1`).
    pub fn of<S: Resource<DynamicType = ()>>() -> Self {
        Self::named(format!("{}/conversion-{}", S::group(&()), S::version(&())))
    }

    /// A stash in `annotation`, a qualified name (`cluster.x-k8s.io/conversion-data`, to
    /// read what a Go operator kept there).
    pub fn named(annotation: impl Into<String>) -> Self {
        Self {
            annotation: annotation.into(),
        }
    }

    /// The annotation it uses.
    pub fn annotation(&self) -> &str {
        &self.annotation
    }

    /// Keeps `fields` (the spoke's fields the hub has no place for) in the annotation of
    /// `hub`, the metadata of the hub object being made; when they hold nothing (`null`, or
    /// an object of nulls) the annotation is removed instead, so an object without them
    /// carries none.
    pub fn keep<T: Serialize + ?Sized>(
        &self,
        hub: &mut ObjectMeta,
        fields: &T,
    ) -> Result<(), StashError> {
        let problems = apiserver_rules::names::qualified_name(&self.annotation.to_lowercase());
        if let Some(problem) = problems.first() {
            return Err(StashError(format!(
                "`{}` cannot be an annotation: {problem}",
                self.annotation
            )));
        }
        let value = serde_json::to_value(fields)
            .map_err(|e| StashError(format!("the fields to keep do not serialize: {e}")))?;
        if holds_nothing(&value) {
            self.remove(hub);
            return Ok(());
        }
        hub.annotations
            .get_or_insert_with(Default::default)
            .insert(self.annotation.clone(), value.to_string());
        Ok(())
    }

    /// Takes the fields kept in `hub` (the hub object's metadata) out of it: `None` when it
    /// keeps none. The annotation is removed either way (and `annotations` with it when it
    /// was the only one), so the spoke object made from `hub` carries none.
    pub fn take<T: DeserializeOwned>(&self, hub: &mut ObjectMeta) -> Result<Option<T>, StashError> {
        let Some(text) = self.remove(hub) else {
            return Ok(None);
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            StashError(format!(
                "the annotation `{}` does not hold the fields it keeps: {e}",
                self.annotation
            ))
        })
    }

    fn remove(&self, hub: &mut ObjectMeta) -> Option<String> {
        let annotations = hub.annotations.as_mut()?;
        let text = annotations.remove(&self.annotation);
        if annotations.is_empty() {
            hub.annotations = None;
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_kept_leaves_no_annotation_and_other_annotations_alone() {
        let stash = Stash::named("example.com/conversion-v2");
        let mut meta = ObjectMeta::default();
        stash.keep(&mut meta, &None::<String>).unwrap();
        stash
            .keep(&mut meta, &serde_json::json!({"class": null}))
            .unwrap();
        assert_eq!(meta.annotations, None);

        meta.annotations = Some([("note".to_owned(), "mine".to_owned())].into());
        stash.keep(&mut meta, &Some(false)).unwrap();
        assert_eq!(meta.annotations.as_ref().unwrap().len(), 2);
        assert_eq!(stash.take::<bool>(&mut meta).unwrap(), Some(false));
        assert_eq!(
            meta.annotations,
            Some([("note".to_owned(), "mine".to_owned())].into())
        );
        assert_eq!(stash.take::<bool>(&mut meta).unwrap(), None);
    }

    #[test]
    fn a_bad_annotation_or_a_bad_value_is_an_error() {
        let mut meta = ObjectMeta::default();
        let err = Stash::named("not an annotation")
            .keep(&mut meta, &1)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`not an annotation` cannot be an annotation: name part must consist"),
            "{err}"
        );
        let stash = Stash::named("example.com/conversion-v2");
        meta.annotations = Some([(stash.annotation().to_owned(), "{".to_owned())].into());
        let err = stash.take::<bool>(&mut meta).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "the annotation `example.com/conversion-v2` does not hold the fields it keeps: "
            ),
            "{err}"
        );
    }
}
