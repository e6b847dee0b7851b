//! What one field (or type-level) marker sets in the schema: its value read as the field's
//! type reads it, checked, and turned into schema keys (`minimum`, `pattern`,
//! `x-kubernetes-list-type`, ...).

use serde_json::{Map, Value, json};

use super::cel;
use super::patch::Patch;
use crate::ast::{Shape, Structs};
use crate::attr::marker::Marker;
use crate::diag::{Ctxt, did_you_mean};

/// The schema keys one field (or type-level) marker sets, at `path`.
pub(super) fn field_patch(
    cx: &mut Ctxt,
    m: &Marker,
    s: &Shape<'_>,
    structs: &Structs<'_>,
    path: &[String],
) -> Option<Patch> {
    let mut set = Map::new();
    match short_name(m) {
        "XValidation" => {
            let rule = cel::xvalidation(cx, m, &crate::cel_type::at_marker(s, structs))?;
            set.insert("x-kubernetes-validations".into(), Value::Array(vec![rule]));
        }
        union if super::one_of::is_union(union) => {
            let rule = super::one_of::rule(cx, m, s)?;
            set.insert("x-kubernetes-validations".into(), Value::Array(vec![rule]));
        }
        "externalDocs" => {
            set.insert("externalDocs".into(), external_docs(cx, m)?);
        }
        "Schemaless" => {
            // The runtime empties the field's schema (keeping its description) before the
            // field's other markers are applied; the walk places nothing below it.
            set.insert("x-kube-codegen-schemaless".into(), Value::from(true));
        }
        "XIntOrString" => {
            // An int-or-string schema has no type of its own (a JSON null drops the key).
            set.insert("x-kubernetes-int-or-string".into(), Value::from(true));
            set.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
            set.insert("type".into(), Value::Null);
            set.insert("format".into(), Value::Null);
        }
        _ => {
            let (key, value) = keyword(cx, m, s)?;
            set.insert(key.into(), value);
            if m.name.ends_with("EmbeddedResource") {
                // The API server wants an embedded object's schema to be an object.
                set.insert("type".into(), Value::from("object"));
            }
        }
    }
    Some(Patch::Schema {
        path: path.to_vec(),
        set,
    })
}

/// `+kubebuilder:externalDocs:url=...,description=...`: a link to more documentation.
fn external_docs(cx: &mut Ctxt, m: &Marker) -> Option<Value> {
    let mut docs = Map::new();
    for arg in &m.args {
        match arg.key.as_str() {
            "url" => {
                // `<https://...>`, rustdoc's link form, keeps its bare-URL lint quiet.
                let url = arg.value.trim();
                let url = url
                    .strip_prefix('<')
                    .and_then(|u| u.strip_suffix('>'))
                    .unwrap_or(url);
                docs.insert("url".into(), Value::from(url));
            }
            "description" => {
                docs.insert("description".into(), Value::from(arg.value.clone()));
            }
            other => {
                cx.error_at(
                    &arg.loc,
                    format!(
                        "`{other}` is not an argument of `{}`; it takes `url=` and `description=`{}",
                        m.display(),
                        did_you_mean(other, ["url", "description"])
                    ),
                );
                return None;
            }
        }
    }
    let url = docs.get("url").and_then(Value::as_str).unwrap_or_default();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return bad(
            cx,
            m,
            format!("`url={url}` is not an http(s) URL; it needs `url=https://...`"),
        );
    }
    Some(Value::Object(docs))
}

/// The last part of a marker's name (`Minimum` of `+kubebuilder:validation:Minimum`).
pub(super) fn short_name(m: &Marker) -> &'static str {
    m.name.rsplit(':').next().unwrap_or(m.name)
}

/// A mistake in a marker's value, reported at the value.
pub(super) fn bad<T>(cx: &mut Ctxt, m: &Marker, what: String) -> Option<T> {
    cx.error_at(&m.value_loc, format!("`{}`: {what}", m.display()));
    None
}

