//! How generated apply configurations are read from and written as JSON objects.
//!
//! Each apply configuration has one [`apply_codec!`](crate::apply_codec!) call, an entry per
//! field, which implements [`ReadFields`] and [`WriteFields`] with a line per field, and
//! `Deserialize` and `Serialize` through [`deserialize`] and [`serialize`] here. That is what
//! serde's derives would do for a struct of optional fields, in far less code per struct:
//! the derives' field enums, sequence visitors and duplicate checks are most of an imported
//! API's compile time once its apply configurations are written.
//!
//! A field unset is left out; `null` reads as unset; keys no field has are skipped. A key
//! given twice takes its last value, as Go's `encoding/json` (and `serde_json::Value`) does;
//! serde's derive would refuse the object.
//!
//! Flattened fields (any type that serde reads from and writes as an object: a struct's own
//! configuration, a k8s-openapi struct, a map, a JSON value) get the keys no named field
//! has, in declaration order, each taking the keys it writes back: a flattened struct keeps
//! its own fields, and a flattened map after it gets the rest, as with serde's derive. They
//! go through a `serde_json::Value`, so they cost more than named fields do.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Error as _, Serialize, SerializeMap, Serializer};
/// The JSON object the keys left for flattened fields are kept in, and its values.
#[doc(no_inline)]
pub use serde_json::{Map, Value};

use crate::informer::decode::Key;

/// The fields of an apply configuration, read one key at a time.
pub trait ReadFields<'de>: Default {
    /// Whether the configuration has flattened fields: then the keys no named field has are
    /// kept for [`ReadFields::read_flattened`] rather than skipped.
    const FLATTENED: bool = false;

    /// Reads the value of `key` from `map` into the named field of that JSON name; `false`
    /// (the value left unread) when there is none.
    fn read_field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;

    /// Reads the flattened fields, in declaration order, from the keys no named field has.
    fn read_flattened<E: de::Error>(&mut self, _rest: &mut Map<String, Value>) -> Result<(), E> {
        Ok(())
    }
}

/// The fields of an apply configuration, written as entries of a map.
pub trait WriteFields {
    /// Writes every field that is set as an entry of `map`.
    fn write_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

/// Reads `T` from a JSON object: each key through [`ReadFields::read_field`]; keys of no
/// named field skipped, or kept for the flattened fields.
pub fn deserialize<'de, T: ReadFields<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(FieldsVisitor(PhantomData))
}

/// Writes `value` as a JSON object of the fields that are set.
pub fn serialize<T: WriteFields + ?Sized, S: Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    value.write_fields(&mut map)?;
    map.end()
}

/// Reads the value of a key into the named field `slot`: `true`, as `read_field` returns
/// for a key it has. One call per field keeps each `read_field` small to type-check.
#[inline]
pub fn read<'de, T: de::Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut T,
    map: &mut A,
) -> Result<bool, A::Error> {
    *slot = map.next_value()?;
    Ok(true)
}

/// Writes the entry `key: value` when `value` is set.
#[inline]
pub fn entry<M: SerializeMap, V: Serialize>(
    map: &mut M,
    key: &'static str,
    value: &Option<V>,
) -> Result<(), M::Error> {
    match value {
        Some(v) => map.serialize_entry(key, v),
        None => Ok(()),
    }
}

/// A flattened field read from `rest`, the keys no named field (nor an earlier flattened
/// one) has; the keys it writes back are taken out of `rest`.
pub fn flattened<T, E>(rest: &mut Map<String, Value>) -> Result<T, E>
where
    T: Serialize + DeserializeOwned,
    E: de::Error,
{
    let object = Value::Object(std::mem::take(rest));
    let field = T::deserialize(&object).map_err(E::custom);
    if let Value::Object(keys) = object {
        *rest = keys;
    }
    let field = field?;
    if !rest.is_empty()
        && let Ok(Value::Object(taken)) = serde_json::to_value(&field)
    {
        rest.retain(|key, _| !taken.contains_key(key));
    }
    Ok(field)
}

/// A flattened field written as entries of `map` (nothing when it writes `null`).
pub fn write_flattened<M: SerializeMap, V: Serialize>(
    map: &mut M,
    value: &V,
) -> Result<(), M::Error> {
    match serde_json::to_value(value).map_err(M::Error::custom)? {
        Value::Null => Ok(()),
        Value::Object(fields) => fields
            .iter()
            .try_for_each(|(k, v)| map.serialize_entry(k, v)),
        other => Err(M::Error::custom(format_args!(
            "can only flatten structs and maps, not {other}"
        ))),
    }
}

struct FieldsVisitor<T>(PhantomData<T>);

impl<'de, T: ReadFields<'de>> Visitor<'de> for FieldsVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // What serde's derive says: `struct FooApplyConfiguration`.
        let name = std::any::type_name::<T>();
        write!(f, "struct {}", name.rsplit("::").next().unwrap_or(name))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut out = T::default();
        let mut rest = Map::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if out.read_field(&key, &mut map)? {
                continue;
            }
            if T::FLATTENED {
                rest.insert(key.into_owned(), map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if T::FLATTENED {
            out.read_flattened(&mut rest)?;
        }
        Ok(out)
    }
}

