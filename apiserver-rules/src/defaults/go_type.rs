//! What a round trip through a built-in kind's Go type does to its JSON: unknown fields
//! are dropped; `null`, empty strings, zeros, `false` and empty lists and maps of
//! `omitempty` fields disappear; struct fields that are not pointers are always written (a
//! zero one as `{}`), zero times as `null`, lists and maps without `omitempty` as `null`;
//! quantities are written in canonical form and times in UTC. Also the declarative
//! defaults (`+default=` markers, the OpenAPI `default` of a pointer field or a non-zero
//! one), which `zz_generated.defaults.go` sets wherever the type occurs.

use serde_json::{Map, Value, json};

use super::quantity;
use crate::builtin::{Field, Kind, Type, types};

/// Rewrites `obj` as the Go type `ty` decodes and encodes it.
pub fn round_trip(ty: &Type, obj: &mut Value) {
    struct_value(ty, obj, 0);
}

/// Sets the declarative defaults of `obj`, of type `ty`, and of every struct in it.
pub fn declarative(ty: &Type, obj: &mut Value) {
    declarative_struct(ty, obj, 0);
}

fn declarative_struct(ty: &Type, value: &mut Value, depth: usize) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    for (name, field) in &ty.fields {
        if let Some(default) = &field.default {
            let declared = field.pointer || !is_zero_scalar(default) && !default.is_object();
            if declared
                && map
                    .get(name)
                    .is_none_or(|v| v.is_null() || (!field.pointer && is_zero_scalar(v)))
            {
                map.insert(name.clone(), default.clone());
            }
        }
        if let Some(v) = map.get_mut(name) {
            declarative_value(field, v, depth);
        }
    }
}

fn declarative_value(field: &Field, value: &mut Value, depth: usize) {
    match (&field.kind, value) {
        (Kind::Ref(name), v @ Value::Object(_)) => {
            if let Some(ty) = types().get(name) {
                declarative_struct(ty, v, depth + 1);
            }
        }
        (Kind::List(item), Value::Array(items)) => {
            for v in items {
                declarative_value(item, v, depth + 1);
            }
        }
        (Kind::Map(inner), Value::Object(map)) => {
            for v in map.values_mut() {
                declarative_value(inner, v, depth + 1);
            }
        }
        _ => {}
    }
}

/// Nesting deeper than this is left as it is (the Go types have no such depth).
const MAX_DEPTH: usize = 64;

fn struct_value(ty: &Type, value: &mut Value, depth: usize) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let mut out = Map::new();
    for (name, field) in &ty.fields {
        if let Some(v) = field_value(field, map.remove(name), depth) {
            out.insert(name.clone(), v);
        }
    }
    *map = out;
}

/// The zero value of a struct type, as Go writes it.
pub(crate) fn zero_struct(name: &str, depth: usize) -> Value {
    let mut v = json!({});
    if let Some(ty) = types().get(name) {
        struct_value(ty, &mut v, depth + 1);
    }
    v
}

/// What Go writes for a field when it is absent or `null`.
fn absent(field: &Field, depth: usize) -> Option<Value> {
    let nil = || field.keep_zero.then_some(Value::Null);
    if field.pointer {
        return nil();
    }
    match &field.kind {
        Kind::Ref(name) => (!field.omit_zero).then(|| zero_struct(name, depth)),
        Kind::Time | Kind::MicroTime => (!field.omit_zero).then_some(Value::Null),
        Kind::Quantity => Some(json!("0")),
        Kind::IntStr => Some(json!(0)),
        Kind::List(_) | Kind::Map(_) | Kind::Any => nil(),
        _ if field.keep_zero => Some(zero_scalar(&field.kind)),
        _ => None,
    }
}

fn zero_scalar(kind: &Kind) -> Value {
    match kind {
        Kind::String | Kind::Bytes => json!(""),
        Kind::Int32 | Kind::Int64 | Kind::Float64 => json!(0),
        Kind::Bool => json!(false),
        _ => Value::Null,
    }
}

fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

