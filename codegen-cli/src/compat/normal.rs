//! What kube-apiserver (apiextensions-apiserver, kube-openapi's validators and
//! structured-merge-diff, as of Kubernetes 1.36) treats as the same schema. Both schemas are
//! brought to one form before they are compared, so that a difference no client, stored
//! object or server-side apply can tell is never reported:
//!
//! - documentation: `description`, `title`, `example`, `externalDocs`;
//! - a value that means the same as no value: `false` flags, empty `required`, `enum`,
//!   `pattern`, `format`, list-map keys, rules and properties; `minLength`, `minItems` and
//!   `minProperties` of 0; `exclusiveMinimum`/`exclusiveMaximum` without their bound;
//!   `multipleOf: 1` on integers; `x-kubernetes-list-type: atomic` (what an unset list type
//!   means) and `x-kubernetes-map-type: granular` (likewise for maps);
//! - order and spelling that do not count: the order of `enum` values, `required` names,
//!   list-map keys and `anyOf`/`oneOf`/`allOf` subschemas; `1` and `1.0`; whitespace and
//!   comments in a CEL rule; a rule's `message` and `messageExpression` (only shown once it
//!   failed); `reason`, `fieldPath` and `optionalOldSelf` at their defaults;
//! - the `anyOf` of integer and string that `x-kubernetes-int-or-string` allows beside it;
//! - keywords that do not apply to the node's type (`maxLength` on an integer), and formats
//!   kube-apiserver does not check: the effective format of a node is its format without
//!   dashes (`date-time` is `datetime`), and none when the type has no such format,
//!   kube-apiserver does not know it, or it accepts every value (`password`, `int64`,
//!   `double`).
//!
//! [`structural`] keeps only what pruning and decoding read (types, properties, items, map
//! values, preserved unknown fields, embedded resources), for the question whether objects
//! stored in one version read unchanged as another.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// String formats kube-apiserver checks, as written (dashes are ignored when comparing).
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "date",
    "duration",
    "date-time",
    "k8s-short-name",
    "k8s-long-name",
];

/// Keywords that only apply to values of some types: (keyword, the types it applies to).
const TYPED_KEYWORDS: &[(&str, &[&str])] = &[
    ("maxLength", &["string"]),
    ("minLength", &["string"]),
    ("pattern", &["string"]),
    ("minimum", &["integer", "number"]),
    ("maximum", &["integer", "number"]),
    ("exclusiveMinimum", &["integer", "number"]),
    ("exclusiveMaximum", &["integer", "number"]),
    ("multipleOf", &["integer", "number"]),
    ("maxItems", &["array"]),
    ("minItems", &["array"]),
    ("uniqueItems", &["array"]),
    ("maxProperties", &["object"]),
    ("minProperties", &["object"]),
];

