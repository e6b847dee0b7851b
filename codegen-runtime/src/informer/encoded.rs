//! Encoded informers: a kind's objects cached as their metadata, decoded, and the rest of
//! the object as compact JSON, decoded again when read.
//!
//! A decoded k8s-openapi `Pod` is large whatever it holds: its optional structs are inline
//! (a `Container` is over 2 KB and a `Volume` over 3 KB before any of their fields is set),
//! where Go's types hold pointers. A cluster-wide cache of full Pods therefore costs about
//! twice what client-go's does. [`Encoded<K>`] keeps the object's JSON instead (a 2-3 KB Pod
//! is about that many bytes), next to its decoded `metadata`, so that label selectors,
//! namespace listers, indexers and handlers that look at names and labels work as for any
//! informer. Reading the rest costs a decode: [`Encoded::decode`] builds a new `K` each time.
//!
//! Use it for a kind cached in large numbers whose full objects are read seldom (a
//! controller that looks at a few Pods of a whole cluster's). A controller that reads every
//! cached object on every reconcile is better served by the full informer; one that reads
//! metadata only, by a [`metadata`](crate::informer::metadata)-only informer, which does not fetch the
//! rest at all.
//!
//! The encoding is made once per event from the decoded object, which the informer decodes
//! without `managedFields` when it drops them (the default): they are neither decoded nor
//! kept. The encoded text is what `serde_json` writes for `K` with an empty `metadata`, so
//! reading it back gives the object that was decoded (fields `K` does not know are dropped,
//! as for the full informer).

use std::fmt::{self, Debug};
use std::marker::PhantomData;

use kube::Resource;
use kube::api::ObjectMeta;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize};

use crate::informer::SharedInformer;
use crate::informer::factory::{ScopeApi, SharedInformerFactory};
use crate::informer::lister::Lister;
use crate::informer::resource_of::resource_of_kind;

/// `K` as an encoded informer caches it: its `metadata` decoded, the rest as JSON.
///
/// It is a [`Resource`] of `K`'s kind, so it lists and watches as `K` does, and its
/// [`meta`](Resource::meta) is `K`'s metadata.
pub struct Encoded<K> {
    metadata: ObjectMeta,
    /// `K` as JSON, with `"metadata": {}`.
    rest: Box<[u8]>,
    kind: PhantomData<fn() -> K>,
}

impl<K: Resource + Serialize> Encoded<K> {
    /// Keeps `object`'s metadata and encodes the rest.
    ///
    /// # Errors
    /// What `serde_json` gives when `K` cannot be written as JSON (a map with keys that are
    /// not strings, for example).
    pub fn encode(mut object: K) -> Result<Self, serde_json::Error> {
        let metadata = std::mem::take(object.meta_mut());
        let rest = serde_json::to_vec(&object)?.into_boxed_slice();
        Ok(Self {
            metadata,
            rest,
            kind: PhantomData,
        })
    }
}

impl<K: Resource + DeserializeOwned> Encoded<K> {
    /// A new `K`, decoded from the encoded text, with the cached metadata.
    ///
    /// # Errors
    /// Only when the text does not decode as `K`, which it did when it was encoded: kept as
    /// a `Result` rather than a panic in a controller's read path.
    pub fn decode(&self) -> Result<K, serde_json::Error> {
        let mut object: K = serde_json::from_slice(&self.rest)?;
        *object.meta_mut() = self.metadata.clone();
        Ok(object)
    }
}

impl<K> Encoded<K> {
    /// The bytes of the encoded text (all of the object but its metadata).
    pub fn encoded_len(&self) -> usize {
        self.rest.len()
    }
}

impl<K> Clone for Encoded<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            rest: self.rest.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> Debug for Encoded<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoded")
            .field("metadata", &self.metadata)
            .field("encoded_len", &self.rest.len())
            .finish()
    }
}

impl<'de, K> Deserialize<'de> for Encoded<K>
where
    K: Resource + Deserialize<'de> + Serialize,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::encode(K::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

resource_of_kind!(Encoded, K::Scope, |this| &this.metadata, &mut this.metadata);

/// The encoded informer of `K`: `SharedInformer<Encoded<K>>`, with handlers, streams,
/// indexers and sync state like any informer.
pub type EncodedInformer<K> = SharedInformer<Encoded<K>>;

/// A lister over an encoded informer's cache: `get`, `namespace(ns)`, `list(&selector)`
/// return `Arc<Encoded<K>>`; [`Encoded::decode`] gives the object.
pub type EncodedLister<K> = Lister<Encoded<K>>;

impl SharedInformerFactory {
    /// The encoded informer of `K` (built-in or custom): the same one on every call.
    ///
    /// It watches what the full informer of `K` would (a kind may have both, each with its
    /// own watch). Its transform, resync period and `managedFields` choice are those of the
    /// cached type, `Encoded<K>` (`transform_for::<Encoded<K>>`, ...); a transform sees the
    /// metadata only.
    pub fn encoded_informer<K>(&self) -> EncodedInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize,
        K: Send + Sync + 'static,
        K::Scope: ScopeApi,
    {
        // The factory keeps informers by cached type too: this is `informer::<Encoded<K>>()`.
        self.informer::<Encoded<K>>()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod() -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "a", "labels": {"app": "web"},
                "resourceVersion": "7"},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "ports": [{"containerPort": 80}]}]},
            "status": {"phase": "Running"}})
    }

    #[test]
    fn decoding_gives_back_the_object_that_was_encoded() {
        let text = pod().to_string();
        let want: Pod = serde_json::from_str(&text).unwrap();
        let encoded: Encoded<Pod> = serde_json::from_str(&text).unwrap();
        assert_eq!(encoded.meta().labels.as_ref().unwrap()["app"], "web");
        assert_eq!(encoded.meta().resource_version.as_deref(), Some("7"));
        assert_eq!(encoded.decode().unwrap(), want);
        // The metadata is kept once, decoded: the text has an empty one.
        let rest: serde_json::Value = serde_json::from_slice(&encoded.rest).unwrap();
        assert_eq!(rest["metadata"], json!({}));
        assert_eq!(rest["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(encoded.encoded_len(), encoded.rest.len());
    }

    #[test]
    fn a_changed_metadata_is_what_decode_gives() {
        let mut encoded: Encoded<Pod> = serde_json::from_value(pod()).unwrap();
        encoded
            .meta_mut()
            .labels
            .as_mut()
            .unwrap()
            .insert("tier".into(), "front".into());
        let decoded = encoded.decode().unwrap();
        assert_eq!(decoded.metadata.labels.unwrap()["tier"], "front");
        assert_eq!(decoded.spec.unwrap().containers[0].name, "c");
    }

    #[test]
    fn what_does_not_decode_as_k_is_an_error_not_an_encoding() {
        let bad = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": "not a list"}});
        let err = serde_json::from_value::<Encoded<Pod>>(bad).unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }

    #[test]
    fn it_is_a_resource_of_the_kind_it_encodes() {
        assert_eq!(Encoded::<Pod>::plural(&()), "pods");
        assert_eq!(
            Encoded::<Pod>::url_path(&(), Some("a")),
            Pod::url_path(&(), Some("a"))
        );
        let encoded: Encoded<Pod> = serde_json::from_value(pod()).unwrap();
        let debug = format!("{encoded:?}");
        assert!(debug.contains("encoded_len"), "{debug}");
    }
}
