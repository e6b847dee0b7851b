//! Which Rust type a schema becomes, field by field: structs, maps, lists, string enums,
//! `Time`, `IntOrString`/`Quantity`, numbers by their format, and JSON for the rest; each
//! with the markers that give back what the type alone does not say.

use serde_json::{Map, Value};

use super::markers::{json_text, push_at, scalar_markers, validation_prefix};
use super::{KNOWN_KEYS, QUANTITY_PATTERN, Ty, Types, description, empty, has_properties};
use crate::json;

impl Types {
    /// The type of schema `s`, pushing the markers that restore the rest of it. `items` says
    /// where `s` is inside the field: `""` for the field itself, then a step per level,
    /// `"items:"` for a list's items and `"values:"` for a map's values (see
    /// [`validation_prefix`]).
    pub(super) fn ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let ty = self.ty_of(hint, path, s, markers, exceptions, items);
        // A struct's doc comment is its description; list items and map values of other
        // types have no doc comment of their own.
        let is_struct = matches!(&ty, Ty::Named(n) if self.structs.iter().any(|st| &st.name == n));
        if !items.is_empty() && !is_struct && description(s).is_some() {
            exceptions.push(
                "the description of its list items or map values is not carried over".to_owned(),
            );
        }
        ty
    }

    fn ty_of(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let ty_name = s.get("type").and_then(Value::as_str).unwrap_or("");
        let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
        for (k, _) in s {
            let int_or_string_any_of = k == "anyOf" && flag("x-kubernetes-int-or-string");
            if !KNOWN_KEYS.contains(&k.as_str()) && !int_or_string_any_of {
                exceptions.push(format!("`{k}` is not carried over"));
            }
        }
        // The keys every type may carry.
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        // A format the Rust type writes by itself is not a marker.
        if flag("x-kubernetes-int-or-string") {
            return int_or_string(s, markers, exceptions, items);
        }
        if flag("x-kubernetes-embedded-resource") && !has_properties(s) {
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:EmbeddedResource",
                "x-kubernetes-embedded-resource",
            );
            if flag("x-kubernetes-preserve-unknown-fields") {
                push_at(
                    markers,
                    exceptions,
                    items,
                    "kubebuilder:validation:XPreserveUnknownFields",
                    "x-kubernetes-preserve-unknown-fields",
                );
            }
            common(markers, exceptions, false);
            return Ty::Json;
        }
        match ty_name {
            "object" if has_properties(s) => {
                // The struct carries the object's own markers; only a default stays on the
                // field (items have no marker for one).
                let name = self.named_struct(hint, path, s);
                if let Some(d) = s.get("default") {
                    if items.is_empty() {
                        markers.push(format!("kubebuilder:default={}", json_text(d)));
                    } else {
                        exceptions.push(
                            "a `default` on list items cannot be written as a marker".to_owned(),
                        );
                    }
                }
                Ty::Named(name)
            }
            "object" if s.contains_key("additionalProperties") => {
                self.map_ty(hint, path, s, markers, exceptions, items)
            }
            "object" | "" => json_object(ty_name, s, markers, exceptions, items),
            "array" => self.array_ty(hint, path, s, markers, exceptions, items),
            "string" => self.string_ty(hint, s, markers, exceptions, items),
            t @ ("integer" | "number") => number_ty(t, s, markers, exceptions, items),
            "boolean" => {
                common(markers, exceptions, false);
                Ty::Bool
            }
            other => {
                exceptions.push(format!(
                    "type `{other}` is not a Kubernetes schema type; kept as JSON"
                ));
                Ty::Json
            }
        }
    }

    /// `additionalProperties`: a map of the values' type.
    fn map_ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let values = s
            .get("additionalProperties")
            .and_then(Value::as_object)
            .unwrap_or(empty());
        let mut inner_markers = Vec::new();
        let mut inner_exc = Vec::new();
        let value_ty = self.ty(
            hint,
            &format!("{path}.{{}}"),
            values,
            &mut inner_markers,
            &mut inner_exc,
            &format!("{items}values:"),
        );
        markers.extend(inner_markers);
        exceptions.extend(inner_exc);
        if let Some(mt) = s.get("x-kubernetes-map-type").and_then(Value::as_str) {
            push_at(
                markers,
                exceptions,
                items,
                &format!("mapType={mt}"),
                "x-kubernetes-map-type",
            );
        }
        if flag("x-kubernetes-preserve-unknown-fields") {
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:XPreserveUnknownFields",
                "x-kubernetes-preserve-unknown-fields",
            );
        }
        common(markers, exceptions, false);
        Ty::Map(Box::new(value_ty))
    }

    /// A list of the items' type, with its list type and keys.
    fn array_ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let item_schema = s.get("items").and_then(Value::as_object).unwrap_or(empty());
        let item_hint = hint.to_owned();
        let item_ty = self.ty(
            &item_hint,
            &format!("{path}[]"),
            item_schema,
            markers,
            exceptions,
            &format!("{items}items:"),
        );
        if let Some(lt) = s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            push_at(
                markers,
                exceptions,
                items,
                &format!("listType={lt}"),
                "x-kubernetes-list-type",
            );
        }
        for k in json::strings(s.get("x-kubernetes-list-map-keys")) {
            push_at(
                markers,
                exceptions,
                items,
                &format!("listMapKey={k}"),
                "x-kubernetes-list-map-keys",
            );
        }
        // On the list itself, whatever its items say.
        if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:XPreserveUnknownFields",
                "x-kubernetes-preserve-unknown-fields",
            );
        }
        common(markers, exceptions, false);
        Ty::Vec(Box::new(item_ty))
    }

    /// A string: an enum of its values, a `Time` for `date-time`, or a `String`.
    fn string_ty(
        &mut self,
        hint: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let implied = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, format: &str| {
            scalar_markers(s, items, markers, exceptions, false, Some(format));
        };
        let format = s.get("format").and_then(Value::as_str);
        let values: Option<Vec<String>> = s
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.iter().map(|v| v.as_str().map(str::to_owned)).collect());
        if let Some(values) =
            values.filter(|v| !v.is_empty() && (items.is_empty() || items == "items:"))
        {
            let name = self.named_enum(hint, &values);
            common(markers, exceptions, true);
            return Ty::Named(name);
        }
        if format == Some("date-time") && !s.contains_key("enum") && !s.contains_key("default") {
            implied(markers, exceptions, "date-time");
            return Ty::Time;
        }
        common(markers, exceptions, false);
        Ty::String
    }
}