/// `schema` with every difference kube-apiserver does not make brought to one form, at
/// every depth.
pub(super) fn schema(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let ty = obj.get("type").and_then(Value::as_str);
    let int_or_string = is_true(obj.get("x-kubernetes-int-or-string"));
    // Whether a keyword for values of these types can apply here.
    let applies = |types: &[&str]| match ty {
        None => true,
        Some(t) => {
            types.contains(&t)
                || (int_or_string && (types.contains(&"string") || types.contains(&"integer")))
        }
    };
    let mut out = Map::new();
    for (key, value) in obj {
        let kept = match key.as_str() {
            "description" | "title" | "example" | "externalDocs" => None,
            "nullable"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string"
            | "x-kubernetes-preserve-unknown-fields"
            | "uniqueItems" => is_true(Some(value)).then_some(Value::Bool(true)),
            "exclusiveMinimum" | "exclusiveMaximum" => {
                let bound = if key == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                (is_true(Some(value)) && obj.get(bound).is_some_and(Value::is_number))
                    .then_some(Value::Bool(true))
            }
            "minLength" | "minItems" | "minProperties" => {
                (value.as_f64() != Some(0.0)).then(|| canon(value))
            }
            "multipleOf" => {
                (!(ty == Some("integer") && value.as_f64() == Some(1.0))).then(|| canon(value))
            }
            "minimum" | "maximum" | "maxLength" | "maxItems" | "maxProperties" | "default" => {
                Some(canon(value))
            }
            "required" | "x-kubernetes-list-map-keys" => {
                let names: BTreeSet<&str> = crate::json::strings(Some(value)).collect();
                (!names.is_empty()).then(|| names.into_iter().collect())
            }
            "enum" => enum_values(value),
            "pattern" => (value.as_str() != Some("")).then(|| value.clone()),
            "format" => effective_format(ty, int_or_string, value.as_str().unwrap_or(""))
                .map(|f| Value::String(f.to_owned())),
            "x-kubernetes-list-type" => (value.as_str() != Some("atomic")).then(|| value.clone()),
            "x-kubernetes-map-type" => (value.as_str() != Some("granular")).then(|| value.clone()),
            "x-kubernetes-validations" => {
                let rules: Vec<Value> = value
                    .as_array()
                    .map(|rules| rules.iter().filter_map(rule).collect())
                    .unwrap_or_default();
                (!rules.is_empty()).then_some(Value::Array(rules))
            }
            "properties" => value.as_object().and_then(|props| {
                (!props.is_empty()).then(|| {
                    Value::Object(
                        props
                            .iter()
                            .map(|(name, s)| (name.clone(), self::schema(s)))
                            .collect(),
                    )
                })
            }),
            "items" | "additionalProperties" | "not" => Some(self::schema(value)),
            "anyOf" | "oneOf" | "allOf" => {
                let mut list: Vec<Value> = value
                    .as_array()
                    .map(|a| a.iter().map(self::schema).collect())
                    .unwrap_or_default();
                list.sort_by_cached_key(|s| crate::json::sorted(&comparable(s)).to_string());
                (!list.is_empty()).then_some(Value::Array(list))
            }
            _ => Some(value.clone()),
        };
        let applicable = TYPED_KEYWORDS
            .iter()
            .find(|(k, _)| k == key)
            .is_none_or(|(_, types)| applies(types));
        if let Some(kept) = kept.filter(|_| applicable) {
            out.insert(key.clone(), kept);
        }
    }
    if int_or_string {
        // `anyOf: [{type: integer}, {type: string}]`, or that inside `allOf`, says what
        // `x-kubernetes-int-or-string` already says.
        if out.get("anyOf").is_some_and(is_int_or_string_any_of) {
            out.remove("anyOf");
        }
        let all_of_pattern = out.get("allOf").and_then(Value::as_array).is_some_and(|a| {
            a.len() == 1
                && a[0].as_object().is_some_and(|o| {
                    o.len() == 1 && o.get("anyOf").is_some_and(is_int_or_string_any_of)
                })
        });
        if all_of_pattern {
            out.remove("allOf");
        }
    }
    Value::Object(out)
}

/// The part of a normalized schema that pruning and decoding read: the types, properties,
/// list items, map values, `x-kubernetes-preserve-unknown-fields`,
/// `x-kubernetes-embedded-resource` and `x-kubernetes-int-or-string`. Objects stored as one
/// version read unchanged as another (conversion `None`) when this part is the same.
pub(super) fn structural(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in obj {
        let kept = match key.as_str() {
            "type"
            | "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string" => value.clone(),
            "items" | "additionalProperties" => structural(value),
            "properties" => Value::Object(
                value
                    .as_object()
                    .map(|props| {
                        props
                            .iter()
                            .map(|(name, s)| (name.clone(), structural(s)))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => continue,
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
}

/// The format kube-apiserver checks for `format` on a node of type `ty`: none for a format
/// it does not know, one that accepts every value, or one of another type.
fn effective_format(ty: Option<&str>, int_or_string: bool, format: &str) -> Option<&'static str> {
    let bare = format.replace('-', "");
    let known = |list: &[&'static str]| list.iter().copied().find(|f| f.replace('-', "") == bare);
    match ty {
        _ if int_or_string => known(STRING_FORMATS),
        None | Some("string") => known(STRING_FORMATS),
        // `int64` and `double` check what the type already checks.
        Some("integer") => known(&["int32"]),
        Some("number") => known(&["float"]),
        _ => None,
    }
}

fn is_int_or_string_any_of(v: &Value) -> bool {
    let Some(list) = v.as_array() else {
        return false;
    };
    let types: BTreeSet<&str> = list
        .iter()
        .filter_map(|s| {
            let o = s.as_object()?;
            (o.len() == 1).then_some(())?;
            o.get("type").and_then(Value::as_str)
        })
        .collect();
    list.len() == 2 && types == BTreeSet::from(["integer", "string"])
}

fn is_true(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool) == Some(true)
}

/// The values of an `enum`, numbers in one form, sorted and without repeats; none for an
/// empty one.
fn enum_values(value: &Value) -> Option<Value> {
    let mut values: Vec<Value> = value
        .as_array()
        .map(|a| a.iter().map(canon).collect())
        .unwrap_or_default();
    values.sort_by_cached_key(|v| crate::json::sorted(v).to_string());
    values.dedup();
    (!values.is_empty()).then_some(Value::Array(values))
}

/// `value` with every whole number written as an integer (`1.0` as `1`), at every depth.
pub(super) fn canon(value: &Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
            // The bound above keeps the value exact as an integer.
            .map_or_else(|| value.clone(), |f| Value::from(f as i64)),
        Value::Array(items) => Value::Array(items.iter().map(canon).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), canon(v))).collect())
        }
        other => other.clone(),
    }
}

