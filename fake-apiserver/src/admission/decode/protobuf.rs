//! Kubernetes protobuf request bodies, read into the JSON the same object has: what
//! kubectl's typed commands (`create namespace`, `create configmap`, `create deployment`,
//! ...) send for built-in kinds.
//!
//! A body is `k8s\0` followed by a `runtime.Unknown` envelope: the type (`apiVersion`,
//! `kind`) and the object's own message. The message is read field by field with the
//! built-in types' protobuf numbers; Go's JSON rules decide what is written: a pointer's
//! zero is kept, an `omitempty` zero is not, non-pointer structs are always there. The
//! server answers in JSON, which clients read whatever they asked for.

use serde_json::{Map, Value, json};

use crate::rules::builtin::{Field, Kind, Type, types};

const MAGIC: &[u8] = b"k8s\x00";

/// What Go's protobuf reader says of a body that ends inside a field.
const UNEXPECTED_EOF: &str = "unexpected EOF";

/// How deep messages may nest (a schema's `properties` in `properties` ...): deeper
/// bodies are refused rather than read on an ever deeper stack.
const MAX_DEPTH: usize = 100;

/// One field as read from the wire.
#[derive(Debug, Clone)]
enum Wire<'a> {
    Varint(u64),
    Fixed64([u8; 8]),
    Fixed32([u8; 4]),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], i: &mut usize) -> Result<u64, String> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let c = *b.get(*i).ok_or(UNEXPECTED_EOF)?;
        *i += 1;
        out |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Ok(out);
        }
    }
    Err("varint too long".into())
}

/// Every field of a message: its number and value, in wire order.
fn fields(b: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let key = varint(b, &mut i)?;
        let num = u32::try_from(key >> 3).map_err(|_| "field number out of range")?;
        let value = match key & 7 {
            0 => Wire::Varint(varint(b, &mut i)?),
            1 => {
                let s = b.get(i..i + 8).ok_or(UNEXPECTED_EOF)?;
                i += 8;
                Wire::Fixed64(s.try_into().map_err(|_| "fixed64")?)
            }
            2 => {
                let len = usize::try_from(varint(b, &mut i)?).map_err(|_| "length")?;
                let end = i.checked_add(len).ok_or(UNEXPECTED_EOF)?;
                let s = b.get(i..end).ok_or(UNEXPECTED_EOF)?;
                i += len;
                Wire::Bytes(s)
            }
            5 => {
                let s = b.get(i..i + 4).ok_or(UNEXPECTED_EOF)?;
                i += 4;
                Wire::Fixed32(s.try_into().map_err(|_| "fixed32")?)
            }
            w => return Err(format!("unsupported wire type {w}")),
        };
        out.push((num, value));
    }
    Ok(out)
}

fn bytes_of<'a>(w: &Wire<'a>) -> &'a [u8] {
    match w {
        Wire::Bytes(b) => b,
        _ => &[],
    }
}

fn int_of(w: &Wire<'_>) -> i64 {
    match w {
        Wire::Varint(v) => *v as i64,
        Wire::Fixed64(b) => i64::from_le_bytes(*b),
        Wire::Fixed32(b) => i64::from(i32::from_le_bytes(*b)),
        Wire::Bytes(_) => 0,
    }
}

/// Why a protobuf body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The envelope itself is unreadable: the type the body claims is not known.
    Envelope(String),
    /// The envelope names `kind` in `api_version`, whose message is unreadable or whose
    /// kind is not one the fake knows.
    Object {
        /// The `apiVersion` the envelope names.
        api_version: String,
        /// The `kind` the envelope names.
        kind: String,
        /// What is wrong with it.
        message: String,
    },
}

/// The type and object of a protobuf body: `(apiVersion, kind, message bytes)`.
fn envelope(body: &[u8]) -> Result<(String, String, &[u8]), String> {
    let rest = body.strip_prefix(MAGIC).ok_or(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
    )?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (num, w) in fields(rest)? {
        match num {
            1 => {
                for (n, v) in fields(bytes_of(&w))? {
                    let text = String::from_utf8_lossy(bytes_of(&v)).into_owned();
                    match n {
                        1 => api_version = text,
                        2 => kind = text,
                        _ => {}
                    }
                }
            }
            2 => raw = bytes_of(&w),
            _ => {}
        }
    }
    Ok((api_version, kind, raw))
}