/// The key and value of a value validation (bounds, lengths, counts, pattern, format, enum,
/// default); [`structural`] for the other markers. `None`: no key (a mistake, reported, or a
/// marker that sets nothing here).
fn keyword(cx: &mut Ctxt, m: &Marker, s: &Shape<'_>) -> Option<(&'static str, Value)> {
    let value = m.value.as_deref().unwrap_or_default();
    Some(match short_name(m) {
        k @ ("Minimum" | "Maximum" | "MultipleOf") => {
            let key = match k {
                "Minimum" => "minimum",
                "Maximum" => "maximum",
                _ => "multipleOf",
            };
            (key, bound(cx, m, value, s)?)
        }
        k @ ("ExclusiveMinimum" | "ExclusiveMaximum") => {
            let Ok(b) = value.parse::<bool>() else {
                return bad(cx, m, format!("`{value}` is not `true` or `false`"));
            };
            (
                if k == "ExclusiveMinimum" {
                    "exclusiveMinimum"
                } else {
                    "exclusiveMaximum"
                },
                Value::from(b),
            )
        }
        k @ ("MinLength" | "MaxLength" | "MinItems" | "MaxItems" | "MinProperties"
        | "MaxProperties") => {
            let Ok(n) = value.parse::<u64>() else {
                return bad(cx, m, format!("`{value}` is not a non-negative integer"));
            };
            let key = match k {
                "MinLength" => "minLength",
                "MaxLength" => "maxLength",
                "MinItems" => "minItems",
                "MaxItems" => "maxItems",
                "MinProperties" => "minProperties",
                _ => "maxProperties",
            };
            (key, Value::from(n))
        }
        "UniqueItems" => {
            let Ok(b) = value.parse::<bool>() else {
                return bad(cx, m, format!("`{value}` is not `true` or `false`"));
            };
            if !b {
                return None;
            }
            // Kubernetes rejects `uniqueItems: true` in structural schemas; a set list is
            // how the API server enforces unique items.
            if let Shape::Array(_) = s {
                ("x-kubernetes-list-type", Value::from("set"))
            } else {
                return None;
            }
        }
        "Pattern" => (
            "pattern",
            Value::from(
                value
                    .strip_prefix('`')
                    .and_then(|v| v.strip_suffix('`'))
                    .unwrap_or(value),
            ),
        ),
        // `Format=""`: no format, not even the one the Rust type implies (`int64` for
        // `i64`), as in a schema that says only `type: integer`.
        "Format" if value == "\"\"" => ("format", Value::Null),
        "Format" => ("format", Value::from(value)),
        "Enum" => ("enum", enum_values(cx, m, value, s)),
        "default" => match typed_value(value, s) {
            Ok(v) => ("default", v),
            Err(e) => return bad(cx, m, e),
        },
        // Documentation only: shown by `kubectl explain` and API reference tools.
        "title" => ("title", Value::from(crate::attr::marker::unquoted(value))),
        "example" => match typed_value(value, s) {
            Ok(v) => ("example", v),
            Err(e) => return bad(cx, m, e),
        },
        other => return structural(cx, m, other, value),
    })
}

/// The key and value of a marker about the schema's structure (`EmbeddedResource`,
/// `PreserveUnknownFields`, `Type`, `nullable`, `listType`, `mapType`, `structType`).
fn structural(cx: &mut Ctxt, m: &Marker, name: &str, value: &str) -> Option<(&'static str, Value)> {
    Some(match name {
        "EmbeddedResource" | "XEmbeddedResource" => {
            ("x-kubernetes-embedded-resource", Value::from(true))
        }
        "PreserveUnknownFields" | "XPreserveUnknownFields" => {
            ("x-kubernetes-preserve-unknown-fields", Value::from(true))
        }
        "Type" => {
            const TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "object", "array"];
            if !TYPES.contains(&value) {
                return bad(
                    cx,
                    m,
                    format!(
                        "`{value}` is not one of {}{}",
                        TYPES.join(", "),
                        did_you_mean(value, TYPES)
                    ),
                );
            }
            ("type", Value::from(value))
        }
        "nullable" => match value {
            "true" => ("nullable", Value::from(true)),
            // Drops the `nullable: true` kube writes for every `Option`.
            "false" => ("nullable", Value::Null),
            other => return bad(cx, m, format!("`{other}` is not `true` or `false`")),
        },
        k @ ("listType" | "mapType" | "structType") => {
            let allowed: &[&str] = if k == "listType" {
                &["atomic", "set", "map"]
            } else {
                &["atomic", "granular"]
            };
            if !allowed.contains(&value) {
                return bad(
                    cx,
                    m,
                    format!(
                        "`{value}` is not one of {}{}",
                        allowed.join(", "),
                        did_you_mean(value, allowed.iter().copied())
                    ),
                );
            }
            // `+structType` is written as `x-kubernetes-map-type` too.
            let key = if k == "listType" {
                "x-kubernetes-list-type"
            } else {
                "x-kubernetes-map-type"
            };
            (key, Value::from(value))
        }
        _ => return None,
    })
}