/// One `x-kubernetes-validations` entry as it acts: the rule's text without comments and
/// with whitespace runs as one space, and `reason`, `fieldPath` and `optionalOldSelf` when
/// not at their defaults; none for an empty rule, which kube-apiserver skips. Two rules are
/// the same when their [`cel_text`] is.
fn rule(entry: &Value) -> Option<Value> {
    let text = cel(
        entry.get("rule").and_then(Value::as_str).unwrap_or(""),
        true,
    );
    if text.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("rule".to_owned(), Value::String(text));
    if let Some(reason) = entry
        .get("reason")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty() && *r != "FieldValueInvalid")
    {
        out.insert("reason".to_owned(), Value::String(reason.to_owned()));
    }
    if let Some(path) = entry
        .get("fieldPath")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    {
        out.insert("fieldPath".to_owned(), Value::String(path.to_owned()));
    }
    if is_true(entry.get("optionalOldSelf")) {
        out.insert("optionalOldSelf".to_owned(), Value::Bool(true));
    }
    Some(Value::Object(out))
}

/// A normalized schema with each rule's text as [`cel_text`] gives it: two schemas that act
/// the same are equal in this form.
pub(super) fn comparable(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("x-kubernetes-validations", Value::Array(rules)) => Value::Array(
                            rules
                                .iter()
                                .map(|r| {
                                    let mut r = r.clone();
                                    if let Some(text) = r.get("rule").and_then(Value::as_str) {
                                        r["rule"] = Value::String(cel_text(text));
                                    }
                                    r
                                })
                                .collect(),
                        ),
                        // Defaults and enum values are data, not schemas.
                        ("default" | "enum", _) => value.clone(),
                        _ => comparable(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

/// A CEL expression with its comments removed and whitespace kept only where it separates
/// two words (`a in b`), outside string literals: two texts that give the same CEL tokens
/// give the same text.
pub(super) fn cel_text(rule: &str) -> String {
    cel(rule, false)
}

/// A CEL expression without comments, with each whitespace run (outside string literals)
/// as one space when `spaced`, or, when not, only where it separates two words.
fn cel(rule: &str, spaced: bool) -> String {
    let chars: Vec<char> = rule.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut pending_space = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            pending_space = true;
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            pending_space = true;
            continue;
        }
        let last = out.chars().last();
        if pending_space && last.is_some() && (spaced || (last.is_some_and(word) && word(c))) {
            out.push(' ');
        }
        pending_space = false;
        if c == '"' || c == '\'' {
            let end = string_end(&chars, i);
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The index just after the string literal that starts with the quote at `start` (`'a'`,
/// `"a"`, `'''a'''`, `"""a"""`; the prefix of a raw or bytes literal is read as a word
/// before it).
fn string_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == quote {
            if !triple {
                return i + 1;
            }
            if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                return i + 3;
            }
        }
        i += 1;
    }
    chars.len()
}

/// Whether a rule (as [`cel_text`] gives it) reads `oldSelf`: a transition rule, which
/// kube-apiserver never ratchets.
pub(super) fn uses_old_self(rule: &str) -> bool {
    let chars: Vec<char> = rule.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            i = string_end(&chars, i);
            continue;
        }
        if word(c) {
            let start = i;
            while i < chars.len() && word(chars[i]) {
                i += 1;
            }
            let token: String = chars[start..i].iter().collect();
            // `x.oldSelf` is a field of that name, not the variable.
            if token == "oldSelf" && (start == 0 || chars[start - 1] != '.') {
                return true;
            }
            continue;
        }
        i += 1;
    }
    false
}
