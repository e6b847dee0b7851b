//! How the types `kube-codegen import` writes are read from and written as JSON.
//!
//! Each imported struct has one [`struct_codec!`](crate::struct_codec!) call below it, and
//! each imported enum one [`enum_codec!`](crate::enum_codec!) call, in place of serde's
//! `Serialize` and `Deserialize` derives. They implement both traits with a line per field
//! or variant, for what import writes: structs of named fields, required or optional
//! (`Option`), and enums of unit variants. serde's derives are about half of an imported
//! API's compile time (field enums, sequence visitors and duplicate checks for every
//! struct); this is a small part of that.
//!
//! The JSON is the derives' for the same `#[serde]` attributes, which the types keep for
//! their `JsonSchema` derive:
//! - fields are written in declaration order, an optional field left out when it is unset;
//! - a missing required field fails with serde's `missing field `x``, a missing or `null`
//!   optional field reads as unset, and keys no field has are skipped;
//! - an enum is written and read as its variant's JSON string; another string fails with
//!   serde's `unknown variant` message, naming the ones expected.
//!
//! Where they differ: a key given twice takes its last value, as Go's `encoding/json` (and
//! `serde_json::Value`) does, where the derive refuses the object; and a struct is read from
//! a JSON object only, never from an array of its fields.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::informer::decode::Key;

/// A struct read from a JSON object: what [`struct_codec!`](crate::struct_codec!) implements.
pub trait ReadObject<'de>: Sized {
    /// Reads the struct from the object's entries.
    fn read_object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// An enum of unit variants read from its variant's JSON string: what
/// [`enum_codec!`](crate::enum_codec!) implements.
pub trait ReadVariant: Sized {
    /// Every variant's JSON string, for the error a string of none of them gets.
    const VARIANTS: &'static [&'static str];

    /// The variant whose JSON string is `json`.
    fn from_json(json: &str) -> Option<Self>;
}

/// `Deserialize::deserialize` of a struct with [`struct_codec!`](crate::struct_codec!).
pub fn deserialize<'de, T: ReadObject<'de>, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectVisitor(PhantomData))
}

/// `Deserialize::deserialize` of an enum with [`enum_codec!`](crate::enum_codec!).
pub fn deserialize_variant<'de, T: ReadVariant, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_str(VariantVisitor(PhantomData))
}

/// The next key of `map`, borrowed from the input where the input allows.
#[inline]
pub fn next_key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
    Ok(map.next_key::<Key<'de>>()?.map(|Key(key)| key))
}

/// Reads past the value of a key no field has.
#[inline]
pub fn skip_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<IgnoredAny>().map(drop)
}

/// Reads the value of a key into `slot`: an optional field's `Option`, as the field has it.
///
/// The generated code calls this (and [`read_some`]) rather than reading in place, so that
/// each field costs one call to type-check rather than a `?` and its early return.
#[inline]
pub fn read<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut T,
    map: &mut A,
) -> Result<(), A::Error> {
    *slot = map.next_value()?;
    Ok(())
}

/// Reads the value of a required field's key into `slot`.
#[inline]
pub fn read_some<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
) -> Result<(), A::Error> {
    *slot = Some(map.next_value()?);
    Ok(())
}

/// serde's error for the required field `json` missing.
#[cold]
pub fn missing<E: de::Error>(json: &'static str) -> E {
    E::missing_field(json)
}

/// The last segment of a type's name: `CertificateSpec` of `my_crate::apis::CertificateSpec`.
fn short_name<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: ReadObject<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "struct {}", short_name::<T>())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::read_object(map)
    }
}

struct VariantVisitor<T>(PhantomData<T>);

impl<T: ReadVariant> Visitor<'_> for VariantVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "enum {}", short_name::<T>())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        T::from_json(v).ok_or_else(|| E::unknown_variant(v, T::VARIANTS))
    }
}

