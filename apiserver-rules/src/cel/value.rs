//! JSON values as CEL sees them through a structural schema: integers as `int`, numbers as
//! `double`, `format: byte` as bytes, `date-time` and `date` as timestamps, `duration` as a
//! duration, object properties under their escaped names (`namespace` is `__namespace__`).

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::Value as Cel;
use kube_cel::cel::functions;
use kube_cel::cel::objects::{Key, Map};
use serde_json::Value;

use super::node::Node;

/// `value` as CEL sees it at `node` (`None`: a schemaless part, converted by its JSON type).
pub(crate) fn to_cel(node: Option<&Node>, value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if node.is_some_and(|n| n.ty == "number") {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => string(node, s),
        Value::Array(items) => {
            let item = node.and_then(|n| n.items.as_deref());
            Cel::List(Arc::new(items.iter().map(|v| to_cel(item, v)).collect()))
        }
        Value::Object(map) => {
            let mut out: HashMap<Key, Cel> = HashMap::with_capacity(map.len());
            match node {
                Some(n) if !n.props.is_empty() || n.root || n.embedded => {
                    for (k, v) in map {
                        if let Some(sub) = n.props.get(k) {
                            if let Some(name) = escape(k) {
                                out.insert(Key::from(name), to_cel(Some(sub), v));
                            }
                        } else if (n.root || n.embedded) && k == "metadata" {
                            out.insert(Key::from("metadata"), metadata(v));
                        } else if (n.root || n.embedded) && (k == "apiVersion" || k == "kind") {
                            out.insert(Key::from(k.as_str()), to_cel(None, v));
                        } else if n.preserve
                            && let Some(name) = escape(k)
                        {
                            out.insert(Key::from(name), to_cel(None, v));
                        }
                    }
                }
                Some(n) if n.values.is_some() => {
                    let values = n.values.as_deref();
                    for (k, v) in map {
                        out.insert(Key::from(k.as_str()), to_cel(values, v));
                    }
                }
                _ => {
                    for (k, v) in map {
                        out.insert(Key::from(k.as_str()), to_cel(None, v));
                    }
                }
            }
            Cel::Map(Map { map: Arc::new(out) })
        }
    }
}

/// A string by its format; a value the format cannot parse stays a string (schema
/// validation has refused it already).
fn string(node: Option<&Node>, s: &str) -> Cel {
    let format = node.map(|n| n.format.as_str()).unwrap_or("");
    if node.is_some_and(|n| n.int_or_string) {
        return Cel::String(Arc::new(s.to_owned()));
    }
    match format {
        "byte" => {
            if let Ok(bytes) = crate::base64::base64_decode(s) {
                return Cel::Bytes(Arc::new(bytes));
            }
        }
        "date-time" => {
            if let Ok(t) = functions::timestamp(Arc::new(s.to_owned())) {
                return t;
            }
        }
        "date" => {
            if let Ok(t) = functions::timestamp(Arc::new(format!("{s}T00:00:00Z"))) {
                return t;
            }
        }
        "duration" => {
            if let Ok(d) = functions::duration(Arc::new(s.to_owned())) {
                return d;
            }
        }
        _ => {}
    }
    Cel::String(Arc::new(s.to_owned()))
}

/// The object metadata rules may read at a resource's root or an embedded resource:
/// `name` and `generateName`.
fn metadata(value: &Value) -> Cel {
    let mut out: HashMap<Key, Cel> = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(s) = value.get(key).and_then(Value::as_str) {
            out.insert(Key::from(key), Cel::String(Arc::new(s.to_owned())));
        }
    }
    Cel::Map(Map { map: Arc::new(out) })
}

const RESERVED: [&str; 22] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
    "",
];

/// A property name as rules reach it (`namespace` -> `__namespace__`, `a-b` -> `a__dash__b`,
/// `x.y` -> `x__dot__y`, `a__b` -> `a__underscores__b`); `None` when no rule can reach it
/// (a leading digit or a character other than letters, digits, `_`, `-`, `.`, `/`).
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
    {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn property_names_escape_as_kubernetes_does() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(
            escape("a-b.c/d").as_deref(),
            Some("a__dash__b__dot__c__slash__d")
        );
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("plain_name").as_deref(), Some("plain_name"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
    }
}
