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

/// Names a kind's type cannot take: what the files import writes use without a path (the
/// prelude's types and traits, the imports, the derives), which a type of the same name
/// would shadow there.
const SHADOWED: &[&str] = &[
    "AsMut",
    "AsRef",
    "BTreeMap",
    "Box",
    "Clone",
    "Copy",
    "CustomResource",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Hash",
    "IntOrString",
    "Into",
    "IntoIterator",
    "Iterator",
    "JsonSchema",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Quantity",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "Time",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// The Rust type of a kind (`#[kube(root = ...)]` when it is not the kind itself): the kind
/// when it is an UpperCamel name `generate` takes; otherwise its UpperCamel form (`my-kind`
/// and `gadget` give `MyKind` and `Gadget`), with `Kind` after a name that cannot be a type
/// here: a keyword (`Self`), one whose snake case cannot name the module `generate` writes
/// (`Super`, `Crate`: `super`, `crate`) or that module's sibling (`applyconfigurations`), or a
/// name the file uses for something else ([`SHADOWED`]: `String`, `Time`).
pub fn kind_type(kind: &str) -> String {
    let plain = naming::module_segment(kind).is_ok_and(|s| s == kind)
        && kind.starts_with(|c: char| c.is_ascii_uppercase());
    let base = if plain {
        kind.to_owned()
    } else {
        upper_camel(kind)
    };
    let snake = generated_stem(&base);
    let usable = naming::module_segment(&base).is_ok_and(|s| s == base)
        && naming::module_segment(&snake).is_ok()
        && snake != "applyconfigurations"
        && !SHADOWED.contains(&base.as_str());
    if usable { base } else { format!("{base}Kind") }
}

/// The stem of the client file `generate` writes for a kind's type (heck's snake case, as
/// `generate` spells it): two types of a version must not share it.
pub fn generated_stem(rust_kind: &str) -> String {
    heck::ToSnakeCase::to_snake_case(rust_kind)
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
    fn kinds_become_type_names_generate_takes() {
        for (kind, rust) in [
            ("Gadget", "Gadget"),
            ("CertificateRequest", "CertificateRequest"),
            ("FOOBar", "FOOBar"),
            ("gadget", "Gadget"),
            ("my-kind", "MyKind"),
            ("type", "Type"),
            ("Self", "SelfKind"),
            ("Super", "SuperKind"),
            ("Crate", "CrateKind"),
            ("String", "StringKind"),
            ("Time", "TimeKind"),
            ("Applyconfigurations", "ApplyconfigurationsKind"),
            ("Fn", "FnKind"),
        ] {
            assert_eq!(kind_type(kind), rust, "{kind}");
            let stem = generated_stem(rust);
            assert!(
                naming::module_segment(&stem).is_ok()
                    && naming::module_segment(rust).is_ok_and(|s| s == rust),
                "{kind}"
            );
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