/// `Serialize` and `Deserialize` for an imported struct of named fields: one entry per field,
/// `"jsonName" => field` for an optional (`Option`) field and `required "jsonName" => field`
/// for a required one, in declaration order.
///
/// ```
/// #[derive(Debug, PartialEq)]
/// pub struct IssuerRef {
///     pub kind: Option<String>,
///     pub name: String,
/// }
/// kube_codegen_runtime::struct_codec!(IssuerRef {
///     "kind" => kind,
///     required "name" => name,
/// });
///
/// let r: IssuerRef = serde_json::from_str(r#"{"name":"ca","other":1}"#).unwrap();
/// assert_eq!(r, IssuerRef { kind: None, name: "ca".into() });
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"name":"ca"}"#);
/// let err = serde_json::from_str::<IssuerRef>(r#"{"kind":"Issuer"}"#).unwrap_err();
/// assert_eq!(err.to_string(), "missing field `name` at line 1 column 17");
/// ```
#[macro_export]
macro_rules! struct_codec {
    ($ty:ident { $($($required:ident)? $json:literal => $field:ident),* $(,)? }) => {
        impl<'de> $crate::codec::imported::ReadObject<'de> for $ty {
            fn read_object<A: $crate::serde::de::MapAccess<'de>>(
                mut map: A,
            ) -> ::core::result::Result<Self, A::Error> {
                $(let mut $field = ::core::option::Option::None;)*
                loop {
                    let key = match $crate::codec::imported::next_key(&mut map) {
                        ::core::result::Result::Ok(::core::option::Option::Some(key)) => key,
                        ::core::result::Result::Ok(::core::option::Option::None) => break,
                        ::core::result::Result::Err(e) => return ::core::result::Result::Err(e),
                    };
                    let read = match &*key {
                        $($json => $crate::__codec_read!(map, $field $($required)?),)*
                        _ => $crate::codec::imported::skip_value(&mut map),
                    };
                    if let ::core::result::Result::Err(e) = read {
                        return ::core::result::Result::Err(e);
                    }
                }
                $($crate::__codec_take!($json, $field $($required)?);)*
                ::core::result::Result::Ok(Self { $($field),* })
            }
        }

        impl $crate::codec::apply::WriteFields for $ty {
            fn write_fields<M: $crate::serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> ::core::result::Result<(), M::Error> {
                let _ = &map;
                $($crate::__codec_write!(self, map, $json $field $($required)?);)*
                ::core::result::Result::Ok(())
            }
        }

        $crate::__codec_serde!($ty, $crate::codec::imported::deserialize, $crate::codec::apply::serialize);
    };
}