/// Implements `Deserialize`, `Serialize`, [`ReadFields`] and [`WriteFields`] for an apply
/// configuration, from its fields in declaration order: `"json" => field` for a field
/// written under that JSON name, `_ => field` for a flattened one.
///
/// ```
/// #[derive(Default)]
/// struct PortApplyConfiguration {
///     container_port: Option<i32>,
///     extra: std::collections::BTreeMap<String, String>,
/// }
/// kube_codegen_runtime::apply_codec!(PortApplyConfiguration {
///     "containerPort" => container_port,
///     _ => extra,
/// });
/// let port: PortApplyConfiguration =
///     serde_json::from_str(r#"{"containerPort": 80, "name": "http"}"#).unwrap();
/// assert_eq!(port.container_port, Some(80));
/// assert_eq!(port.extra["name"], "http");
/// ```
///
/// Each entry expands on its own (no recursion), so a struct of any number of fields
/// compiles under the default recursion limit. Named fields are matched before flattened
/// ones, whatever their order.
#[macro_export]
macro_rules! apply_codec {
    ($ty:ident { $($json:tt => $field:ident),* $(,)? }) => {
        impl<'de> $crate::codec::apply::ReadFields<'de> for $ty {
            const FLATTENED: bool = false $(|| $crate::__apply_codec_flattened!($json))*;

            fn read_field<A: $crate::serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> ::core::result::Result<bool, A::Error> {
                let _ = (&key, &map); // a struct with no named fields reads neither
                $($crate::__apply_codec_read!(self, key, map, $json $field);)*
                ::core::result::Result::Ok(false)
            }

            fn read_flattened<E: $crate::serde::de::Error>(
                &mut self,
                rest: &mut $crate::codec::apply::Map<::std::string::String, $crate::codec::apply::Value>,
            ) -> ::core::result::Result<(), E> {
                let _ = &rest;
                $($crate::__apply_codec_read_flattened!(self, rest, $json $field);)*
                ::core::result::Result::Ok(())
            }
        }

        impl $crate::codec::apply::WriteFields for $ty {
            fn write_fields<M: $crate::serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> ::core::result::Result<(), M::Error> {
                let _ = &map;
                $($crate::__apply_codec_write!(self, map, $json $field);)*
                ::core::result::Result::Ok(())
            }
        }

        $crate::__codec_serde!($ty, $crate::codec::apply::deserialize, $crate::codec::apply::serialize);
    };
}

/// One named field of [`apply_codec!`](crate::apply_codec!) read: its value when the key is
/// its JSON name.
#[doc(hidden)]
#[macro_export]
macro_rules! __apply_codec_read {
    ($self:ident, $key:ident, $map:ident, _ $field:ident) => {};
    ($self:ident, $key:ident, $map:ident, $json:literal $field:ident) => {
        if $key == $json {
            return $crate::codec::apply::read(&mut $self.$field, $map);
        }
    };
}

/// Whether an entry of [`apply_codec!`](crate::apply_codec!) is a flattened field.
#[doc(hidden)]
#[macro_export]
macro_rules! __apply_codec_flattened {
    (_) => {
        true
    };
    ($json:literal) => {
        false
    };
}

/// One flattened field of [`apply_codec!`](crate::apply_codec!) read, from the keys left.
#[doc(hidden)]
#[macro_export]
macro_rules! __apply_codec_read_flattened {
    ($self:ident, $rest:ident, _ $field:ident) => {
        $self.$field = $crate::codec::apply::flattened($rest)?;
    };
    ($self:ident, $rest:ident, $json:literal $field:ident) => {};
}

