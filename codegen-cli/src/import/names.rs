//! Rust names for what a CRD names: fields from JSON properties, types and variants in
//! UpperCamelCase, and file stems of kinds.

use kube_codegen_core::naming;

/// `UpperCamel` of a JSON name: `fooBar` -> `FooBar`, `foo-bar.baz` -> `FooBarBaz`.
pub fn upper_camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                out.push(c.to_ascii_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        } else {
            up = true;
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'X');
    }
    out
}

/// The Rust field name of a JSON property: codegen-core's one rule, with a raw identifier
/// for keywords (`r#type`), which serde's camelCase maps back to the JSON name.
pub fn field_ident(json: &str) -> String {
    naming::field_ident(json, naming::Keywords::Raw).to_string()
}

/// The serde name of a Rust field under `rename_all = "camelCase"`: the generator's one rule.
pub fn serde_camel(rust: &str) -> String {
    kube_codegen_core::ast::renamed(rust.trim_start_matches("r#"), Some("camelCase"))
}

/// The Rust variant of a string enum value.
pub fn variant_ident(value: &str) -> String {
    if value.is_empty() {
        return "Empty".to_owned();
    }
    // Operators (`=`, `!=`, `=~`) spelled out rather than numbered.
    let spelled: String = if value.chars().any(|c| c.is_ascii_alphanumeric()) {
        value.to_owned()
    } else {
        value
            .chars()
            .map(|c| match c {
                '=' => " eq ",
                '!' => " not ",
                '~' => " tilde ",
                '<' => " lt ",
                '>' => " gt ",
                '+' => " plus ",
                '-' => " minus ",
                '*' => " star ",
                '/' => " slash ",
                '.' => " dot ",
                '%' => " percent ",
                '&' => " and ",
                '|' => " or ",
                _ => " ",
            })
            .collect()
    };
    let camel = upper_camel(&spelled);
    if camel == "Self" {
        return "Self_".to_owned();
    }
    camel
}

/// `CertificateRequest` -> `certificate_request`.
pub fn file_stem(kind: &str) -> String {
    field_ident(kind).trim_start_matches("r#").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_become_rust_names_that_serde_maps_back_or_renames() {
        for (json, rust, renamed) in [
            ("deploymentName", "deployment_name", false),
            ("isCA", "is_ca", true),
            ("network-policy", "network_policy", true),
            ("X-Forwarded-For", "x_forwarded_for", true),
            ("type", "r#type", false),
            ("self", "self_", false),
            ("2fa", "f_2fa", true),
            ("apiVersion", "api_version", false),
            ("hostIPs", "host_ips", true),
        ] {
            assert_eq!(field_ident(json), rust, "{json}");
            assert_eq!(serde_camel(&field_ident(json)) != json, renamed, "{json}");
        }
    }

    #[test]
    fn enum_values_become_variants() {
        for (value, variant) in [
            ("Never", "Never"),
            ("server auth", "ServerAuth"),
            ("=", "Eq"),
            ("!~", "NotTilde"),
            ("", "Empty"),
            ("1x", "X1x"),
        ] {
            assert_eq!(variant_ident(value), variant, "{value:?}");
        }
    }
}
