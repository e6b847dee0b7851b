//! Names derived from the resource identity, matching kube-derive and code-generator.

use heck::ToSnakeCase;

/// kube-derive's pluralizer, so accessor names match the URLs kube builds.
pub fn plural_of(singular: &str) -> String {
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| singular.ends_with(e))
    {
        return format!("{singular}es");
    }
    let mut chars = singular.chars();
    if chars.next_back() == Some('y')
        && chars
            .clone()
            .next_back()
            .is_some_and(|c| !"aeiou".contains(c))
    {
        return format!("{}ies", chars.as_str());
    }
    format!("{singular}s")
}

/// The Go group name: the first DNS label of the group, as code-generator derives it.
pub fn group_go_name(group: &str) -> String {
    let first = group.split('.').next().unwrap_or(group);
    let mut chars = first.chars();
    match chars.next() {
        Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `samplecontroller_v1alpha1`: the clientset accessor of a group/version.
pub(crate) fn group_version_accessor(group_go_name: &str, version: &str) -> String {
    format!("{}_{}", group_go_name.to_snake_case(), version)
}

/// The module (and directory) name of a group: its Go name in snake case.
pub fn group_module(group_go_name: &str) -> String {
    group_go_name.to_snake_case()
}

/// Whether `version` has the form `v1`, `v1beta2` or `v2alpha1`.
pub fn is_kube_version(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return true;
    }
    let tail = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"));
    tail.is_some_and(|t| {
        !t.is_empty() && !t.starts_with('0') && t.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The one way generated code makes an identifier: `name` as is, raw (`r#type`) when it is a
/// Rust keyword. Names are validated before they get here (`module_segment`,
/// `is_ident_like`, kinds in the model); one that still cannot be an identifier becomes
/// one with `_` for each character that cannot be in it, rather than a panic.
pub fn ident(name: &str) -> proc_macro2::Ident {
    let span = proc_macro2::Span::call_site();
    match module_segment(name) {
        Ok(segment) => match segment.strip_prefix("r#") {
            Some(raw) => proc_macro2::Ident::new_raw(raw, span),
            None => proc_macro2::Ident::new(&segment, span),
        },
        Err(_) => {
            let mut clean: String = name
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if !clean.starts_with(|c: char| c.is_alphabetic()) {
                clean.insert(0, 'x');
            }
            proc_macro2::Ident::new(&clean, span)
        }
    }
}

/// Keywords that cannot be raw identifiers either.
const NOT_RAW: &[&str] = &["_", "crate", "self", "super", "Self"];

/// The words syn does not read as a plain identifier (strict, reserved and weak keywords
/// but `union`, `macro_rules` and `'static`), so `r#` comes before them.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "if", "impl", "in", "let", "loop",
    "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "static",
    "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual",
    "where", "while", "yield",
];

/// `text` (`crate::apis::widgets::v1::r#type::Widget`) as a path, built segment by segment
/// rather than lexed: generation builds one per kind and file.
pub(crate) fn path(text: &str) -> syn::Result<syn::Path> {
    let span = proc_macro2::Span::call_site();
    let mut segments = syn::punctuated::Punctuated::new();
    for segment in text.split("::") {
        let ident = match segment.strip_prefix("r#") {
            Some(raw) if module_segment(raw).is_ok_and(|s| s.starts_with("r#")) => {
                proc_macro2::Ident::new_raw(raw, span)
            }
            None if matches!(segment, "crate" | "self" | "super" | "Self")
                || module_segment(segment).is_ok_and(|s| s == segment) =>
            {
                proc_macro2::Ident::new(segment, span)
            }
            _ => return syn::parse_str(text),
        };
        segments.push(syn::PathSegment::from(ident));
    }
    Ok(syn::Path {
        leading_colon: None,
        segments,
    })
}

/// `name` as one segment of a Rust path: itself, or `r#name` for a keyword; an error for a
/// name that cannot be a module (`my-group`, `1x`, `_`, `self`).
pub fn module_segment(name: &str) -> Result<String, String> {
    if NOT_RAW.contains(&name) {
        return Err(format!(
            "`{name}` is a Rust keyword that cannot name a module"
        ));
    }
    if name.starts_with("r#") {
        return Err(format!(
            "`{name}` is written as a raw identifier; use the plain name"
        ));
    }
    if name.is_ascii() {
        // The common case, decided without lexing: lexing records the text for span
        // locations, and this runs for every name of every kind.
        let mut chars = name.chars();
        let starts = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if starts && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Ok(if KEYWORDS.contains(&name) {
                format!("r#{name}")
            } else {
                name.to_owned()
            });
        }
    } else if syn::parse_str::<syn::Ident>(name).is_ok() {
        return Ok(name.to_owned());
    } else {
        let raw = format!("r#{name}");
        if syn::parse_str::<syn::Ident>(&raw).is_ok() {
            return Ok(raw);
        }
    }
    Err(format!(
        "`{name}` is not a Rust identifier (letters, digits and `_`, not starting with a digit)"
    ))
}

/// Whether `plural` can name a resource and an accessor: lowercase letters and digits,
/// starting with a letter.
pub fn is_plural_name(plural: &str) -> bool {
    plural.starts_with(|c: char| c.is_ascii_lowercase())
        && plural
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Whether `name` can be a Rust identifier once used as written (`+groupGoName`) or in
/// snake case (module and accessor names).
pub fn is_ident_like(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && syn::parse_str::<syn::Ident>(&heck::ToSnakeCase::to_snake_case(name)).is_ok()
}

/// Whether `group` is a lowercase DNS subdomain such as `samplecontroller.k8s.io`.
pub fn is_dns_subdomain(group: &str) -> bool {
    !group.is_empty()
        && group.len() <= 253
        && group.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// How [`field_ident`] writes a name that is a Rust keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keywords {
    /// `type_`: k8s-openapi's rule, so built-in kinds' apply configurations read like the
    /// types.
    Underscore,
    /// `r#type`: a raw identifier, which serde's `rename_all = "camelCase"` maps back to the
    /// JSON name (the types `import` writes).
    Raw,
}

/// The Rust field name of the JSON property `json`, the one rule for built-in types and
/// imported CRDs: `podCIDRs` -> `pod_cidrs`, `insecureSkipTLSVerify` ->
/// `insecure_skip_tls_verify`, `network-policy` -> `network_policy`, `$ref` -> `ref_path`.
///
/// An underscore goes before a capital that follows a small letter or a digit, and before
/// the last capital of a run when a small letter follows it (`TLSVerify`), except a plural
/// `s` ending a word (`CIDRs`). Any other character that cannot be in a name is one
/// underscore (none at either end), a name that would start with a digit or be empty starts
/// with `f_`, and `self`, `super`, `crate` and `_`, which cannot be raw, get a trailing
/// underscore; other keywords follow `keywords`.
pub fn field_ident(json: &str, keywords: Keywords) -> syn::Ident {
    let name = match json {
        "$ref" => "ref_path".to_owned(),
        "$schema" => "schema".to_owned(),
        _ => snake_name(json),
    };
    if NOT_RAW.contains(&name.as_str()) {
        return quote::format_ident!("{}_", name);
    }
    let ident = ident(&name);
    match (keywords, ident.to_string().strip_prefix("r#")) {
        (Keywords::Underscore, Some(keyword)) => quote::format_ident!("{}_", keyword),
        _ => ident,
    }
}

/// `json` in snake case, by [`field_ident`]'s rules, before keywords are looked at.
fn snake_name(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let after = chars.get(i + 2).copied();
        if c.is_ascii_uppercase() {
            let after_small = prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            let plural = next == Some('s') && after.is_none_or(|a| a.is_ascii_uppercase());
            let run_ends = prev.is_some_and(|p| p.is_ascii_uppercase())
                && next.is_some_and(|n| !n.is_ascii_uppercase())
                && !plural;
            if (after_small || run_ends) && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("f_{out}")
    } else {
        out.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `module_segment` decided by lexing before its ASCII fast path.
    fn by_syn(name: &str) -> Option<String> {
        if NOT_RAW.contains(&name) || name.starts_with("r#") {
            return None;
        }
        if syn::parse_str::<syn::Ident>(name).is_ok() {
            return Some(name.to_owned());
        }
        let raw = format!("r#{name}");
        syn::parse_str::<syn::Ident>(&raw).ok().map(|_| raw)
    }

    #[test]
    fn paths_are_built_as_syn_parses_them() {
        for text in [
            "crate::apis::widgets::v1::widget::Widget",
            "crate::apis::r#type::v1::r#type",
            "super::applyconfigurations::FooApplyConfiguration",
            "self::x",
        ] {
            let built = path(text).unwrap();
            let parsed: syn::Path = syn::parse_str(text).unwrap();
            assert_eq!(
                quote::quote!(#built).to_string(),
                quote::quote!(#parsed).to_string()
            );
        }
        assert!(path("crate::my-group").is_err());
    }

    #[test]
    fn the_ascii_fast_path_decides_as_syn_does() {
        let mut names: Vec<&str> = KEYWORDS.to_vec();
        names.extend(NOT_RAW);
        names.extend([
            "foo",
            "Foo",
            "v1",
            "v1beta1",
            "_x",
            "x_",
            "gen",
            "union",
            "dyn",
            "Self_",
            "self2",
            "1x",
            "",
            "my-group",
            "a.b",
            "a b",
            "r#type",
            "r#",
            "ä",
            "__",
            "macro_rules",
            "static",
            "try",
            "typeof",
            "K8s",
            "x1y2",
        ]);
        for name in names {
            assert_eq!(module_segment(name).ok(), by_syn(name), "{name:?}");
        }
    }

    #[test]
    fn plurals_follow_kube_derive() {
        assert_eq!(plural_of("foo"), "foos");
        assert_eq!(plural_of("icecream"), "icecreams");
        assert_eq!(plural_of("policy"), "policies");
        assert_eq!(plural_of("gateway"), "gateways");
        assert_eq!(plural_of("box"), "boxes");
        assert_eq!(plural_of("mesh"), "meshes");
    }

    #[test]
    fn group_names_follow_code_generator() {
        assert_eq!(group_go_name("samplecontroller.k8s.io"), "Samplecontroller");
        assert_eq!(
            group_version_accessor("Samplecontroller", "v1alpha1"),
            "samplecontroller_v1alpha1"
        );
        assert_eq!(
            group_version_accessor("ExtensionsExample", "v1"),
            "extensions_example_v1"
        );
    }

    #[test]
    fn versions_and_groups_are_checked() {
        for ok in ["v1", "v1alpha1", "v2beta3", "v10"] {
            assert!(is_kube_version(ok), "{ok}");
        }
        for bad in ["1", "V1", "v", "v1alpha", "v01", "v1gamma1", "v1alpha01"] {
            assert!(!is_kube_version(bad), "{bad}");
        }
        assert!(is_plural_name("foos") && is_plural_name("v1things"));
        assert!(!is_plural_name("1foos") && !is_plural_name("foo-bars") && !is_plural_name(""));
        assert!(is_ident_like("Samplecontroller") && is_ident_like("ExtensionsExample"));
        assert!(!is_ident_like("1password") && !is_ident_like("foo-bar") && !is_ident_like("Type"));
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("foos").to_string(), "foos");
        assert!(is_dns_subdomain("samplecontroller.k8s.io"));
        assert!(!is_dns_subdomain("Sample.io"));
        assert!(!is_dns_subdomain("a..b"));
    }
}

#[cfg(test)]
mod ident_tests {
    use super::*;

    #[test]
    fn keywords_become_raw_and_impossible_names_are_reported() {
        assert_eq!(module_segment("apps"), Ok("apps".to_owned()));
        assert_eq!(module_segment("type"), Ok("r#type".to_owned()));
        assert_eq!(module_segment("async"), Ok("r#async".to_owned()));
        for bad in ["_", "self", "crate", "1x", "my-group", "r#type", ""] {
            assert!(module_segment(bad).is_err(), "{bad}");
        }
        assert_eq!(ident("type").to_string(), "r#type");
        assert_eq!(ident("my-group").to_string(), "my_group");
        assert_eq!(ident("1x").to_string(), "x1x");
    }

    #[test]
    fn built_in_fields_are_named_as_k8s_openapi_names_them() {
        for (json, rust) in [
            ("podCIDRs", "pod_cidrs"),
            ("hostIPs", "host_ips"),
            ("insecureSkipTLSVerify", "insecure_skip_tls_verify"),
            (
                "currentCPUUtilizationPercentage",
                "current_cpu_utilization_percentage",
            ),
            ("openAPIV3Schema", "open_api_v3_schema"),
            ("stubPKCS10Request", "stub_pkc_s10_request"),
            ("nonResourceURLs", "non_resource_urls"),
            ("seLinuxOptions", "se_linux_options"),
            ("type", "type_"),
            ("continue", "continue_"),
            ("$ref", "ref_path"),
            ("x-kubernetes-list-type", "x_kubernetes_list_type"),
        ] {
            assert_eq!(
                field_ident(json, Keywords::Underscore).to_string(),
                rust,
                "{json}"
            );
        }
    }

    #[test]
    fn imported_fields_keep_keywords_raw_with_the_same_rule_otherwise() {
        for (json, rust) in [
            ("type", "r#type"),
            ("self", "self_"),
            ("_", "f_"),
            ("2fa", "f_2fa"),
            ("X-Forwarded-For", "x_forwarded_for"),
            ("network..policy-", "network_policy"),
            ("hostIPs", "host_ips"),
            ("isCA", "is_ca"),
            ("ÿ", "f_"),
        ] {
            assert_eq!(field_ident(json, Keywords::Raw).to_string(), rust, "{json}");
        }
    }
}
