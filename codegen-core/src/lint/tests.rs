//! The derives' lint: warnings only under `+kube-codegen:lint`, as deprecation notes at the
//! field; a silence without a reason is a compile error.

use quote::quote;

/// The `#[deprecated(note = ...)]` notes of an expansion: the derive's warnings.
fn notes(expansion: &proc_macro2::TokenStream) -> Vec<String> {
    let text = expansion.to_string();
    text.split("deprecated (note = \"")
        .skip(1)
        .map(|rest| rest.split("\")").next().unwrap_or_default().to_owned())
        .collect()
}

fn spec(docs: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    quote! {
        #docs
        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(group = "demo.example.com", version = "v1", kind = "Widget", namespaced)]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetSpec {
            /// +optional
            pub paused: Option<bool>,
            /// +required
            /// +kubebuilder:validation:MaxLength=63
            pub name: String,
        }
    }
}

#[test]
fn the_derive_warns_at_the_field_when_asked() {
    let out = crate::derive_gen_client(spec(quote!(#[doc = " +kube-codegen:lint"])));
    let found = notes(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("kube-codegen lint `no-bools`: `paused` is a `bool`"),
        "{}",
        found[0]
    );
    // Not asked: no warnings, the expansion as before.
    assert!(notes(&crate::derive_gen_client(spec(quote!()))).is_empty());
}

#[test]
fn the_derive_honours_silences_and_refuses_one_without_a_reason() {
    let silenced = quote! {
        #[doc = " +kube-codegen:lint"]
        #[doc = " +kube-codegen:lint:ignore=no-bools mirrors a Go API"]
    };
    let out = crate::derive_gen_client(spec(silenced));
    assert!(notes(&out).is_empty(), "{out}");
    assert!(!out.to_string().contains("compile_error"), "{out}");

    let bare = quote! {
        #[doc = " +kube-codegen:lint"]
        #[doc = " +kube-codegen:lint:ignore=no-bools"]
    };
    let out = crate::derive_gen_client(spec(bare)).to_string();
    assert!(
        out.contains("compile_error") && out.contains("needs a reason after the rule id"),
        "{out}"
    );
}

#[test]
fn crd_markers_lints_a_nested_struct_when_asked() {
    let out = crate::derive_crd_markers(quote! {
        /// +kube-codegen:lint
        pub struct Limits {
            /// +optional
            pub ratio: Option<f64>,
        }
    });
    let found = notes(&out);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("kube-codegen lint `no-floats`"),
        "{}",
        found[0]
    );
}

#[test]
fn the_derive_reports_maps_of_non_strings_and_durations() {
    let out = crate::derive_crd_markers(quote! {
        /// +kube-codegen:lint
        pub struct Budget {
            /// +optional
            pub zones: Option<std::collections::BTreeMap<String, i32>>,
            /// +optional
            pub selector: Option<std::collections::BTreeMap<String, String>>,
            /// +optional
            pub grace: Option<std::time::Duration>,
        }
    });
    let found = notes(&out);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("kube-codegen lint `no-maps`: `zones` holds a map of `i32`"),
        "{}",
        found[0]
    );
    assert!(
        found[1].starts_with("kube-codegen lint `no-durations`: `grace` is a `Duration`"),
        "{}",
        found[1]
    );
}
