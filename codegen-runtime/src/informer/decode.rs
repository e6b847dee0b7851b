//! Decoding watched objects without their `metadata.managedFields`.
//!
//! The factory drops `managedFields` from what it caches unless a kind keeps them
//! ([`transform`](crate::informer::transform)). Dropping them after decoding still builds them first:
//! k8s-openapi holds each entry's `fieldsV1` as a `serde_json::Value` tree, about 200 small
//! allocations a Pod, freed as soon as they are made. Between the objects the cache keeps,
//! those short-lived blocks leave pages half used that the allocator cannot give back. An
//! informer that would drop them anyway decodes through [`WithoutManagedFields`], which
//! steps over their text without building anything.
//!
//! Only `metadata.managedFields` of the object itself is skipped: a field of that name
//! anywhere else (in a spec, or a list's metadata) is decoded as usual.

use std::borrow::Cow;
use std::fmt::{self, Debug};
use std::marker::PhantomData;

use futures::{Stream, TryStreamExt};
use kube::Resource;
use kube::api::Api;
use kube::core::DynamicResourceScope;
use kube::runtime::watcher;
use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess,
    SeqAccess, Visitor,
};

use crate::informer::resource_of::resource_of_kind;

/// `K` decoded without `metadata.managedFields`: the same object with that field `None`.
///
/// It is a [`Resource`] of `K`'s kind, so `Api<WithoutManagedFields<K>>` lists and watches
/// what `Api<K>` does (metadata only when `K` is a `PartialObjectMeta`). Its scope is not
/// checked (`DynamicResourceScope`): give its `Api` a namespace only when `K` is namespaced.
/// Informers with [`InformerOptions::skip_managed_fields`](crate::InformerOptions) build it
/// from their `Api<K>`, which was checked.
#[derive(Clone, Debug)]
pub struct WithoutManagedFields<K>(pub K);

impl<'de, K: Deserialize<'de>> Deserialize<'de> for WithoutManagedFields<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        K::deserialize(Filter {
            inner: deserializer,
            level: Level::Object,
        })
        .map(Self)
    }
}

// Its `Api` is built from an `Api<K>` that already has the right scope and namespace.
resource_of_kind!(
    WithoutManagedFields,
    DynamicResourceScope,
    |this| this.0.meta(),
    this.0.meta_mut()
);

/// kube's watcher over what `api` sees, its objects decoded without `managedFields`.
pub(crate) fn watch<K>(
    api: &Api<K>,
    dyntype: &K::DynamicType,
    config: watcher::Config,
) -> impl Stream<Item = watcher::Result<watcher::Event<K>>> + Send + use<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
{
    let lean = retype(api, dyntype);
    watcher::watcher(lean, config).map_ok(|event| match event {
        watcher::Event::Apply(o) => watcher::Event::Apply(o.0),
        watcher::Event::Delete(o) => watcher::Event::Delete(o.0),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => watcher::Event::InitApply(o.0),
        watcher::Event::InitDone => watcher::Event::InitDone,
    })
}

/// The `Api` of the same URL and client as `api`, decoding `WithoutManagedFields<K>`.
fn retype<K: Resource + Clone>(
    api: &Api<K>,
    dyntype: &K::DynamicType,
) -> Api<WithoutManagedFields<K>> {
    let client = api.clone().into_client();
    match api.namespace() {
        Some(ns) => Api::namespaced_with(client, ns, dyntype),
        None => Api::all_with(client, dyntype),
    }
}

/// Where in the object a [`Filter`] reads.
#[derive(Clone, Copy)]
enum Level {
    /// The object: its `metadata` value is read at [`Level::Metadata`].
    Object,
    /// Its `metadata`: the `managedFields` entry is skipped.
    Metadata,
}

/// A deserializer that passes everything through to `inner`, except that a map read at
/// `level` is read through [`FilterMap`].
struct Filter<D> {
    inner: D,
    level: Level,
}

/// Forwards `deserialize_*` methods to the inner deserializer with the visitor wrapped.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method($($arg,)* FilterVisitor { inner: visitor, level: self.level })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Filter<D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A visitor that passes everything through, reading a map through [`FilterMap`] (and an
/// option's or newtype's content through [`Filter`] at the same level).
struct FilterVisitor<V> {
    inner: V,
    level: Level,
}

/// Forwards `visit_*` methods of one value to the inner visitor.
macro_rules! visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for FilterVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Filter {
            inner: d,
            level: self.level,
        })
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Filter {
            inner: d,
            level: self.level,
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(seq)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(data)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(FilterMap {
            inner: map,
            level: self.level,
            metadata_next: false,
        })
    }
}

/// A map read key by key: at [`Level::Object`] the value of `metadata` is read at
/// [`Level::Metadata`]; at [`Level::Metadata`] the `managedFields` entry is skipped.
struct FilterMap<A> {
    inner: A,
    level: Level,
    /// Whether the value about to be read is the object's `metadata`.
    metadata_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for FilterMap<A> {
    type Error = A::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.inner.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            match self.level {
                Level::Metadata if key == "managedFields" => {
                    self.inner.next_value::<IgnoredAny>()?;
                    continue;
                }
                Level::Object => self.metadata_next = key == "metadata",
                Level::Metadata => {}
            }
            return match key {
                Cow::Borrowed(k) => seed.deserialize(BorrowedStrDeserializer::new(k)),
                Cow::Owned(k) => seed.deserialize(StringDeserializer::new(k)),
            }
            .map(Some);
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if std::mem::take(&mut self.metadata_next) {
            self.inner.next_value_seed(MetadataSeed(seed))
        } else {
            self.inner.next_value_seed(seed)
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// Reads the object's `metadata` value at [`Level::Metadata`].
struct MetadataSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for MetadataSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Filter {
            inner: d,
            level: Level::Metadata,
        })
    }
}

