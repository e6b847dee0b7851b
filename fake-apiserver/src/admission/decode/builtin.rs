//! A built-in kind's body as Go's decoder reads it: a value of the wrong JSON type is the
//! 400 `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`,
//! and fields the type does not have are collected (the server warns about them, or with
//! `fieldValidation=Strict` refuses the request).

use serde_json::Value;

use super::go_time;
use crate::rules::builtin::{Field, Kind, Type, types};
use crate::rules::defaults::quantity;

/// What decoding found: the first type error (Go reports the earliest), and every unknown
/// field's path (`spec.template.spec.containers[0].bogus`).
#[derive(Debug, Default)]
pub struct Decoded {
    /// `json: cannot unmarshal ...`, when a value has the wrong type.
    pub type_error: Option<String>,
    /// The first error of a type with its own decoder (`metav1.Time`, `resource.Quantity`,
    /// `intstr.IntOrString`): Go stops there, so it wins over any `type_error`.
    pub abort: Option<String>,
    /// Paths of fields the type does not have.
    pub unknown: Vec<String>,
    /// The first wrong type as server-side apply's typed conversion words it:
    /// `.spec.replicas: expected numeric (int or float), got string`.
    pub typed_error: Option<String>,
}

impl Decoded {
    /// The error Go's decoder returns: the first abort, else the first type error.
    pub fn error(&self) -> Option<&String> {
        self.abort.as_ref().or(self.type_error.as_ref())
    }
}

/// Reads `body` as the type `root`.
pub fn check(root: &Type, body: &Value) -> Decoded {
    let mut out = Decoded::default();
    let root_at = At {
        go: "",
        path: "",
        smd: "",
    };
    struct_value(root, body, &root_at, &mut out);
    out
}

/// Where the decoder is, in the three forms its messages use: `go` the field names from
/// the root (Go's decoder), `path` with list indexes (strict decoding), `smd` with keyed
/// list items as structured-merge-diff prints them.
#[derive(Clone, Copy)]
struct At<'a> {
    go: &'a str,
    path: &'a str,
    smd: &'a str,
}