/// Reads a protobuf body of a built-in kind as its JSON object (with `apiVersion` and
/// `kind` from the envelope). `DeleteOptions` is read under any `apiVersion`.
pub fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    let (api_version, kind, raw) = envelope(body).map_err(DecodeError::Envelope)?;
    let failed = |message: String| DecodeError::Object {
        api_version: api_version.clone(),
        kind: kind.clone(),
        message,
    };
    let ty = if kind == "DeleteOptions" {
        types().kind("meta", "DeleteOptions")
    } else {
        types().kind(&api_version, &kind)
    }
    .ok_or_else(|| {
        failed(format!(
            "no kind \"{kind}\" is registered for version \"{api_version}\""
        ))
    })?;
    let mut obj = message(ty, raw, 0).map_err(failed)?;
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

/// The wire values of one JSON field: its own number, or through embedded structs.
fn values_at<'a>(all: &[(u32, Wire<'a>)], path: &[u32]) -> Result<Vec<Wire<'a>>, String> {
    let [first, rest @ ..] = path else {
        return Ok(Vec::new());
    };
    let here: Vec<Wire<'a>> = all
        .iter()
        .filter(|(n, _)| n == first)
        .map(|(_, w)| w.clone())
        .collect();
    if rest.is_empty() {
        return Ok(here);
    }
    let mut out = Vec::new();
    for w in here {
        out.extend(values_at(&fields(bytes_of(&w))?, rest)?);
    }
    Ok(out)
}

fn message(ty: &Type, raw: &[u8], depth: usize) -> Result<Map<String, Value>, String> {
    if depth > MAX_DEPTH {
        return Err("max depth exceeded".into());
    }
    let all = fields(raw)?;
    let mut out = Map::new();
    for (name, f) in &ty.fields {
        if f.proto.is_empty() {
            continue;
        }
        let wires = values_at(&all, &f.proto)?;
        if let Some(v) = field_value(f, &wires, depth)? {
            out.insert(name.clone(), v);
        }
    }
    Ok(out)
}

