//! The keyword rules of every node, walking the whole schema: known types, keywords the
//! server does not support, `uniqueItems`, `additionalProperties` with `properties`,
//! map types, and no defaults or embedded resources in the root's resource meta; list
//! types and rule entries are checked here too, by their own files.

use serde_json::{Value, json};

use super::{Obj, TYPES, children, flag, list_types, rules, sub, text};
use crate::field::FieldError;

/// Which top-level resource meta a node sits under, where defaults are not allowed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Meta {
    None,
    Top(&'static str),
}

/// The keyword rules of every node: types, forbidden keywords, list and map types, CEL
/// rule syntax.
pub(super) fn keywords(s: &Obj, n: &str, meta: Meta, errs: &mut Vec<FieldError>) {
    if let Some(ty) = s.get("type").and_then(Value::as_str) {
        if !TYPES.contains(&ty) {
            errs.push(FieldError::not_supported(
                format!("{n}.type"),
                &json!(ty),
                &TYPES,
            ));
        }
        if ty == "null" {
            errs.push(FieldError::forbidden(
                format!("{n}.type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
    }
    if s.contains_key("default")
        && let Meta::Top(which) = meta
    {
        errs.push(FieldError::forbidden(
            format!("{n}.default"),
            format!("must not be set in top-level {which}"),
        ));
    }
    for (key, what) in [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ] {
        if s.contains_key(key) {
            errs.push(FieldError::forbidden(format!("{n}.{key}"), what));
        }
    }
    if s.get("items").is_some_and(Value::is_array) {
        errs.push(FieldError::forbidden(
            format!("{n}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if meta != Meta::None && flag(s, "x-kubernetes-embedded-resource") {
        errs.push(FieldError::forbidden(
            format!("{n}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
    if flag(s, "uniqueItems") {
        errs.push(FieldError::forbidden(
            format!("{n}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if s.get("additionalProperties")
        .is_some_and(|a| a != &json!(true))
        && sub(s, "properties").is_some_and(|p| !p.is_empty())
    {
        errs.push(FieldError::forbidden(
            format!("{n}.additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(false)) {
        errs.push(FieldError::invalid(
            format!("{n}.x-kubernetes-preserve-unknown-fields"),
            &json!(false),
            "must be true or undefined",
        ));
    }
    map_type(s, n, errs);
    list_types::check(s, n, errs);
    rules::check(s, n, errs);
    let is_root = n.ends_with("openAPIV3Schema");
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            let inner = match (meta, is_root, k.as_str()) {
                (Meta::None, true, "metadata") => Meta::Top("metadata"),
                (Meta::None, true, "apiVersion") => Meta::Top("apiVersion"),
                (Meta::None, true, "kind") => Meta::Top("kind"),
                (m, _, _) => m,
            };
            if let Some(v) = v.as_object() {
                keywords(v, &format!("{n}.properties[{k}]"), inner, errs);
            }
        }
    }
    for (suffix, child) in children(s) {
        if suffix.starts_with(".properties[") {
            continue;
        }
        if let Some(child) = child.as_object() {
            keywords(child, &format!("{n}{suffix}"), meta, errs);
        }
    }
    for key in ["definitions", "dependencies"] {
        if let Some(map) = sub(s, key) {
            for (k, v) in map {
                if let Some(v) = v.as_object() {
                    keywords(v, &format!("{n}.{key}[{k}]"), meta, errs);
                }
            }
        }
    }
}

/// `x-kubernetes-map-type`: `atomic` or `granular`, on an object.
fn map_type(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    if let Some(map_type) = s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        let why = "must be object if x-kubernetes-map-type is specified";
        match text(s, "type") {
            "" => errs.push(FieldError::required(format!("{n}.type"), why)),
            "object" => {}
            other => errs.push(FieldError::invalid_str(format!("{n}.type"), other, why)),
        }
        if !matches!(map_type, "atomic" | "granular") {
            errs.push(FieldError::not_supported(
                format!("{n}.x-kubernetes-map-type"),
                &json!(map_type),
                &["atomic", "granular"],
            ));
        }
    }
}
