//! controller-gen's union markers on a struct: `+kubebuilder:validation:ExactlyOneOf=a;b`,
//! `AtMostOneOf` and `AtLeastOneOf`, each a CEL rule over which of the named fields are
//! set, with controller-gen's rule and message.

use serde_json::{Value, json};

use super::keyword::{bad, short_name};
use crate::ast::{Container, Shape, is_option, serde_flag};
use crate::attr::marker::{Marker, read_checked_elsewhere};
use crate::diag::{Ctxt, did_you_mean};

/// Whether `short` (the last part of a marker's name) is one of the union markers.
pub(super) fn is_union(short: &str) -> bool {
    matches!(short, "ExactlyOneOf" | "AtMostOneOf" | "AtLeastOneOf")
}

/// Where a union marker's rule goes among a struct's rules, as controller-gen orders them:
/// its own `XValidation` rules first, then `AtMostOneOf`, `ExactlyOneOf`, `AtLeastOneOf`.
pub(super) fn order(m: &Marker) -> u8 {
    match short_name(m) {
        "AtMostOneOf" => 1,
        "ExactlyOneOf" => 2,
        "AtLeastOneOf" => 3,
        _ => 0,
    }
}

/// The `x-kubernetes-validations` entry of union marker `m` on a struct of shape `s`, after
/// checking that it names optional fields of the struct.
pub(super) fn rule(cx: &mut Ctxt, m: &Marker, s: &Shape<'_>) -> Option<Value> {
    let value = m.value.as_deref().unwrap_or_default();
    let fields: Vec<&str> = value
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if fields.len() < 2 {
        return bad(
            cx,
            m,
            "names fewer than two fields; list the JSON names of the fields it is about, separated by `;` (`configMapRef;secretRef`)".into(),
        );
    }
    if let Some(nested) = fields.iter().find(|f| f.contains('.')) {
        return bad(
            cx,
            m,
            format!(
                "cannot reference the nested field `{nested}`; put the marker on the struct that has it"
            ),
        );
    }
    if !matches!(s, Shape::Struct(_) | Shape::Unknown) {
        return bad(
            cx,
            m,
            format!(
                "is about the fields of a struct, but it sits on {}; put it on the struct",
                s.describe()
            ),
        );
    }
    if let Shape::Struct(st) = s {
        let container = Container::read(st);
        let names: Vec<&str> = container
            .fields
            .iter()
            .filter_map(|f| f.json.as_deref())
            .collect();
        for name in &fields {
            let Some(field) = container
                .fields
                .iter()
                .find(|f| f.json.as_deref() == Some(name))
            else {
                return bad(
                    cx,
                    m,
                    format!(
                        "`{name}` is not a field of `{}`{}",
                        st.ident,
                        did_you_mean(name, names.iter().copied())
                    ),
                );
            };
            let marked = read_checked_elsewhere(&field.syn.attrs)
                .iter()
                .any(|m| matches!(m.name, "required" | "kubebuilder:validation:Required"));
            if marked {
                return bad(
                    cx,
                    m,
                    format!(
                        "`{name}` is marked required, so it is always set; a field of a union is optional"
                    ),
                );
            }
            if !is_option(field.ty) {
                let why = if container.default || serde_flag(&field.syn.attrs, "default") {
                    "its `#[serde(default)]` is a `default` in the schema, which the API server writes into every object"
                } else {
                    "it is required"
                };
                return bad(
                    cx,
                    m,
                    format!("`{name}` is always set ({why}); a field of a union is an `Option`"),
                );
            }
        }
    }
    let listed = format!("[{}]", fields.join(" "));
    // As rules reach them: `namespace` is `__namespace__` in CEL.
    let fields: Vec<String> = fields
        .iter()
        .map(|f| apiserver_rules::cel::escape(f).unwrap_or_else(|| (*f).to_owned()))
        .collect();
    let count = fields
        .iter()
        .map(|f| format!("(has(self.{f})?1:0)"))
        .collect::<Vec<_>>()
        .join("+");
    let (rule, message) = match short_name(m) {
        "AtMostOneOf" => (
            format!("{count} <= 1"),
            format!("at most one of the fields in {listed} may be set"),
        ),
        "ExactlyOneOf" => (
            format!("{count} == 1"),
            format!("exactly one of the fields in {listed} must be set"),
        ),
        _ => (
            fields
                .iter()
                .map(|f| format!("has(self.{f})"))
                .collect::<Vec<_>>()
                .join("||"),
            format!("at least one of the fields in {listed} must be set"),
        ),
    };
    Some(json!({"rule": rule, "message": message}))
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The derive's errors for a spec with `marker` on it.
    fn errors(marker: &str) -> String {
        let doc = format!(" {marker}");
        crate::derive_gen_client(quote! {
            #[doc = #doc]
            #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
            #[kube(group = "demo.example.com", version = "v1", kind = "Widget", namespaced)]
            #[serde(rename_all = "camelCase")]
            pub struct WidgetSpec {
                pub config_map_ref: Option<String>,
                pub secret_ref: Option<String>,
                /// +required
                pub inline: Option<String>,
                #[serde(default)]
                pub items: Vec<String>,
            }
        })
        .to_string()
    }

    #[test]
    fn a_union_of_optional_fields_is_accepted() {
        let out = errors("+kubebuilder:validation:ExactlyOneOf=configMapRef;secretRef");
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("exactly one of the fields in [configMapRef secretRef] must be set"),
            "{out}"
        );
    }

    #[test]
    fn a_union_must_name_optional_fields_of_the_struct() {
        for (marker, want) in [
            (
                "+kubebuilder:validation:AtMostOneOf=configMapRef;secretRf",
                "`secretRf` is not a field of `WidgetSpec`; did you mean `secretRef`?",
            ),
            (
                "+kubebuilder:validation:AtLeastOneOf=configMapRef",
                "names fewer than two fields",
            ),
            (
                "+kubebuilder:validation:AtLeastOneOf=configMapRef;spec.x",
                "cannot reference the nested field `spec.x`",
            ),
            (
                "+kubebuilder:validation:ExactlyOneOf=configMapRef;inline",
                "`inline` is marked required",
            ),
            (
                "+kubebuilder:validation:ExactlyOneOf=configMapRef;items",
                "`items` is always set (its `#[serde(default)]` is a `default` in the schema",
            ),
        ] {
            let out = errors(marker);
            assert!(out.contains("compile_error"), "{marker}: {out}");
            assert!(out.contains(want), "{marker}: {out}");
        }
    }
}