/// A field's JSON value, or `None` when Go's encoder would leave it out.
fn field_value(f: &Field, wires: &[Wire<'_>], depth: usize) -> Result<Option<Value>, String> {
    match &f.kind {
        Kind::List(item) => {
            if wires.is_empty() {
                return Ok(f.keep_zero.then_some(Value::Null));
            }
            let mut out = Vec::new();
            for w in wires {
                match (w, packed(&item.kind)) {
                    (Wire::Bytes(b), true) => {
                        let mut i = 0;
                        while i < b.len() {
                            out.push(scalar(&item.kind, &Wire::Varint(varint(b, &mut i)?))?);
                        }
                    }
                    _ => out.push(element(item, w, depth)?),
                }
            }
            Ok(Some(Value::Array(out)))
        }
        Kind::Map(values) => {
            if wires.is_empty() {
                return Ok(f.keep_zero.then_some(Value::Null));
            }
            let mut out = Map::new();
            for w in wires {
                let entry = fields(bytes_of(w))?;
                let key = entry
                    .iter()
                    .find(|(n, _)| *n == 1)
                    .map(|(_, k)| String::from_utf8_lossy(bytes_of(k)).into_owned())
                    .unwrap_or_default();
                let value = match entry.iter().find(|(n, _)| *n == 2) {
                    Some((_, v)) => element(values, v, depth)?,
                    None => element(values, &Wire::Bytes(&[]), depth)?,
                };
                out.insert(key, value);
            }
            Ok(Some(Value::Object(out)))
        }
        Kind::Ref(name) => {
            let ty = types()
                .get(name)
                .ok_or_else(|| format!("unknown type {name}"))?;
            match wires.last() {
                Some(w) => Ok(Some(Value::Object(message(ty, bytes_of(w), depth + 1)?))),
                None if f.pointer => Ok(None),
                // A non-pointer struct is always there, `{}` at least.
                None if f.default == Some(json!({})) || f.keep_zero => {
                    Ok(Some(Value::Object(message(ty, &[], depth + 1)?)))
                }
                None => Ok(None),
            }
        }
        Kind::Time | Kind::MicroTime | Kind::Quantity | Kind::IntStr | Kind::Any => {
            match wires.last() {
                Some(w) => special(&f.kind, bytes_of(w)),
                None => Ok(None),
            }
        }
        _ => {
            let present = wires.last();
            if f.pointer {
                return present.map(|w| scalar(&f.kind, w)).transpose();
            }
            let value = match present {
                Some(w) => scalar(&f.kind, w)?,
                None => zero(&f.kind),
            };
            let is_zero = value == zero(&f.kind);
            Ok((!is_zero || f.keep_zero).then_some(value))
        }
    }
}

fn packed(kind: &Kind) -> bool {
    matches!(kind, Kind::Int32 | Kind::Int64 | Kind::Bool)
}

/// A list item or map value: always written, zero or not.
fn element(f: &Field, w: &Wire<'_>, depth: usize) -> Result<Value, String> {
    match &f.kind {
        Kind::Ref(name) => {
            let ty = types()
                .get(name)
                .ok_or_else(|| format!("unknown type {name}"))?;
            Ok(Value::Object(message(ty, bytes_of(w), depth + 1)?))
        }
        Kind::Time | Kind::MicroTime | Kind::Quantity | Kind::IntStr | Kind::Any => {
            Ok(special(&f.kind, bytes_of(w))?.unwrap_or(Value::Null))
        }
        Kind::List(item) => Ok(Value::Array(vec![element(item, w, depth)?])),
        kind => scalar(kind, w),
    }
}

fn zero(kind: &Kind) -> Value {
    match kind {
        Kind::Int32 | Kind::Int64 => json!(0),
        Kind::Float64 => json!(0.0),
        Kind::Bool => json!(false),
        _ => json!(""),
    }
}

fn scalar(kind: &Kind, w: &Wire<'_>) -> Result<Value, String> {
    Ok(match kind {
        Kind::String => Value::String(
            String::from_utf8(bytes_of(w).to_vec()).map_err(|_| "a string is not UTF-8")?,
        ),
        Kind::Bytes => Value::String(crate::rules::base64::base64_encode(bytes_of(w))),
        Kind::Int32 => json!(int_of(w) as i32),
        Kind::Int64 => json!(int_of(w)),
        Kind::Bool => json!(int_of(w) != 0),
        Kind::Float64 => match w {
            Wire::Fixed64(b) => json!(f64::from_le_bytes(*b)),
            _ => json!(0.0),
        },
        _ => Value::Null,
    })
}

/// The types with their own JSON form: times, quantities, int-or-string, raw JSON.
fn special(kind: &Kind, raw: &[u8]) -> Result<Option<Value>, String> {
    let all = fields(raw)?;
    let get = |n: u32| all.iter().rev().find(|(m, _)| *m == n).map(|(_, w)| w);
    Ok(match kind {
        Kind::Time | Kind::MicroTime => {
            let seconds = get(1).map_or(0, int_of);
            let nanos = get(2).map_or(0, int_of);
            if seconds == 0 && nanos == 0 {
                return Ok(None);
            }
            let t = jiff::Timestamp::new(seconds, nanos as i32).map_err(|e| e.to_string())?;
            Some(json!(if matches!(kind, Kind::Time) {
                t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
            } else {
                t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
            }))
        }
        Kind::Quantity => Some(json!(
            get(1)
                .map(|w| String::from_utf8_lossy(bytes_of(w)).into_owned())
                .unwrap_or_default()
        )),
        Kind::IntStr => Some(if get(1).map_or(0, int_of) == 1 {
            json!(
                get(3)
                    .map(|w| String::from_utf8_lossy(bytes_of(w)).into_owned())
                    .unwrap_or_default()
            )
        } else {
            json!(get(2).map_or(0, int_of) as i32)
        }),
        _ => {
            let raw = get(1).map(bytes_of).unwrap_or_default();
            if raw.is_empty() {
                None
            } else {
                Some(serde_json::from_slice(raw).map_err(|e| e.to_string())?)
            }
        }
    })
}