fn json_kind(v: &Value) -> String {
    match v {
        Value::String(_) => "string".into(),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "bool".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

/// The Go type a field decodes into, as `reflect.Type.String()` prints it.
fn go_type(kind: &Kind) -> String {
    match kind {
        Kind::String | Kind::Time | Kind::MicroTime => "string".into(),
        Kind::Bytes => "[]uint8".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Float64 => "float64".into(),
        Kind::Bool => "bool".into(),
        Kind::Quantity => "resource.Quantity".into(),
        Kind::IntStr => "intstr.IntOrString".into(),
        Kind::Any => "interface {}".into(),
        Kind::Ref(name) => {
            let mut parts = name.rsplit('.');
            let ty = parts.next().unwrap_or(name);
            let package = parts.next().unwrap_or("");
            format!("{package}.{ty}")
        }
        Kind::List(item) => format!("[]{}", go_type(&item.kind)),
        Kind::Map(value) => format!("map[string]{}", go_type(&value.kind)),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The fields of a struct `ty` (the innermost struct Go's decoder names in its errors).
fn struct_value(ty: &Type, value: &Value, at: &At<'_>, out: &mut Decoded) {
    let Some(map) = value.as_object() else {
        return;
    };
    for (key, v) in map {
        match ty.fields.get(key) {
            Some(field) => {
                let (go, path, smd) = (join(at.go, key), join(at.path, key), join(at.smd, key));
                let at = At {
                    go: &go,
                    path: &path,
                    smd: &smd,
                };
                field_value(ty.go_name(), field, v, &at, out);
            }
            None => out.unknown.push(join(at.path, key)),
        }
    }
}

fn type_error(out: &mut Decoded, value: &Value, owner: &str, go_path: &str, kind: &Kind) {
    if out.type_error.is_some() {
        return;
    }
    let what = match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => format!("number {n}"),
        Value::Number(n)
            if matches!(kind, Kind::Int32)
                && n.as_i64().is_none_or(|i| i32::try_from(i).is_err()) =>
        {
            format!("number {n}")
        }
        other => json_kind(other),
    };
    out.type_error = Some(format!(
        "json: cannot unmarshal {what} into Go struct field {owner}.{go_path} of type {}",
        go_type(kind)
    ));
}

/// One field's value; `owner` is the struct that declares it.
fn field_value(owner: &str, field: &Field, value: &Value, at: &At<'_>, out: &mut Decoded) {
    if value.is_null() {
        return;
    }
    let ok = match (&field.kind, value) {
        (Kind::String | Kind::Bytes | Kind::Time | Kind::MicroTime, Value::String(_)) => true,
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::Int32, Value::Number(n)) => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
        (Kind::Int64, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Kind::Float64, Value::Number(_)) => true,
        (Kind::Quantity | Kind::IntStr, Value::String(_) | Value::Number(_)) => true,
        (Kind::Any, _) => true,
        (Kind::Ref(_), Value::Object(_)) => true,
        (Kind::List(_), Value::Array(_)) => true,
        (Kind::Map(_), Value::Object(_)) => true,
        _ => false,
    };
    if !ok && out.typed_error.is_none() {
        out.typed_error = typed_error(&field.kind, value, at.smd);
    }
    if matches!(
        field.kind,
        Kind::Time | Kind::MicroTime | Kind::Quantity | Kind::IntStr
    ) {
        if out.abort.is_none() {
            out.abort = own_decoder(owner, &field.kind, value, at.go);
        }
        return;
    }
    if !ok {
        type_error(out, value, owner, at.go, &field.kind);
        return;
    }
    match (&field.kind, value) {
        (Kind::Ref(name), _) => {
            if let Some(ty) = types().get(name) {
                struct_value(ty, value, at, out);
            }
        }
        (Kind::List(item), Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                let smd = match (&field.list_type, v) {
                    (Some(t), Value::Object(o)) if t == "map" && !field.keys.is_empty() => {
                        let keys: Vec<String> = field
                            .keys
                            .iter()
                            .map(|k| format!("{k}={}", o.get(k).unwrap_or(&Value::Null)))
                            .collect();
                        format!("{}[{}]", at.smd, keys.join(","))
                    }
                    _ => format!("{}[{i}]", at.smd),
                };
                let path = format!("{}[{i}]", at.path);
                let item_at = At {
                    go: at.go,
                    path: &path,
                    smd: &smd,
                };
                field_value(owner, item, v, &item_at, out);
            }
        }
        (Kind::Map(inner), Value::Object(map)) => {
            for (k, v) in map {
                let (path, smd) = (join(at.path, k), join(at.smd, k));
                let value_at = At {
                    go: at.go,
                    path: &path,
                    smd: &smd,
                };
                field_value(owner, inner, v, &value_at, out);
            }
        }
        _ => {}
    }
}

/// The error of a type with its own `UnmarshalJSON`, which Go's decoder returns at once:
/// a time that `time.Parse` refuses, a quantity `ParseQuantity` refuses, or an int-or-string
/// whose number does not fit an `int32`. The decoder names the struct field in the type
/// errors these return.
fn own_decoder(owner: &str, kind: &Kind, value: &Value, go_path: &str) -> Option<String> {
    let field_error = |what: String, go_type: &str| {
        Some(format!(
            "json: cannot unmarshal {what} into Go struct field {owner}.{go_path} of type {go_type}"
        ))
    };
    match (kind, value) {
        (Kind::Time | Kind::MicroTime, Value::String(s)) => {
            go_time::parse_error(s, matches!(kind, Kind::MicroTime))
        }
        (Kind::Time | Kind::MicroTime, other) => field_error(json_kind(other), "string"),
        (Kind::Quantity, Value::String(s)) => quantity::parse_error(s).map(str::to_owned),
        (Kind::Quantity, other) => quantity::parse_error(&other.to_string()).map(str::to_owned),
        (Kind::IntStr, Value::String(_)) => None,
        (Kind::IntStr, Value::Number(n))
            if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) =>
        {
            None
        }
        (Kind::IntStr, Value::Number(n)) => field_error(format!("number {n}"), "int32"),
        (Kind::IntStr, other) => field_error(json_kind(other), "int32"),
        _ => None,
    }
}

/// structured-merge-diff's words for a value of the wrong type, at `.path`.
fn typed_error(kind: &Kind, value: &Value, path: &str) -> Option<String> {
    let go_value = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let (expected, got) = match kind {
        Kind::String | Kind::Bytes | Kind::Time | Kind::MicroTime => (
            "string",
            format!("&value.valueUnstructured{{Value:{}}}", go_value(value)),
        ),
        Kind::Int32 | Kind::Int64 | Kind::Float64 => (
            "numeric (int or float)",
            match value {
                Value::String(_) => "string".to_owned(),
                Value::Bool(_) => "bool".to_owned(),
                Value::Array(_) => "[]interface {}".to_owned(),
                _ => "map[string]interface {}".to_owned(),
            },
        ),
        Kind::Bool => ("boolean", format!("&{{{}}}", go_value(value))),
        Kind::List(_) => ("list", format!("&{{{}}}", go_value(value))),
        Kind::Map(_) | Kind::Ref(_) => ("map", format!("&{{{}}}", go_value(value))),
        Kind::Quantity | Kind::IntStr | Kind::Any => return None,
    };
    Some(format!(".{path}: expected {expected}, got {got}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn type_errors_and_unknown_fields_read_like_gos() {
        let cm = types().kind("v1", "ConfigMap").unwrap();
        let d = check(
            cm,
            &json!({"metadata": {"name": "x", "bad": 1}, "data": {"a": 1}, "x": 2}),
        );
        assert_eq!(
            d.type_error.as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
            )
        );
        assert_eq!(d.unknown, ["metadata.bad", "x"]);
        let dep = types().kind("apps/v1", "Deployment").unwrap();
        let d = check(dep, &json!({"spec": {"replicas": "x"}}));
        assert_eq!(
            d.type_error.as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        let d = check(cm, &json!({"metadata": {"labels": []}}));
        assert_eq!(
            d.type_error.as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"
            )
        );
        let d = check(
            dep,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": 1, "bogus": 2}]}}}}),
        );
        assert_eq!(
            d.type_error.as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"
            )
        );
        assert_eq!(d.unknown, ["spec.template.spec.containers[0].bogus"]);
    }
}
