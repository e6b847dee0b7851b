//! The `+kubebuilder:` (and kube-codegen's element) markers that carry a schema's
//! validations: on a field, on its list items or map values, and on a struct.

use serde_json::{Map, Value};

/// The prefix of a validation marker for the values at `items` inside a field: the field's
/// own (`kubebuilder:validation:`), controller-gen's `items:` form for a list's items, and
/// kube-codegen's element markers for anything deeper (`kube-codegen:validation:values:`,
/// `kube-codegen:validation:items:items:`).
pub(super) fn validation_prefix(items: &str) -> String {
    match items {
        "" => "kubebuilder:validation:".to_owned(),
        "items:" => "kubebuilder:validation:items:".to_owned(),
        steps => format!("kube-codegen:validation:{steps}"),
    }
}

/// A marker on the field itself, or at `items` inside it when it is a validation marker
/// with an element form; an exception otherwise.
pub(super) fn push_at(
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
    marker: &str,
    what: &str,
) {
    let element = marker
        .strip_prefix("kubebuilder:validation:")
        .filter(|m| !m.starts_with("XEmbeddedResource") && !m.starts_with("EmbeddedResource"));
    if items.is_empty() {
        markers.push(marker.to_owned());
    } else if let Some(rest) = element {
        markers.push(format!("{}{rest}", validation_prefix(items)));
    } else {
        exceptions.push(format!(
            "`{what}` on list items or map values cannot be written as a marker"
        ));
    }
}

/// Markers of the keys any schema may have: numbers, lengths, pattern, format, enum,
/// default, CEL rules, counts. Keys on items use the `items:` forms where they exist.
pub(super) fn scalar_markers(
    s: &Map<String, Value>,
    items: &str,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    skip_enum: bool,
    implied_format: Option<&str>,
) {
    let on_items = !items.is_empty();
    let prefix = validation_prefix(items);
    let push = |markers: &mut Vec<String>, text: String| markers.push(format!("{prefix}{text}"));
    for (key, name) in [
        ("minimum", "Minimum"),
        ("maximum", "Maximum"),
        ("multipleOf", "MultipleOf"),
    ] {
        // A `null` is no bound (kube-apiserver reads it as absent).
        if let Some(n) = s.get(key).filter(|n| !n.is_null()) {
            push(markers, format!("{name}={}", number_text(n)));
        }
    }
    for (key, name) in [
        ("exclusiveMinimum", "ExclusiveMinimum"),
        ("exclusiveMaximum", "ExclusiveMaximum"),
    ] {
        // `false` is what an absent key says (kube-apiserver does not store it).
        if let Some(Value::Bool(true)) = s.get(key) {
            push(markers, format!("{name}=true"));
        }
    }
    for (key, name) in [
        ("minLength", "MinLength"),
        ("maxLength", "MaxLength"),
        ("minItems", "MinItems"),
        ("maxItems", "MaxItems"),
        ("minProperties", "MinProperties"),
        ("maxProperties", "MaxProperties"),
    ] {
        if let Some(n) = s.get(key).and_then(Value::as_u64) {
            push(markers, format!("{name}={n}"));
        }
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        if p.contains('`') || p.trim() != p {
            exceptions.push(
                "a `pattern` with a backtick or outer spaces cannot be written as a marker"
                    .to_owned(),
            );
        } else {
            push(markers, format!("Pattern=`{p}`"));
        }
    }
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && Some(f) != implied_format
    {
        // An empty format is no format (kube-apiserver does not store it).
        if !f.is_empty() {
            push(markers, format!("Format={f}"));
        }
    }
    // An empty `enum` is no enum (kube-apiserver does not store it).
    if !skip_enum
        && let Some(values) = s
            .get("enum")
            .and_then(Value::as_array)
            .filter(|v| !v.is_empty())
    {
        let texts: Vec<String> = values.iter().map(enum_text).collect();
        if texts.iter().any(|t| t.contains(';') || t.is_empty()) {
            exceptions.push(
                "an `enum` value with `;` or an empty string cannot be written as a marker"
                    .to_owned(),
            );
        } else {
            push(markers, format!("Enum={}", texts.join(";")));
        }
    }
    if let Some(d) = s.get("default") {
        if on_items {
            exceptions.push("a `default` on list items cannot be written as a marker".to_owned());
        } else {
            markers.push(format!("kubebuilder:default={}", json_text(d)));
        }
    }
    if let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) {
        for rule in rules {
            push(markers, format!("XValidation:{}", cel_args(rule)));
        }
    }
}

/// The type-level markers of an object schema that becomes a struct.
pub(super) fn object_markers(obj: &Map<String, Value>, markers: &mut Vec<String>) {
    for (key, name) in [
        ("minProperties", "MinProperties"),
        ("maxProperties", "MaxProperties"),
    ] {
        if let Some(n) = obj.get(key).and_then(Value::as_u64) {
            markers.push(format!("kubebuilder:validation:{name}={n}"));
        }
    }
    if let Some(mt) = obj.get("x-kubernetes-map-type").and_then(Value::as_str) {
        markers.push(format!("structType={mt}"));
    }
    if let Some(rules) = obj
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        for rule in rules {
            markers.push(format!(
                "kubebuilder:validation:XValidation:{}",
                cel_args(rule)
            ));
        }
    }
}

/// `rule="...",message="..."` with the marker's quoting.
fn cel_args(rule: &Value) -> String {
    let mut parts = Vec::new();
    for key in [
        "rule",
        "message",
        "messageExpression",
        "reason",
        "fieldPath",
    ] {
        if let Some(text) = rule.get(key).and_then(Value::as_str) {
            parts.push(format!("{key}={}", quoted(text)));
        }
    }
    if let Some(b) = rule.get("optionalOldSelf").and_then(Value::as_bool) {
        parts.push(format!("optionalOldSelf={b}"));
    }
    parts.join(",")
}

/// A marker argument in double quotes: `\`, `"`, newlines and tabs escaped.
pub fn quoted(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn number_text(n: &Value) -> String {
    match n {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn enum_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A default as the marker writes it: JSON.
pub(super) fn json_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_arguments_are_quoted_as_the_marker_parser_reads_them() {
        assert_eq!(
            quoted("a \"b\"\n\\c\td"),
            r#""a \"b\"\n\\c\td""#,
            "quotes, newlines, backslashes and tabs escaped"
        );
    }
}
