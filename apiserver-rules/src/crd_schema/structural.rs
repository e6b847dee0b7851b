//! The structural-schema invariants: keywords a structural schema cannot hold, what the
//! root may say with the status subresource, types everywhere, the root's and embedded
//! resources' `apiVersion`, `kind` and `metadata`, int-or-string, and RE2 patterns.

use serde_json::{Value, json};

use super::{Obj, children, flag, sub, text};
use crate::field::FieldError;

/// Whether `v` or a sub-schema holds a keyword no structural schema has (`$ref`,
/// `patternProperties`, an `items` list, ...).
pub(super) fn has_unstructural_keyword(v: &Value) -> bool {
    let Some(s) = v.as_object() else {
        return false;
    };
    if [
        "$schema",
        "id",
        "$ref",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
    ]
    .iter()
    .any(|k| s.contains_key(*k))
        || s.get("items").is_some_and(Value::is_array)
    {
        return true;
    }
    children(s).iter().any(|(_, c)| has_unstructural_keyword(c))
}

const ROOT_ALLOWED: [&str; 22] = [
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];

/// With the status subresource, the root may only say what `ROOT_ALLOWED` lists.
pub(super) fn root_restrictions(s: &Obj, p: &str, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    if !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid_str(
            format!("{p}.type"),
            ty,
            "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
        ));
        return;
    }
    let extra = s
        .iter()
        .any(|(k, v)| !(ROOT_ALLOWED.contains(&k.as_str()) || v.is_null() || v == &json!(false)));
    if extra {
        errs.push(FieldError::invalid(
            p,
            &Value::Object(s.clone()),
            "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled",
        ));
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Root,
    Item,
    Field,
}

/// The structural invariants: every node has a type (unless it preserves unknown fields or
/// is int-or-string), arrays have items, the root is an object whose `metadata` only
/// restricts the name, embedded resources are objects, patterns are RE2.
pub(super) fn invariants(s: &Obj, n: &str, level: Level, errs: &mut Vec<FieldError>) {
    let ty = text(s, "type");
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    let int_or_string = flag(s, "x-kubernetes-int-or-string");
    let preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    if ty == "array" && !s.contains_key("items") {
        errs.push(FieldError::required(
            format!("{n}.items"),
            "must be specified",
        ));
    }
    if level == Level::Root && s.contains_key("additionalProperties") {
        errs.push(FieldError::forbidden(
            format!("{n}.additionalProperties"),
            "must not be used at the root",
        ));
    }
    if embedded {
        let why = "must be object if x-kubernetes-embedded-resource is true";
        if ty.is_empty() {
            errs.push(FieldError::required(format!("{n}.type"), why));
        } else if ty != "object" {
            errs.push(FieldError::invalid_str(format!("{n}.type"), ty, why));
        }
        if s.contains_key("additionalProperties") {
            errs.push(FieldError::forbidden(
                format!("{n}.additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            ));
        }
        if !s.contains_key("properties") && !preserve {
            errs.push(FieldError::required(
                format!("{n}.properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ));
        }
    } else if ty.is_empty() && !int_or_string && !preserve {
        let why = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{n}.type"), why));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid_str(
            format!("{n}.type"),
            ty,
            "must be object at the root",
        ));
    }
    if level == Level::Root || embedded {
        resource_meta_types(s, n, errs);
    }
    if level == Level::Root
        && let Some(meta) = sub(s, "properties").and_then(|p| sub(p, "metadata"))
        && !only_names(meta)
    {
        errs.push(FieldError::forbidden(
            format!("{n}.properties[metadata]"),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
    if int_or_string {
        if preserve {
            errs.push(FieldError::invalid(
                format!("{n}.x-kubernetes-preserve-unknown-fields"),
                &json!(true),
                "must be false if x-kubernetes-int-or-string is true",
            ));
        }
        if embedded {
            errs.push(FieldError::invalid(
                format!("{n}.x-kubernetes-embedded-resource"),
                &json!(true),
                "must be false if x-kubernetes-int-or-string is true",
            ));
        }
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str)
        && let Err(why) = re2(pattern)
    {
        errs.push(FieldError::invalid_str(
            format!("{n}.pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {why}"),
        ));
    }
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            if let Some(v) = v.as_object() {
                invariants(v, &format!("{n}.properties[{k}]"), Level::Field, errs);
            }
        }
    }
    if let Some(a) = sub(s, "additionalProperties") {
        invariants(a, &format!("{n}.additionalProperties"), Level::Field, errs);
    }
    if let Some(i) = sub(s, "items") {
        invariants(i, &format!("{n}.items"), Level::Item, errs);
    }
}

/// At the root and in embedded resources, `apiVersion` and `kind` are strings and
/// `metadata` an object.
pub(super) fn resource_meta_types(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let Some(props) = sub(s, "properties") else {
        return;
    };
    for (key, want) in [
        ("kind", "string"),
        ("apiVersion", "string"),
        ("metadata", "object"),
    ] {
        if let Some(p) = sub(props, key) {
            let ty = text(p, "type");
            if ty != want {
                errs.push(FieldError::invalid_str(
                    format!("{n}.properties[{key}].type"),
                    ty,
                    format!("must be {want}"),
                ));
            }
        }
    }
}

/// The root `metadata` may only have a type and properties `name` and `generateName`.
pub(super) fn only_names(meta: &Obj) -> bool {
    meta.iter().all(|(k, v)| match k.as_str() {
        "type" => true,
        "properties" => v
            .as_object()
            .is_some_and(|p| !p.is_empty() && p.keys().all(|k| k == "name" || k == "generateName")),
        _ => false,
    })
}

/// Go's RE2 rejects look-around and back-references that Rust's `regex` also rejects;
/// the message is Go's where the construct is a common one.
pub fn re2(pattern: &str) -> Result<(), String> {
    for perl in ["(?!", "(?=", "(?<=", "(?<!"] {
        if pattern.contains(perl) {
            return Err(format!(
                "error parsing regexp: invalid or unsupported Perl syntax: `{perl}`"
            ));
        }
    }
    regex::Regex::new(pattern).map(|_| ()).map_err(|e| {
        format!(
            "error parsing regexp: {}",
            e.to_string().lines().last().unwrap_or("")
        )
    })
}
