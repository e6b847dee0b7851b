//! Value validations: what a junctor (`allOf`, `anyOf`, `oneOf`, `not`) may not say
//! (types, defaults, descriptions, extensions), and the properties and items it names,
//! which the structural part of the schema must also have.

use serde_json::{Value, json};

use super::{JUNCTORS, Obj, sub};
use crate::field::FieldError;

/// What a junctor (`allOf`, `anyOf`, `oneOf`, `not`) may not say, and the properties it
/// names that the structural part must also have.
pub(super) fn value_validations(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let int_or_string_pair = |list: &Value| {
        list.as_array().is_some_and(|l| {
            l.len() == 2 && l[0] == json!({"type": "integer"}) && l[1] == json!({"type": "string"})
        })
    };
    for j in JUNCTORS {
        if let Some(list) = s.get(j).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                let path = format!("{n}.{j}[{i}]");
                let exempt = (j == "anyOf" && int_or_string_pair(&s[j]))
                    || (j == "allOf" && i == 0 && v.get("anyOf").is_some_and(int_or_string_pair));
                if let Some(v) = v.as_object() {
                    nested_value_validation(v, &path, exempt, errs);
                    completeness(s, v, n, &path, errs);
                }
            }
        }
    }
    if let Some(not) = sub(s, "not") {
        nested_value_validation(not, &format!("{n}.not"), false, errs);
        completeness(s, not, n, &format!("{n}.not"), errs);
    }
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            if let Some(v) = v.as_object() {
                value_validations(v, &format!("{n}.properties[{k}]"), errs);
            }
        }
    }
    if let Some(a) = sub(s, "additionalProperties") {
        value_validations(a, &format!("{n}.additionalProperties"), errs);
    }
    if let Some(i) = sub(s, "items") {
        value_validations(i, &format!("{n}.items"), errs);
    }
}

/// The keywords a junctor at `n` may not set to be structural, recursively;
/// `int_or_string` when it is one of the int-or-string pair (whose `type` is allowed).
pub(super) fn nested_value_validation(
    v: &Obj,
    n: &str,
    int_or_string: bool,
    errs: &mut Vec<FieldError>,
) {
    let rules: [(&str, &str); 13] = [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        ),
        ("x-kubernetes-validations", "must be empty to be structural"),
    ];
    for (key, why) in rules {
        let Some(value) = v.get(key) else { continue };
        let set = match value {
            Value::Bool(b) => *b,
            Value::Null => false,
            Value::Array(a) => !a.is_empty(),
            Value::String(s) => !s.is_empty(),
            _ => true,
        };
        if set && !(key == "type" && int_or_string) {
            errs.push(FieldError::forbidden(format!("{n}.{key}"), why));
        }
    }
    if let Some(props) = sub(v, "properties") {
        if props.contains_key("metadata") {
            errs.push(FieldError::forbidden(
                format!("{n}.properties[metadata]"),
                "must not be specified in a nested context",
            ));
        }
        for (k, child) in props {
            if let Some(child) = child.as_object() {
                nested_value_validation(child, &format!("{n}.properties[{k}]"), false, errs);
            }
        }
    }
    if let Some(i) = sub(v, "items") {
        nested_value_validation(i, &format!("{n}.items"), false, errs);
    }
    for j in JUNCTORS {
        if let Some(list) = v.get(j).and_then(Value::as_array) {
            for (i, x) in list.iter().enumerate() {
                if let Some(x) = x.as_object() {
                    nested_value_validation(x, &format!("{n}.{j}[{i}]"), false, errs);
                }
            }
        }
    }
    if let Some(not) = sub(v, "not") {
        nested_value_validation(not, &format!("{n}.not"), false, errs);
    }
}

/// Every property or items a junctor mentions must exist in the structural schema.
pub(super) fn completeness(
    structural: &Obj,
    junctor: &Obj,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(props) = sub(junctor, "properties") {
        for (k, v) in props {
            let sp = format!("{s_path}.properties[{k}]");
            let vp = format!("{v_path}.properties[{k}]");
            match sub(structural, "properties").and_then(|p| sub(p, k)) {
                Some(inner) => {
                    if let Some(v) = v.as_object() {
                        completeness(inner, v, &sp, &vp, errs);
                    }
                }
                None => errs.push(FieldError::required(
                    sp,
                    format!("because it is defined in {vp}"),
                )),
            }
        }
    }
    if let Some(items) = sub(junctor, "items") {
        let sp = format!("{s_path}.items");
        let vp = format!("{v_path}.items");
        match sub(structural, "items") {
            Some(inner) => completeness(inner, items, &sp, &vp, errs),
            None => errs.push(FieldError::required(
                sp,
                format!("because it is defined in {vp}"),
            )),
        }
    }
}