/// A map key, borrowed from the input where it can be.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor(PhantomData))
    }
}

struct KeyVisitor<'de>(PhantomData<&'de ()>);

impl<'de> Visitor<'de> for KeyVisitor<'de> {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use kube::api::{DynamicObject, ObjectList};
    use kube::core::{PartialObjectMeta, WatchEvent};
    use serde_json::json;

    fn pod() -> serde_json::Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "namespace": "ns",
                "labels": {"app": "a"},
                "managedFields": [{
                    "manager": "kubectl",
                    "operation": "Apply",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}
                }],
                "resourceVersion": "7"
            },
            "spec": {"containers": [{"name": "c", "image": "i"}]}
        })
    }

    fn lean<K: DeserializeOwned>(text: &str) -> K {
        serde_json::from_str::<WithoutManagedFields<K>>(text)
            .unwrap()
            .0
    }

    #[test]
    fn an_object_is_the_same_without_its_managed_fields() {
        let text = pod().to_string();
        let mut full: Pod = serde_json::from_str(&text).unwrap();
        assert!(full.metadata.managed_fields.is_some());
        full.metadata.managed_fields = None;
        assert_eq!(lean::<Pod>(&text), full);

        // Metadata only, and a kind known at run time (read through a map, not a struct).
        let meta: PartialObjectMeta<Pod> = lean(&text);
        assert_eq!(meta.metadata, full.metadata);
        let mut dynamic: DynamicObject = serde_json::from_str(&text).unwrap();
        dynamic.metadata.managed_fields = None;
        assert_eq!(lean::<DynamicObject>(&text), dynamic);
    }

    #[test]
    fn a_field_of_the_same_name_elsewhere_is_kept() {
        // Raw texts: `json!` would sort the keys. `managedFields` first, and last, in the
        // object's metadata; kept in the spec and in a nested `metadata`.
        for text in [
            r#"{"metadata":{"managedFields":[{"manager":"m"}],"name":"p"},
                "spec":{"managedFields":"in the spec"},
                "status":{"metadata":{"name":"n","managedFields":[1]}}}"#,
            r#"{"status":{"metadata":{"managedFields":[1],"name":"n"}},
                "spec":{"managedFields":"in the spec"},
                "metadata":{"name":"p","managedFields":[{"manager":"m"}]}}"#,
        ] {
            let obj: DynamicObject = lean(text);
            assert_eq!(obj.metadata.managed_fields, None);
            assert_eq!(obj.metadata.name.as_deref(), Some("p"));
            assert_eq!(obj.data["spec"]["managedFields"], "in the spec");
            assert_eq!(obj.data["status"]["metadata"]["managedFields"], json!([1]));
        }
    }

    #[test]
    fn lists_and_watch_events_are_read_without_them() {
        let list = json!({
            "apiVersion": "v1", "kind": "PodList",
            "metadata": {"resourceVersion": "9"},
            "items": [pod(), pod()]
        });
        let list: ObjectList<WithoutManagedFields<Pod>> =
            serde_json::from_str(&list.to_string()).unwrap();
        assert_eq!(list.items.len(), 2);
        assert!(
            list.items
                .iter()
                .all(|p| p.0.metadata.managed_fields.is_none())
        );

        // The type first, as kube-apiserver sends it (the object read as it comes), and
        // after the object (the object buffered first, then read).
        let object = pod().to_string();
        for event in [
            format!(r#"{{"type":"ADDED","object":{object}}}"#),
            format!(r#"{{"object":{object},"type":"MODIFIED"}}"#),
        ] {
            let event: WatchEvent<WithoutManagedFields<Pod>> =
                serde_json::from_str(&event).unwrap();
            match event {
                WatchEvent::Added(p) | WatchEvent::Modified(p) => {
                    assert!(p.0.metadata.managed_fields.is_none());
                    assert_eq!(p.0.metadata.resource_version.as_deref(), Some("7"));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn escaped_keys_are_compared_unescaped_and_errors_read_as_before() {
        // Escaped keys cannot be borrowed from the input: `name` is read, `managedFields`
        // skipped.
        let text = r#"{"metadata":{"na\u006de":"c","managed\u0046ields":[{"manager":"m"}]},"data":{"k":"v"}}"#;
        let cm: ConfigMap = lean(text);
        assert_eq!(cm.metadata.name.as_deref(), Some("c"));
        assert_eq!(cm.metadata.managed_fields, None);
        let bad = r#"{"metadata":{"name":7}}"#;
        let ours = serde_json::from_str::<WithoutManagedFields<ConfigMap>>(bad).unwrap_err();
        let theirs = serde_json::from_str::<ConfigMap>(bad).unwrap_err();
        assert_eq!(ours.to_string(), theirs.to_string());
    }

    #[tokio::test]
    async fn its_api_has_the_url_of_the_api_it_comes_from() {
        let client =
            kube::Client::try_from(kube::Config::new("http://127.0.0.1:1".parse().unwrap()))
                .unwrap();
        let dyntype = ();
        let namespaced: Api<Pod> = Api::namespaced(client.clone(), "ns");
        assert_eq!(
            retype(&namespaced, &dyntype).resource_url(),
            "/api/v1/namespaces/ns/pods"
        );
        let all: Api<PartialObjectMeta<Pod>> = Api::all(client);
        let lean = retype(&all, &dyntype);
        assert_eq!(lean.resource_url(), all.resource_url());
        assert!(WithoutManagedFields::<PartialObjectMeta<Pod>>::metadata_api());
    }
}
