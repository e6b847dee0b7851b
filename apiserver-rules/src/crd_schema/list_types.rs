//! `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`: the list type on an array,
//! atomic items in a set, and a map's keys naming required (or defaulted), scalar,
//! non-nullable properties of its object items.

use serde_json::{Value, json};

use super::{Obj, flag, sub, text};
use crate::field::FieldError;

/// The list type and map keys of the node at `n`.
pub(super) fn check(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let list_type = s.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(lt) = list_type {
        declared(s, n, lt, errs);
    }
    if !keys.is_empty() {
        let why = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required(
                format!("{n}.x-kubernetes-list-type"),
                why,
            )),
            Some("map") => {}
            Some(other) => errs.push(FieldError::invalid_str(
                format!("{n}.x-kubernetes-list-type"),
                other,
                why,
            )),
        }
    }
    if list_type == Some("map") {
        map_items(s, n, &keys, errs);
    }
    if let Some(lt @ ("set" | "map")) = list_type
        && let Some(items) = sub(s, "items")
    {
        item_keys(items, n, lt, &keys, errs);
    }
}

/// A declared list type `lt`: on an array, one of `atomic`, `set` and `map`, and for a
/// set, items that are atomic themselves.
fn declared(s: &Obj, n: &str, lt: &str, errs: &mut Vec<FieldError>) {
    let why = "must be array if x-kubernetes-list-type is specified";
    match text(s, "type") {
        "" => errs.push(FieldError::required(format!("{n}.type"), why)),
        "array" => {}
        other => errs.push(FieldError::invalid_str(format!("{n}.type"), other, why)),
    }
    if lt == "set"
        && let Some(items) = sub(s, "items")
    {
        let item_list = items.get("x-kubernetes-list-type").and_then(Value::as_str);
        let item_type = text(items, "type");
        if item_type == "array" && item_list.is_some_and(|t| t != "atomic") {
            errs.push(FieldError::invalid(
                format!("{n}.items.x-kubernetes-list-type"),
                &json!(item_list),
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            ));
        }
        if item_type == "object" && text(items, "x-kubernetes-map-type") != "atomic" {
            errs.push(FieldError::invalid(
                format!("{n}.items.x-kubernetes-map-type"),
                &json!(item_list),
                "must be atomic as item of a list with x-kubernetes-list-type=set",
            ));
        }
    }
    if !matches!(lt, "atomic" | "set" | "map") {
        errs.push(FieldError::not_supported(
            format!("{n}.x-kubernetes-list-type"),
            &json!(lt),
            &["atomic", "set", "map"],
        ));
    }
}

/// A list map: keys given, and one schema of object items.
fn map_items(s: &Obj, n: &str, keys: &[&str], errs: &mut Vec<FieldError>) {
    if keys.is_empty() {
        errs.push(FieldError::required(
            format!("{n}.x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    match s.get("items") {
        None => errs.push(FieldError::required(
            format!("{n}.items"),
            "must have a schema if x-kubernetes-list-type is map",
        )),
        Some(Value::Array(_)) => errs.push(FieldError::invalid(
            format!("{n}.items"),
            &s["items"],
            "must only have a single schema if x-kubernetes-list-type is map",
        )),
        Some(items) => {
            let items = items.as_object().cloned().unwrap_or_default();
            let item_type = text(&items, "type");
            if item_type != "object" {
                errs.push(FieldError::invalid_str(
                    format!("{n}.items.type"),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                key_properties(&items, n, keys, errs);
            }
        }
    }
}

/// A list map's keys: names of scalar item properties, without duplicates.
fn key_properties(items: &Obj, n: &str, keys: &[&str], errs: &mut Vec<FieldError>) {
    let item_type = text(items, "type");
    let props = sub(items, "properties").cloned().unwrap_or_default();
    let listed = json!(keys);
    for k in keys {
        match sub(&props, k) {
            None => errs.push(FieldError::invalid(
                format!("{n}.x-kubernetes-list-map-keys"),
                &listed,
                "entries must all be names of item properties",
            )),
            Some(p) if matches!(text(p, "type"), "array" | "object") => {
                errs.push(FieldError::invalid_str(
                    format!("{n}.items.properties[{k}].type"),
                    item_type,
                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                ));
            }
            Some(_) => {}
        }
    }
    let mut seen = Vec::new();
    for k in keys {
        if seen.contains(k) {
            errs.push(FieldError::invalid(
                format!("{n}.x-kubernetes-list-map-keys"),
                &listed,
                "must not contain duplicate entries",
            ));
        }
        seen.push(k);
    }
}

/// The items of a set or map (`lt`): not nullable, and for a map, key properties that
/// are required or defaulted and not nullable.
fn item_keys(items: &Obj, n: &str, lt: &str, keys: &[&str], errs: &mut Vec<FieldError>) {
    if flag(items, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{n}.items.nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
        ));
    }
    if lt != "map" {
        return;
    }
    let required: Vec<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for k in keys {
        if let Some(p) = sub(items, "properties").and_then(|ps| sub(ps, k)) {
            if !required.contains(k) && !p.contains_key("default") {
                errs.push(FieldError::required(
                    format!("{n}.items.properties[{k}].default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if flag(p, "nullable") {
                errs.push(FieldError::forbidden(
                    format!("{n}.items.properties[{k}].nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
}
