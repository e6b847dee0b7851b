//! The JSON paths a version points into its objects with: the scale subresource's
//! replicas and selector paths, printer columns (with their types and formats) and
//! selectable fields (resolved in the version's schema).

use serde_json::{Value, json};

use super::text;
use crate::crd_schema;
use crate::field::FieldError;

/// The scale subresource's paths at `at` (`spec.subresources`): simple JSON paths under
/// `.spec` or `.status`.
pub(super) fn subresources(sub: Option<&Value>, at: &str, errs: &mut Vec<FieldError>) {
    let Some(scale) = sub.and_then(|s| s.get("scale")).filter(|s| !s.is_null()) else {
        return;
    };
    let check = |key: &str, under: &[&str], errs: &mut Vec<FieldError>, required: bool| {
        let field = format!("{at}.scale.{key}");
        let v = text(scale, key);
        if v.is_empty() {
            if required {
                errs.push(FieldError::required(field, ""));
            }
            return;
        }
        if !v.starts_with('.') {
            errs.push(FieldError::invalid_str(
                field,
                v,
                "must be a simple json path starting with .",
            ));
        } else if !under.iter().any(|u| v.starts_with(&format!(".{u}."))) {
            let why = match under {
                [one] => format!("should be a json path under .{one}"),
                _ => "should be a json path under either .spec or .status".to_owned(),
            };
            errs.push(FieldError::invalid_str(field, v, why));
        }
    };
    check("specReplicasPath", &["spec"], errs, true);
    check("statusReplicasPath", &["status"], errs, true);
    check("labelSelectorPath", &["spec", "status"], errs, false);
}

/// `additionalPrinterColumns` at `at`: a name, a known type and format, a JSON path.
pub(super) fn columns(v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = v.get("additionalPrinterColumns").and_then(Value::as_array) else {
        return;
    };
    for (j, c) in list.iter().enumerate() {
        let p = format!("{at}[{j}]");
        if text(c, "name").is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        }
        let types = "must be one of boolean,date,integer,number,string";
        match text(c, "type") {
            "" => errs.push(FieldError::required(format!("{p}.type"), types)),
            "integer" | "number" | "string" | "boolean" | "date" => {}
            other => errs.push(FieldError::invalid_str(format!("{p}.type"), other, types)),
        }
        let format = text(c, "format");
        if !format.is_empty()
            && ![
                "int32",
                "int64",
                "float",
                "double",
                "byte",
                "date",
                "date-time",
                "password",
            ]
            .contains(&format)
        {
            errs.push(FieldError::invalid_str(
                format!("{p}.format"),
                format,
                "must be one of byte,date,date-time,double,float,int32,int64,password",
            ));
        }
        match text(c, "jsonPath") {
            "" => errs.push(FieldError::required(format!("{p}.JSONPath"), "")),
            path if !path.starts_with('.') => errs.push(FieldError::invalid_str(
                format!("{p}.JSONPath"),
                path,
                "must be a simple json path starting with .",
            )),
            _ => {}
        }
    }
}

/// The normalised form of a selectable field path: `.spec['a']` is `.spec.a`.
fn normalised(path: &str) -> String {
    path.replace("['", ".").replace("']", "")
}

/// `selectableFields` at `at`: paths that resolve in `schema` to a string, boolean or
/// integer outside metadata, unique, at most eight.
pub(super) fn selectable(v: &Value, schema: Option<&Value>, at: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = v
        .get("selectableFields")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        return;
    };
    let Some(root) = schema.and_then(Value::as_object) else {
        errs.push(FieldError::invalid_str(
            at,
            "",
            "may only be set when validations.schema is included",
        ));
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    for (j, f) in list.iter().enumerate() {
        let field = format!("{at}[{j}].jsonPath");
        let path = text(f, "jsonPath");
        if path.is_empty() {
            errs.push(FieldError::required(field, ""));
            continue;
        }
        match crd_schema::resolve(root, path, false) {
            Err(why) => {
                errs.push(FieldError::invalid_str(
                    field,
                    path,
                    format!("is an invalid path: {why}"),
                ));
                continue;
            }
            Ok(node) => {
                if normalised(path).split('.').nth(1) == Some("metadata") {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        "must not point to fields in metadata",
                    ));
                } else if !matches!(
                    node.get("type").and_then(Value::as_str),
                    Some("string" | "boolean" | "integer")
                ) {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
                    ));
                }
            }
        }
        let key = normalised(path);
        if seen.contains(&key) {
            errs.push(FieldError::duplicate(field, &json!(path)));
        } else {
            seen.push(key);
        }
    }
    if seen.len() > 8 {
        errs.push(FieldError::too_many(at, seen.len(), 8));
    }
}