/// One field of [`apply_codec!`](crate::apply_codec!) written, when set.
#[doc(hidden)]
#[macro_export]
macro_rules! __apply_codec_write {
    ($self:ident, $map:ident, _ $field:ident) => {
        $crate::codec::apply::write_flattened($map, &$self.$field)?;
    };
    // A named field is written as an optional field of `struct_codec!` is.
    ($self:ident, $map:ident, $json:literal $field:ident) => {
        $crate::__codec_write!($self, $map, $json $field)
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    #[derive(Clone, Debug, Default, PartialEq)]
    struct PortApplyConfiguration {
        name: Option<String>,
        container_port: Option<i32>,
    }
    crate::apply_codec!(PortApplyConfiguration {
        "name" => name,
        "containerPort" => container_port,
    });

    /// A flattened struct between named fields, then a flattened map that takes the rest.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct RootApplyConfiguration {
        kind: Option<String>,
        port: PortApplyConfiguration,
        ports: Option<Vec<PortApplyConfiguration>>,
        rest: BTreeMap<String, serde_json::Value>,
    }
    crate::apply_codec!(RootApplyConfiguration {
        "kind" => kind,
        _ => port,
        "ports" => ports,
        _ => rest,
    });

    #[derive(Clone, Debug, Default, PartialEq)]
    struct EmptyApplyConfiguration {}
    crate::apply_codec!(EmptyApplyConfiguration {});

    #[test]
    fn fields_set_are_written_in_order_and_unset_ones_left_out() {
        let root = RootApplyConfiguration {
            kind: Some("Root".into()),
            port: PortApplyConfiguration {
                name: None,
                container_port: Some(80),
            },
            ports: Some(vec![PortApplyConfiguration {
                name: Some("http".into()),
                container_port: None,
            }]),
            rest: BTreeMap::from([("extra".into(), json!(true))]),
        };
        let text = serde_json::to_string(&root).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"Root","containerPort":80,"ports":[{"name":"http"}],"extra":true}"#
        );
        let back: RootApplyConfiguration = serde_json::from_str(&text).unwrap();
        assert_eq!(back, root);
        assert_eq!(
            serde_json::to_string(&EmptyApplyConfiguration {}).unwrap(),
            "{}"
        );
    }

    #[test]
    fn named_fields_are_matched_before_flattened_ones_and_the_rest_go_to_the_map() {
        let root: RootApplyConfiguration = serde_json::from_str(
            r#"{"other": 1, "name": "n", "kind": "K", "ports": [], "containerPort": 8}"#,
        )
        .unwrap();
        assert_eq!(root.kind.as_deref(), Some("K"));
        assert_eq!(root.port.name.as_deref(), Some("n"));
        assert_eq!(root.port.container_port, Some(8));
        assert_eq!(root.ports, Some(vec![]));
        assert_eq!(root.rest, BTreeMap::from([("other".into(), json!(1))]));
    }

    #[test]
    fn null_is_unset_unknown_keys_are_skipped_and_a_repeated_key_takes_its_last_value() {
        let port: PortApplyConfiguration = serde_json::from_str(
            r#"{"name": null, "x": {"deep": [1]}, "containerPort": 1, "containerPort": 2}"#,
        )
        .unwrap();
        assert_eq!(
            port,
            PortApplyConfiguration {
                name: None,
                container_port: Some(2)
            }
        );
        // From a deserializer that owns its keys too.
        let from_value: PortApplyConfiguration =
            serde_json::from_value(json!({"name": "v", "containerPort": 3})).unwrap();
        assert_eq!(from_value.name.as_deref(), Some("v"));
        let empty: EmptyApplyConfiguration = serde_json::from_str(r#"{"a": 1}"#).unwrap();
        assert_eq!(empty, EmptyApplyConfiguration {});
    }

    #[test]
    fn errors_say_what_serdes_derive_says() {
        let err = serde_json::from_str::<PortApplyConfiguration>(r#""text""#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid type: string \"text\", expected struct PortApplyConfiguration at line 1 column 6"
        );
        let err = serde_json::from_str::<PortApplyConfiguration>(r#"{"containerPort": "80"}"#)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid type: string \"80\", expected i32"),
            "{err}"
        );
    }

    #[test]
    fn a_flattened_json_value_takes_the_rest_and_must_be_an_object_to_be_written() {
        #[derive(Clone, Debug, Default, PartialEq)]
        struct LooseApplyConfiguration {
            kind: Option<String>,
            rest: serde_json::Value,
        }
        crate::apply_codec!(LooseApplyConfiguration { "kind" => kind, _ => rest });
        let loose: LooseApplyConfiguration =
            serde_json::from_str(r#"{"kind": "K", "a": 1}"#).unwrap();
        assert_eq!(loose.rest, json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(&loose).unwrap(),
            json!({"kind": "K", "a": 1})
        );
        let bad = LooseApplyConfiguration {
            kind: None,
            rest: json!([1]),
        };
        let err = serde_json::to_string(&bad).unwrap_err();
        assert!(
            err.to_string()
                .contains("can only flatten structs and maps"),
            "{err}"
        );
    }

    #[test]
    fn any_type_serde_reads_as_an_object_can_be_flattened() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
        #[derive(Clone, Debug, Default, PartialEq)]
        struct PickApplyConfiguration {
            kind: Option<String>,
            selector: LabelSelector,
            rest: BTreeMap<String, serde_json::Value>,
        }
        crate::apply_codec!(PickApplyConfiguration { "kind" => kind, _ => selector, _ => rest });
        let text = r#"{"kind":"K","matchLabels":{"app":"web"},"other":1}"#;
        let pick: PickApplyConfiguration = serde_json::from_str(text).unwrap();
        assert_eq!(pick.selector.match_labels.as_ref().unwrap()["app"], "web");
        // The selector took its key: the map after it has only what is left.
        assert_eq!(pick.rest, BTreeMap::from([("other".into(), json!(1))]));
        assert_eq!(serde_json::to_string(&pick).unwrap(), text);
    }
}