/// `Serialize` and `Deserialize` for an imported enum of unit variants, each written as its
/// JSON string: one entry per variant, `"JSON" => Variant`.
///
/// ```
/// #[derive(Debug, PartialEq)]
/// pub enum Algorithm {
///     Rsa,
///     Ecdsa,
/// }
/// kube_codegen_runtime::enum_codec!(Algorithm {
///     "RSA" => Rsa,
///     "ECDSA" => Ecdsa,
/// });
///
/// assert_eq!(serde_json::to_string(&Algorithm::Ecdsa).unwrap(), r#""ECDSA""#);
/// let err = serde_json::from_str::<Algorithm>(r#""DSA""#).unwrap_err();
/// assert!(err.to_string().starts_with("unknown variant `DSA`, expected `RSA` or `ECDSA`"));
/// ```
#[macro_export]
macro_rules! enum_codec {
    ($ty:ident { $($json:literal => $variant:ident),* $(,)? }) => {
        impl $crate::codec::imported::ReadVariant for $ty {
            const VARIANTS: &'static [&'static str] = &[$($json),*];

            fn from_json(json: &str) -> ::core::option::Option<Self> {
                match json {
                    $($json => ::core::option::Option::Some(Self::$variant),)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        $crate::__codec_serde!($ty, $crate::codec::imported::deserialize_variant);

        impl $crate::serde::Serialize for $ty {
            fn serialize<S: $crate::serde::Serializer>(
                &self,
                s: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                s.serialize_str(match self {
                    $(Self::$variant => $json,)*
                })
            }
        }
    };
}

/// The serde impls of [`struct_codec!`](crate::struct_codec!), [`enum_codec!`](crate::enum_codec!)
/// and [`apply_codec!`](crate::apply_codec!): `Deserialize` through the runtime function
/// `$de`, and `Serialize` through `$ser` when one is given.
#[doc(hidden)]
#[macro_export]
macro_rules! __codec_serde {
    ($ty:ident, $de:path) => {
        impl<'de> $crate::serde::Deserialize<'de> for $ty {
            #[inline]
            fn deserialize<D: $crate::serde::Deserializer<'de>>(
                d: D,
            ) -> ::core::result::Result<Self, D::Error> {
                $de(d)
            }
        }
    };
    ($ty:ident, $de:path, $ser:path) => {
        $crate::__codec_serde!($ty, $de);

        impl $crate::serde::Serialize for $ty {
            #[inline]
            fn serialize<S: $crate::serde::Serializer>(
                &self,
                s: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                $ser(self, s)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __codec_read {
    ($map:ident, $field:ident required) => {
        $crate::codec::imported::read_some(&mut $field, &mut $map)
    };
    ($map:ident, $field:ident) => {
        $crate::codec::imported::read(&mut $field, &mut $map)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __codec_take {
    ($json:literal, $field:ident required) => {
        let ::core::option::Option::Some($field) = $field else {
            return ::core::result::Result::Err($crate::codec::imported::missing($json));
        };
    };
    ($json:literal, $field:ident) => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __codec_write {
    ($self:ident, $map:ident, $json:literal $field:ident required) => {
        if let ::core::result::Result::Err(e) =
            $crate::serde::ser::SerializeMap::serialize_entry($map, $json, &$self.$field)
        {
            return ::core::result::Result::Err(e);
        }
    };
    ($self:ident, $map:ident, $json:literal $field:ident) => {
        if let ::core::result::Result::Err(e) =
            $crate::codec::apply::entry($map, $json, &$self.$field)
        {
            return ::core::result::Result::Err(e);
        }
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    #[derive(Clone, Debug, PartialEq)]
    enum Policy {
        Never,
        IfNotPresent,
    }
    crate::enum_codec!(Policy {
        "Never" => Never,
        "IfNotPresent" => IfNotPresent,
    });

    #[derive(Clone, Debug, PartialEq)]
    struct Port {
        name: Option<String>,
        r#type: String,
        policy: Option<Policy>,
    }
    crate::struct_codec!(Port {
        "name" => name,
        required "type" => r#type,
        "policy" => policy,
    });

    #[derive(Clone, Debug, PartialEq)]
    struct Spec {
        ports: Vec<Port>,
        labels: Option<BTreeMap<String, String>>,
        raw: Option<serde_json::Value>,
    }
    crate::struct_codec!(Spec {
        required "ports" => ports,
        "labels" => labels,
        "raw" => raw,
    });

    #[derive(Clone, Debug, PartialEq)]
    struct Empty {}
    crate::struct_codec!(Empty {});

    fn port(name: Option<&str>, r#type: &str) -> Port {
        Port {
            name: name.map(Into::into),
            r#type: r#type.into(),
            policy: None,
        }
    }

    #[test]
    fn fields_are_written_in_order_and_unset_optional_ones_left_out() {
        let spec = Spec {
            ports: vec![port(None, "TCP"), port(Some("http"), "UDP")],
            labels: Some(BTreeMap::from([("a".into(), "b".into())])),
            raw: None,
        };
        assert_eq!(
            serde_json::to_string(&spec).unwrap(),
            r#"{"ports":[{"type":"TCP"},{"name":"http","type":"UDP"}],"labels":{"a":"b"}}"#
        );
        let back: Spec = serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
    }

    #[test]
    fn null_and_missing_optional_fields_read_as_unset_and_unknown_keys_are_skipped() {
        let p: Port = serde_json::from_str(
            r#"{"extra":{"deep":[1,2]},"name":null,"type":"TCP","policy":"Never"}"#,
        )
        .unwrap();
        assert_eq!(p.name, None);
        assert_eq!(p.policy, Some(Policy::Never));
        let spec: Spec = serde_json::from_value(json!({"ports": [], "raw": {"x": [1]}})).unwrap();
        assert_eq!(spec.raw, Some(json!({"x": [1]})));
        assert_eq!(spec.labels, None);
    }

    #[test]
    fn errors_are_serdes_derives() {
        let missing = serde_json::from_str::<Port>(r#"{"name":"a"}"#).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "missing field `type` at line 1 column 12"
        );
        let null = serde_json::from_str::<Port>(r#"{"type":null}"#).unwrap_err();
        assert_eq!(
            null.to_string(),
            "invalid type: null, expected a string at line 1 column 12"
        );
        let not_object = serde_json::from_str::<Port>("[]").unwrap_err();
        assert_eq!(
            not_object.to_string(),
            "invalid type: sequence, expected struct Port at line 1 column 0"
        );
        let variant = serde_json::from_str::<Policy>(r#""Always""#).unwrap_err();
        assert_eq!(
            variant.to_string(),
            "unknown variant `Always`, expected `Never` or `IfNotPresent` at line 1 column 8"
        );
        let inner =
            serde_json::from_value::<Spec>(json!({"ports": [{"type": "TCP", "policy": 1}]}))
                .unwrap_err();
        assert_eq!(
            inner.to_string(),
            "invalid type: integer `1`, expected enum Policy"
        );
    }

    #[test]
    fn a_key_given_twice_takes_its_last_value() {
        let p: Port = serde_json::from_str(r#"{"type":"TCP","type":"UDP"}"#).unwrap();
        assert_eq!(p.r#type, "UDP");
    }

    #[test]
    fn an_empty_struct_is_an_empty_object() {
        assert_eq!(serde_json::to_string(&Empty {}).unwrap(), "{}");
        let e: Empty = serde_json::from_str(r#"{"anything":[true]}"#).unwrap();
        assert_eq!(e, Empty {});
    }

    #[test]
    fn a_derived_twin_reads_and_writes_the_same_json() {
        #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Twin {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            name: Option<String>,
            #[serde(rename = "type")]
            r#type: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            policy: Option<String>,
        }
        for text in [
            r#"{"type":"TCP"}"#,
            r#"{"name":"a","type":"UDP","policy":"Never"}"#,
            r#"{"policy":"IfNotPresent","type":"SCTP","name":null,"x":1}"#,
        ] {
            let ours: Port = serde_json::from_str(text).unwrap();
            let twin: Twin = serde_json::from_str(text).unwrap();
            assert_eq!(
                serde_json::to_value(&ours).unwrap(),
                serde_json::to_value(&twin).unwrap(),
                "{text}"
            );
        }
    }
}