/// A marker value as JSON of the field's shape, or an error message.
pub(super) fn typed_value(text: &str, shape: &Shape<'_>) -> Result<Value, String> {
    let unquoted = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    match shape {
        Shape::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not an integer")),
        Shape::Number => text
            .parse::<f64>()
            .ok()
            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
            .ok_or_else(|| format!("`{text}` is not a number")),
        Shape::Bool => text
            .parse::<bool>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not `true` or `false`")),
        // A JSON string (`"a \"b\""`) is read as JSON; anything else as written.
        Shape::String => Ok(serde_json::from_str::<String>(text)
            .map_or_else(|_| Value::from(unquoted), Value::from)),
        Shape::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()) => {
            Ok(Value::from(unquoted))
        }
        Shape::Array(_) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Array(_)) => Ok(v),
            _ => Err(format!("`{text}` is not a JSON list such as `[\"a\"]`")),
        },
        Shape::Map(_) | Shape::Struct(_) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(format!(
                "`{text}` is not a JSON object such as `{{\"a\":1}}`"
            )),
        },
        _ => Ok(serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::from(unquoted))),
    }
}

/// A number for Minimum/Maximum/MultipleOf: an integer when it is one.
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

/// The number of a `Minimum`, `Maximum` or `MultipleOf` marker, or `None` (reported) when
/// `value` is not one. What kube-apiserver 1.36 stores although JSON Schema frowns on it (a
/// fraction on an integer, a `MultipleOf` not above 0) is kept, with a warning.
fn bound(cx: &mut Ctxt, m: &Marker, value: &str, s: &Shape<'_>) -> Option<Value> {
    let Some(n) = number(value) else {
        cx.error_at(
            &m.value_loc,
            format!("`{}`: `{value}` is not a number", m.display()),
        );
        return None;
    };
    if matches!(s, Shape::Integer) && !n.is_i64() {
        cx.warn_at(
            &m.value_loc,
            format!(
                "`{}`: `{value}` is not an integer, and the field is; kube-apiserver accepts it as written",
                m.display()
            ),
        );
    }
    if m.name.ends_with("MultipleOf") && n.as_f64().is_some_and(|f| f <= 0.0) {
        cx.warn_at(
            &m.value_loc,
            format!(
                "`{}`: `{value}` is not greater than 0, as JSON Schema wants; kube-apiserver accepts it as written",
                m.display()
            ),
        );
    }
    Some(n)
}

/// The values of an `Enum` marker as the field's type reads them. kube-apiserver 1.36
/// accepts a value of another type (no value of the field can equal it): kept as JSON reads
/// it, with a warning.
fn enum_values(cx: &mut Ctxt, m: &Marker, value: &str, s: &Shape<'_>) -> Value {
    let mut values = Vec::new();
    for v in value.split(';').filter(|v| !v.is_empty()) {
        let text = v.trim();
        match typed_value(text, s) {
            Ok(v) => values.push(v),
            Err(e) => {
                cx.warn_at(
                    &m.value_loc,
                    format!(
                        "`{}`: {e}; kube-apiserver accepts it as written, and no value of the field equals it",
                        m.display()
                    ),
                );
                values.push(
                    serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::from(text)),
                );
            }
        }
    }
    Value::Array(values)
}

