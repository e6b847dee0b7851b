//! One CRD version's `openAPIV3Schema` as apiextensions-apiserver checks it: the keyword
//! rules, list and map types, CEL rule syntax, the structural-schema invariants, value
//! validations (`allOf`/`anyOf`/`oneOf`/`not`), and defaults against their own schema.
//!
//! Paths are the real server's: `<P>.properties[spec].items.x-kubernetes-list-type`.

use serde_json::{Map, Value, json};

use crate::field::FieldError;
use crate::schema;

type Obj = Map<String, Value>;

fn text<'a>(node: &'a Obj, key: &str) -> &'a str {
    node.get(key).and_then(Value::as_str).unwrap_or("")
}

fn flag(node: &Obj, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool) == Some(true)
}

fn sub<'a>(node: &'a Obj, key: &str) -> Option<&'a Obj> {
    node.get(key).and_then(Value::as_object)
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// The errors of one version's schema at `p` (`spec.validation.openAPIV3Schema`), in the
/// real server's order; `status` when the status subresource applies to it.
pub fn validate(
    root: &Value,
    p: &str,
    status: bool,
    warnings: &mut Vec<String>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(s) = root.as_object() else {
        errs.push(FieldError::required(p, ""));
        return errs;
    };
    if status {
        root_restrictions(s, p, &mut errs);
    }
    if flag(s, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{p}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    // Keywords a structural schema cannot hold make the whole structural check impossible;
    // the keyword walk below reports them.
    let convertible = !has_unstructural_keyword(root);
    let mut structural = Vec::new();
    if convertible {
        invariants(s, p, Level::Root, &mut structural);
        value_validations(s, p, &mut structural);
        structural.sort_by_key(ToString::to_string);
    }
    let structural_ok = convertible && structural.is_empty();
    errs.extend(structural);
    if structural_ok {
        defaults(s, p, true, &mut errs);
    }
    keywords(s, p, Meta::None, &mut errs);
    if !convertible && errs.is_empty() && s.contains_key("$schema") {
        errs.push(FieldError::invalid_str(
            p,
            "",
            "OpenAPIV3Schema 'schema' is not supported",
        ));
    }
    formats(s, warnings);
    // Rules are compiled only once the schema they are typed by is valid.
    #[cfg(feature = "cel")]
    if errs.is_empty() {
        errs.extend(crate::cel::check::crd_rules(root, p));
    }
    errs
}

fn has_unstructural_keyword(v: &Value) -> bool {
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

/// Every sub-schema with its path suffix: properties, additionalProperties, items and the
/// junctors.
fn children(s: &Obj) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            out.push((format!(".properties[{k}]"), v));
        }
    }
    if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
        out.push((".additionalProperties".into(), a));
    }
    if let Some(i) = s.get("items").filter(|i| i.is_object()) {
        out.push((".items".into(), i));
    }
    for j in JUNCTORS {
        if let Some(list) = s.get(j).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                out.push((format!(".{j}[{i}]"), v));
            }
        }
    }
    if let Some(n) = s.get("not").filter(|n| n.is_object()) {
        out.push((".not".into(), n));
    }
    out
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
fn root_restrictions(s: &Obj, p: &str, errs: &mut Vec<FieldError>) {
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
enum Level {
    Root,
    Item,
    Field,
}

/// The structural invariants: every node has a type (unless it preserves unknown fields or
/// is int-or-string), arrays have items, the root is an object whose `metadata` only
/// restricts the name, embedded resources are objects, patterns are RE2.
fn invariants(s: &Obj, n: &str, level: Level, errs: &mut Vec<FieldError>) {
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
fn resource_meta_types(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
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
fn only_names(meta: &Obj) -> bool {
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

/// What a junctor (`allOf`, `anyOf`, `oneOf`, `not`) may not say, and the properties it
/// names that the structural part must also have.
fn value_validations(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
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

fn nested_value_validation(v: &Obj, n: &str, int_or_string: bool, errs: &mut Vec<FieldError>) {
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
fn completeness(
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

/// Which top-level resource meta a node sits under, where defaults are not allowed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meta {
    None,
    Top(&'static str),
}

/// The keyword rules of every node: types, forbidden keywords, list and map types, CEL
/// rule syntax.
fn keywords(s: &Obj, n: &str, meta: Meta, errs: &mut Vec<FieldError>) {
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
    list_type(s, n, errs);
    cel_rules(s, n, errs);
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

/// `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
fn list_type(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let list_type = s.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys: Vec<&str> = s
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(lt) = list_type {
        let why = "must be array if x-kubernetes-list-type is specified";
        match text(s, "type") {
            "" => errs.push(FieldError::required(format!("{n}.type"), why)),
            "array" => {}
            other => errs.push(FieldError::invalid_str(format!("{n}.type"), other, why)),
        }
        let items = sub(s, "items");
        if lt == "set"
            && let Some(items) = items
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
                    let props = sub(&items, "properties").cloned().unwrap_or_default();
                    let listed = json!(keys);
                    for k in &keys {
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
                    for k in &keys {
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
            }
        }
    }
    if let Some(lt @ ("set" | "map")) = list_type
        && let Some(items) = sub(s, "items")
    {
        if flag(items, "nullable") {
            errs.push(FieldError::forbidden(
                format!("{n}.items.nullable"),
                format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let required: Vec<&str> = items
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for k in &keys {
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
    }
}

const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The form of `x-kubernetes-validations` entries (message, reason, field path); the rules
/// themselves are compiled, type-checked and costed by `cel::check` (feature `cel`).
fn cel_rules(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return;
    };
    for (i, r) in rules.iter().enumerate() {
        let p = format!("{n}.x-kubernetes-validations[{i}]");
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let rule = get("rule").trim();
        let message = get("message");
        if rule.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.push(FieldError::invalid_str(
                format!("{p}.message"),
                message,
                "must be non-empty if specified",
            ));
        } else if message.trim().contains(['\n', '\r']) {
            errs.push(FieldError::invalid_str(
                format!("{p}.message"),
                message,
                "must not contain line breaks",
            ));
        } else if rule.contains(['\n', '\r']) && message.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{p}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let expr = get("messageExpression");
        if !expr.is_empty() && expr.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{p}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = r.get("reason").and_then(Value::as_str)
            && !REASONS.contains(&reason)
        {
            errs.push(FieldError::not_supported(
                format!("{p}.reason"),
                &json!(reason),
                &REASONS,
            ));
        }
        let field_path = get("fieldPath");
        if !field_path.is_empty() {
            if field_path.trim().is_empty() {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must be non-empty if specified",
                ));
            } else if field_path.contains(['\n', '\r']) {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must not contain line breaks",
                ));
            } else if resolve(s, field_path, true).is_err() {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must be a valid path",
                ));
            }
        }
    }
}

/// Resolves a simple JSON path (`.spec.a`, `.spec['a.b']`) in a structural schema, as the
/// server resolves selectable fields and CEL field paths; `brackets` allows `['key']`.
pub fn resolve<'a>(root: &'a Obj, path: &str, brackets: bool) -> Result<&'a Obj, String> {
    let mut node = root;
    let mut rest = path;
    if rest.is_empty() {
        return Err("unexpected end of JSON path".into());
    }
    while !rest.is_empty() {
        let key: String;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err("unexpected end of JSON path".into());
            }
            key = r[..end].to_owned();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            if !brackets {
                return Err("array notation is not allowed".into());
            }
            let Some(r) = r.strip_prefix('\'') else {
                let tok = r.split([']', '.']).next().unwrap_or("");
                return Err(format!("expected single quoted string but got {tok}"));
            };
            let Some(end) = r.find('\'') else {
                return Err(format!("invalid string literal: '{r}"));
            };
            key = r[..end].to_owned();
            let after = &r[end + 1..];
            let Some(after) = after.strip_prefix(']') else {
                let tok = after.chars().next().map(String::from).unwrap_or_default();
                return Err(format!("expected ] but got {tok}"));
            };
            rest = after;
        } else {
            let tok = rest.split(['.', '[']).next().unwrap_or(rest);
            return Err(format!("expected [ or . but got: {tok}"));
        }
        node = match sub(node, "properties").and_then(|p| sub(p, &key)) {
            Some(next) => next,
            None => match sub(node, "additionalProperties") {
                Some(next) => next,
                None => return Err("does not refer to a valid field".into()),
            },
        };
    }
    Ok(node)
}