fn field_value(field: &Field, value: Option<Value>, depth: usize) -> Option<Value> {
    let Some(mut value) = value.filter(|v| !v.is_null()) else {
        return absent(field, depth);
    };
    let omit = !field.keep_zero && !field.pointer;
    match (&field.kind, &mut value) {
        (Kind::List(_), Value::Array(items)) if items.is_empty() && !field.keep_zero => None,
        (Kind::Map(_), Value::Object(m)) if m.is_empty() && !field.keep_zero => None,
        (
            Kind::String | Kind::Bytes | Kind::Int32 | Kind::Int64 | Kind::Float64 | Kind::Bool,
            v,
        ) if omit && is_zero_scalar(v) => None,
        _ => {
            element(field, &mut value, depth);
            Some(value)
        }
    }
}

/// A value of a field's type (also a list item or a map value): structs, lists and maps
/// are walked, quantities and times rewritten; a value of the wrong type is left as it is.
fn element(field: &Field, value: &mut Value, depth: usize) {
    match (&field.kind, &mut *value) {
        (Kind::Ref(name), Value::Object(_)) => {
            if let Some(ty) = types().get(name) {
                struct_value(ty, value, depth + 1);
            }
        }
        (Kind::Ref(name), Value::Null) => *value = zero_struct(name, depth),
        (Kind::List(item), Value::Array(items)) => {
            for v in items {
                element(item, v, depth + 1);
            }
        }
        (Kind::Map(inner), Value::Object(map)) => {
            for v in map.values_mut() {
                element(inner, v, depth + 1);
            }
        }
        (Kind::Quantity, v @ (Value::String(_) | Value::Number(_))) => {
            let text = match &*v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if let Some(c) = quantity::canonical(&text) {
                *v = json!(c);
            }
        }
        (Kind::Time, Value::String(s)) => {
            if let Some(t) = utc(s, false) {
                *s = t;
            }
        }
        (Kind::MicroTime, Value::String(s)) => {
            if let Some(t) = utc(s, true) {
                *s = t;
            }
        }
        _ => {}
    }
}

/// An RFC 3339 time as `metav1.Time` (seconds) or `metav1.MicroTime` (microseconds)
/// writes it: in UTC.
fn utc(text: &str, micro: bool) -> Option<String> {
    let ts: jiff::Timestamp = text.parse().ok()?;
    let seconds = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Some(if micro {
        let micros = ts.subsec_nanosecond() / 1000;
        format!("{seconds}.{micros:06}Z")
    } else {
        format!("{seconds}Z")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(api_version: &str, kind: &str, mut v: Value) -> Value {
        round_trip(types().kind(api_version, kind).unwrap(), &mut v);
        v
    }

    #[test]
    fn structs_are_always_written_and_empty_optional_fields_never() {
        let svc = rt(
            "v1",
            "Service",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "labels": {}},
                "spec": {"ports": [{"port": 80, "name": ""}], "bogus": 1, "clusterIP": ""}}),
        );
        assert_eq!(
            svc,
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                "spec": {"ports": [{"port": 80, "targetPort": 0}]}, "status": {"loadBalancer": {}}})
        );
        let role = rt(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            json!({"metadata": {"name": "r"}}),
        );
        assert_eq!(role, json!({"metadata": {"name": "r"}, "rules": null}));
        let event = rt("v1", "Event", json!({"metadata": {"name": "e"}}));
        assert_eq!(event["eventTime"], Value::Null);
        assert!(event.get("eventTime").is_some());
        assert_eq!(event["involvedObject"], json!({}));
        let sts = rt(
            "apps/v1",
            "StatefulSet",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c",
                "resources": {"limits": {"memory": "1024Mi", "cpu": 0.5}}}]}}}}),
        );
        assert_eq!(
            sts["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({"limits": {"memory": "1Gi", "cpu": "500m"}})
        );
        assert_eq!(sts["spec"]["updateStrategy"], json!({}));
        assert_eq!(sts["spec"]["template"]["metadata"], json!({}));
        assert_eq!(
            sts["status"],
            json!({"replicas": 0, "availableReplicas": 0})
        );
    }

    #[test]
    fn times_are_written_in_utc() {
        assert_eq!(
            utc("2026-01-01T01:00:00.5+01:00", false).as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            utc("2026-01-01T00:00:00.123456789Z", true).as_deref(),
            Some("2026-01-01T00:00:00.123456Z")
        );
    }
}