/// The pattern kube-apiserver's quantity parser accepts (controller-gen writes it for
/// `resource.Quantity`): without it a CRD stores `storage: banana`, and the controller then
/// fails to read the object on every retry.
pub(crate) const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// What a field of type `Quantity` (also in a list or as a map's values) gets in the
/// schema, as controller-gen writes it: an integer or a string of the quantity pattern.
/// k8s-openapi's schema says only `x-kubernetes-int-or-string`. A marker on the field
/// (its own `Pattern`) is applied after this and wins.
pub(super) fn quantity_patch(ty: &syn::Type, name: &str) -> Option<Patch> {
    let mut path = vec![name.to_owned()];
    let mut ty = crate::ast::inner(ty);
    for _ in 0..2 {
        let syn::Type::Path(p) = ty else {
            return None;
        };
        let last = p.path.segments.last()?;
        let args = crate::ast::generic_args(ty);
        ty = match last.ident.to_string().as_str() {
            "Quantity" if args.is_empty() => {
                let mut set = Map::new();
                set.insert(
                    "anyOf".into(),
                    json!([{"type": "integer"}, {"type": "string"}]),
                );
                set.insert("pattern".into(), Value::from(QUANTITY_PATTERN));
                set.insert("x-kubernetes-int-or-string".into(), Value::from(true));
                return Some(Patch::Schema { path, set });
            }
            "Vec" => {
                path.push("[]".into());
                crate::ast::inner(args.first()?)
            }
            "BTreeMap" | "HashMap" => {
                path.push("{}".into());
                crate::ast::inner(args.get(1)?)
            }
            _ => return None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The derive's expansion of a spec whose `size` field carries `marker`.
    fn expand(marker: &str) -> String {
        let doc = format!(" {marker}");
        crate::derive_gen_client(quote! {
            #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
            #[kube(group = "demo.example.com", version = "v1", kind = "Widget", namespaced)]
            pub struct WidgetSpec {
                #[doc = #doc]
                pub size: Option<i32>,
            }
        })
        .to_string()
    }

    #[test]
    fn documentation_markers_set_their_keys() {
        for (marker, want) in [
            (
                "+kubebuilder:title=\"Widget size\"",
                r#"{"title":"Widget size"}"#,
            ),
            ("+kubebuilder:example=3", r#"{"example":3}"#),
            (
                "+kubebuilder:externalDocs:url=https://example.com/size,description=Sizes",
                r#"{"externalDocs":{"description":"Sizes","url":"https://example.com/size"}}"#,
            ),
            (
                "+kubebuilder:externalDocs:url=<https://example.com/size>",
                r#"{"externalDocs":{"url":"https://example.com/size"}}"#,
            ),
        ] {
            let out = expand(marker);
            assert!(!out.contains("compile_error"), "{marker}: {out}");
            assert!(out.contains(want), "{marker}: {out}");
        }
    }

    /// The derive's expansion of a spec whose field `field` carries the doc lines `docs`.
    fn expand_field(docs: &[&str], field: proc_macro2::TokenStream) -> String {
        let docs = docs.iter().map(|d| format!(" {d}"));
        crate::derive_gen_client(quote! {
            #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
            #[kube(group = "demo.example.com", version = "v1", kind = "Widget", namespaced)]
            pub struct WidgetSpec {
                #(#[doc = #docs])*
                #field
            }
        })
        .to_string()
    }

    #[test]
    fn an_alias_next_to_its_marker_is_read_once_and_kubebuilder_default_wins() {
        let size = quote!(pub size: Option<i32>,);
        let out = expand_field(&["+optional", "+k8s:optional"], size.clone());
        assert!(!out.contains("compile_error"), "{out}");
        let out = expand_field(&["+default=1", "+kubebuilder:default=2"], size.clone());
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains(r#"{"default":2}"#) && !out.contains(r#""default":1"#),
            "{out}"
        );
        let out = expand_field(&["+default=1"], size);
        assert!(out.contains(r#"{"default":1}"#), "{out}");
    }

    #[test]
    fn a_schemaless_quantity_keeps_nothing_of_its_type() {
        let out = expand_field(
            &[
                "+kubebuilder:validation:Schemaless",
                "+kubebuilder:validation:Type=string",
            ],
            quote!(pub limit: Option<k8s_openapi::apimachinery::pkg::api::resource::Quantity>,),
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("anyOf") && !out.contains("pattern"), "{out}");
    }

    #[test]
    fn a_union_marker_on_a_field_that_is_not_a_struct_is_refused() {
        let out = expand_field(
            &["+kubebuilder:validation:ExactlyOneOf=a;b"],
            quote!(pub name: Option<String>,),
        );
        assert!(
            out.contains("compile_error") && out.contains("sits on a string; put it on the struct"),
            "{out}"
        );
    }

    #[test]
    fn documentation_markers_refuse_what_the_api_server_would() {
        for (marker, want) in [
            ("+kubebuilder:example=big", "`big` is not an integer"),
            (
                "+kubebuilder:externalDocs:url=example.com",
                "`url=example.com` is not an http(s) URL",
            ),
            (
                "+kubebuilder:externalDocs:url=https://example.com,title=Sizes",
                "`title` is not an argument of `+kubebuilder:externalDocs`",
            ),
        ] {
            let out = expand(marker);
            assert!(
                out.contains("compile_error") && out.contains(want),
                "{marker}: {out}"
            );
        }
    }
}