/// Defaults against their own schema: no unknown fields, embedded resources with
/// `apiVersion` and `kind`, and every value validation (enum, bounds, pattern, ...).
fn defaults(s: &Obj, n: &str, root: bool, errs: &mut Vec<FieldError>) {
    if let Some(d) = s.get("default")
        && !root
    {
        let d_path = format!("{n}.default");
        let node = Value::Object(s.clone());
        let mut pruned = d.clone();
        if !schema::prune(&node, &mut pruned).is_empty() {
            errs.push(FieldError::invalid(
                &d_path,
                d,
                "must not have unknown fields",
            ));
        }
        let embedded = flag(s, "x-kubernetes-embedded-resource");
        let missing: Vec<&str> = ["apiVersion", "kind"]
            .into_iter()
            .filter(|k| embedded && d.is_object() && d.get(*k).is_none())
            .collect();
        if missing.is_empty() {
            if !(d.is_null() && flag(s, "nullable")) {
                schema::validate(&node, d, &d_path, "", errs);
            }
        } else {
            for k in missing {
                errs.push(FieldError::required(format!("{d_path}.{k}"), ""));
            }
        }
    }
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            // Defaults in the root's resource meta are forbidden; the keyword walk says so.
            if root && matches!(k.as_str(), "metadata" | "apiVersion" | "kind") {
                continue;
            }
            if let Some(v) = v.as_object() {
                defaults(v, &format!("{n}.properties[{k}]"), false, errs);
            }
        }
    }
    if let Some(i) = sub(s, "items") {
        defaults(i, &format!("{n}.items"), false, errs);
    }
}

/// `unrecognized format` warnings for formats the server ignores for the node's type.
fn formats(s: &Obj, warnings: &mut Vec<String>) {
    if let Some(format) = s.get("format").and_then(Value::as_str) {
        let known: &[&str] = match text(s, "type") {
            "integer" => &["int32", "int64"],
            "number" => &["float", "double"],
            "string" | "" => &[
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
                "password",
                "date",
                "duration",
                "datetime",
                "k8sshortname",
                "k8slongname",
            ],
            _ => &[],
        };
        let normalized: String = format.chars().filter(|c| *c != '-').collect();
        if !known.is_empty() && !known.contains(&normalized.as_str()) {
            let w = format!("unrecognized format \"{format}\"");
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    for (_, child) in children(s) {
        if let Some(child) = child.as_object() {
            formats(child, warnings);
        }
    }
}