/// `x-kubernetes-int-or-string`: a `Quantity` when the pattern is the quantity pattern, an
/// `IntOrString` otherwise.
fn int_or_string(
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    let quantity = s.get("pattern").and_then(Value::as_str) == Some(QUANTITY_PATTERN);
    // The marker writes the `anyOf` kube's schema of the type lacks, wherever it is.
    markers.push(format!("{}XIntOrString", validation_prefix(items)));
    scalar_markers(s, items, markers, exceptions, false, None);
    if !items.is_empty() && !s.contains_key("description") {
        exceptions.push(
            "list items or map values of this type get the type's own description from kube"
                .to_owned(),
        );
    }
    if quantity {
        Ty::Quantity
    } else {
        Ty::IntOrString
    }
}

/// An object without properties, or no type: anything, kept as JSON.
fn json_object(
    ty_name: &str,
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
    // Anything: kept as JSON.
    if ty_name == "object" {
        push_at(
            markers,
            exceptions,
            items,
            "kubebuilder:validation:Type=object",
            "type: object",
        );
    }
    if flag("x-kubernetes-preserve-unknown-fields") {
        push_at(
            markers,
            exceptions,
            items,
            "kubebuilder:validation:XPreserveUnknownFields",
            "x-kubernetes-preserve-unknown-fields",
        );
    }
    if let Some(mt) = s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        push_at(
            markers,
            exceptions,
            items,
            &format!("mapType={mt}"),
            "x-kubernetes-map-type",
        );
    }
    scalar_markers(s, items, markers, exceptions, false, None);
    Ty::Json
}

/// An integer or a number: the narrow or the wide Rust type, by the format each writes.
fn number_ty(
    t: &str,
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    // The narrow and the wide Rust type, by the format each writes.
    let ((narrow, narrow_ty), (wide, wide_ty)) = if t == "integer" {
        (("int32", Ty::I32), ("int64", Ty::I64))
    } else {
        (("float", Ty::F32), ("double", Ty::F64))
    };
    // An empty format is no format.
    match s
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty())
    {
        Some(f) if f == narrow => {
            scalar_markers(s, items, markers, exceptions, false, Some(f));
            narrow_ty
        }
        Some(f) if f == wide => {
            scalar_markers(s, items, markers, exceptions, false, Some(f));
            wide_ty
        }
        None => {
            scalar_markers(s, items, markers, exceptions, false, None);
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:Format=\"\"",
                "(no format)",
            );
            wide_ty
        }
        Some(_) => {
            scalar_markers(s, items, markers, exceptions, false, None);
            wide_ty
        }
    }
}
