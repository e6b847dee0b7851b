//! Field errors as kube-apiserver words them: `spec.replicas: Invalid value: 11: <detail>`.
//!
//! One [`FieldError`] is one `details.causes[]` entry of a `422 Invalid` Status: its
//! `reason` is the error type (`FieldValueInvalid`, ...), its `message` the body after the
//! field, its `field` the dotted path. Values are shown as Go shows them: strings quoted,
//! numbers and booleans bare, anything else as compact JSON.

use std::fmt;

use serde_json::Value;

/// The kind of a field error (Go's `field.ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// `FieldValueNotFound`: `Not found`.
    NotFound,
    /// `FieldValueRequired`: `Required value`.
    Required,
    /// `FieldValueDuplicate`: `Duplicate value`.
    Duplicate,
    /// `FieldValueInvalid`: `Invalid value`.
    Invalid,
    /// `FieldValueNotSupported`: `Unsupported value`.
    NotSupported,
    /// `FieldValueForbidden`: `Forbidden`.
    Forbidden,
    /// `FieldValueTooLong`: `Too long`.
    TooLong,
    /// `FieldValueTooMany`: `Too many`.
    TooMany,
    /// `FieldValueTypeInvalid`: `Invalid value`.
    TypeInvalid,
}

impl ErrorType {
    /// The `reason` of a Status cause.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    fn text(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
        }
    }

    /// Whether the message shows the bad value (Required, Forbidden and TooLong do not).
    fn shows_value(self) -> bool {
        !matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong
        )
    }
}

/// One invalid field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// What is wrong.
    pub kind: ErrorType,
    /// The dotted path (`spec.containers[0].name`, `metadata.labels`); empty for the root.
    pub field: String,
    /// The value as shown in the message (already quoted for strings).
    pub value: String,
    /// The explanation after the value.
    pub detail: String,
}

impl FieldError {
    fn new(kind: ErrorType, field: impl Into<String>, value: String, detail: String) -> Self {
        Self {
            kind,
            field: field.into(),
            value,
            detail,
        }
    }

    /// `Invalid value: <value>: <detail>`.
    pub fn invalid(field: impl Into<String>, value: &Value, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, show(value), detail.into())
    }

    /// [`FieldError::invalid`] for a string value.
    pub fn invalid_str(field: impl Into<String>, value: &str, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, go_quote(value), detail.into())
    }

    /// A value of the wrong JSON type (`FieldValueTypeInvalid`).
    pub fn type_invalid(
        field: impl Into<String>,
        value: &Value,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::TypeInvalid, field, show(value), detail.into())
    }

    /// `Required value`, with an optional detail.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, String::new(), detail.into())
    }

    /// `Forbidden: <detail>`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, String::new(), detail.into())
    }

    /// `Unsupported value: <value>: supported values: "a", "b"`.
    pub fn not_supported(field: impl Into<String>, value: &Value, valid: &[&str]) -> Self {
        let list: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
        Self::new(
            ErrorType::NotSupported,
            field,
            show(value),
            format!("supported values: {}", list.join(", ")),
        )
    }

    /// `Duplicate value: <value>`.
    pub fn duplicate(field: impl Into<String>, value: &Value) -> Self {
        Self::new(ErrorType::Duplicate, field, show(value), String::new())
    }

    /// `Too long: may not be more than <max> bytes`.
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::new(
            ErrorType::TooLong,
            field,
            String::new(),
            format!("may not be more than {max} {unit}"),
        )
    }

    /// `Too many: <actual>: must have at most <max> items`.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        Self::new(
            ErrorType::TooMany,
            field,
            actual.to_string(),
            format!("must have at most {max} {unit}"),
        )
    }

    /// `Not found: <value>`.
    pub fn not_found(field: impl Into<String>, value: &Value) -> Self {
        Self::new(ErrorType::NotFound, field, show(value), String::new())
    }

    /// The message after the field: `Invalid value: "x": detail`.
    pub fn body(&self) -> String {
        let mut out = self.kind.text().to_owned();
        if self.kind.shows_value() && !self.value.is_empty() {
            out.push_str(": ");
            out.push_str(&self.value);
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Several errors as one message: the distinct ones, `[a, b]` when there are several.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        let text = e.to_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    match seen.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// A JSON value as Go's field errors show it: strings quoted, scalars bare, the rest as JSON.
pub fn show(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// Go's `%q`: double quotes, with `"`, `\` and non-printable characters escaped.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Joins a path and a child: `spec` + `replicas` = `spec.replicas`.
pub fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_read_like_the_real_servers() {
        let e = FieldError::invalid("spec.replicas", &json!(11), "must be at most 10");
        assert_eq!(
            e.to_string(),
            "spec.replicas: Invalid value: 11: must be at most 10"
        );
        let e = FieldError::not_supported("propagationPolicy", &json!("Sideways"), &["A", "B"]);
        assert_eq!(
            e.body(),
            "Unsupported value: \"Sideways\": supported values: \"A\", \"B\""
        );
        assert_eq!(
            FieldError::required("metadata.name", "").to_string(),
            "metadata.name: Required value"
        );
        assert_eq!(
            FieldError::too_long("metadata.annotations", 262_144).body(),
            "Too long: may not be more than 262144 bytes"
        );
        let a = FieldError::required("a", "");
        let b = FieldError::forbidden("b", "no");
        assert_eq!(
            aggregate(&[a.clone(), b.clone(), a.clone()]),
            "[a: Required value, b: Forbidden: no]"
        );
        assert_eq!(aggregate(&[a.clone(), a]), "a: Required value");
        assert_eq!(go_quote("a\"b\x01"), "\"a\\\"b\\x01\"");
    }
}
