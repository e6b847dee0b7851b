//! Name formats: DNS-1123 labels and subdomains, DNS-1035 labels, path segments, label keys
//! (qualified names) and label values, each returning the real server's messages.
//!
//! Object names report lengths in `characters`, label keys and values in `bytes`: the real
//! server checks them with two generations of the same functions, and so do we.

/// Which length unit a message names.
#[derive(Clone, Copy)]
enum Unit {
    Characters,
    Bytes,
}

fn max_len(n: usize, unit: Unit) -> String {
    match unit {
        Unit::Characters => format!("must be no more than {n} characters"),
        Unit::Bytes => format!("must be no more than {n} bytes"),
    }
}

/// `msg (e.g. 'a',  or 'b', regex used for validation is 're')`, with the double space the
/// real server prints before "or".
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (e.g. ");
    for (i, ex) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{ex}', "));
    }
    out.push_str(&format!("regex used for validation is '{re}')"));
    out
}

const LABEL_RE: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN_RE: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_RE: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const KEY_RE: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const VALUE_RE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn alnum_lower(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && alnum_lower(b[0])
        && alnum_lower(b[b.len() - 1])
        && b.iter().all(|&c| alnum_lower(c) || c == b'-')
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_key_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn label(value: &str, unit: Unit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, unit));
    }
    if !is_label(value) {
        if is_subdomain(value) {
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                LABEL_RE,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

fn subdomain(value: &str, unit: Unit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len(253, unit));
    }
    if !is_subdomain(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            SUBDOMAIN_RE,
            &["example.com"],
        ));
    }
    errs
}

/// A DNS-1123 label (namespaces, services, statefulsets); empty when valid.
pub fn dns1123_label(value: &str) -> Vec<String> {
    label(value, Unit::Characters)
}

/// A DNS-1123 subdomain (most object names); empty when valid.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    subdomain(value, Unit::Characters)
}

/// A DNS-1035 label (CRD versions); empty when valid.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, Unit::Characters));
    }
    let b = value.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && alnum_lower(b[b.len() - 1])
        && b.iter().all(|&c| alnum_lower(c) || c == b'-');
    if !ok {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_RE,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// A name that is one URL path segment (RBAC objects, and every object before storage).
pub fn path_segment(value: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for bad in [".", ".."] {
            if value == bad {
                return vec![format!("may not be '{bad}'")];
            }
        }
    }
    ["/", "%"]
        .iter()
        .filter(|bad| value.contains(**bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// A label key, annotation key or finalizer: `[prefix/]name` (Go's `IsQualifiedName`).
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    subdomain(prefix, Unit::Bytes)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(KEY_MSG, KEY_RE, &["MyName", "my.name", "123-abc"])
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63, Unit::Bytes)));
    }
    if !is_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(KEY_MSG, KEY_RE, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

/// A label value: empty, or up to 63 characters of the key alphabet.
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63, Unit::Bytes));
    }
    if !value.is_empty() && !is_key_name(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            VALUE_RE,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// How a kind's object names are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// A DNS-1123 subdomain (most kinds, custom resources).
    Subdomain,
    /// A DNS-1123 label (namespaces, services, statefulsets).
    Label,
    /// Only the path-segment check (RBAC kinds, PodDisruptionBudgets, core Events).
    PathSegment,
    /// A subdomain of at most 52 characters (CronJobs).
    CronJob,
}

impl NameRule {
    /// The messages for `name`; `prefix` for a `generateName`, whose trailing dash is masked.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = if prefix && self != NameRule::PathSegment {
            masked = mask_trailing_dash(name);
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => dns1123_subdomain(name),
            NameRule::Label => dns1123_label(name),
            NameRule::PathSegment => path_segment(name, prefix),
            NameRule::CronJob => dns1123_subdomain(name),
        }
    }
}

/// A `generateName` ending in `-` is checked as if it ended in a letter: the real server
/// replaces the last two characters with `a`.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        match name.get(..cut) {
            Some(head) => format!("{head}a"),
            None => name.to_owned(),
        }
    } else {
        name.to_owned()
    }
}

/// `IsConfigMapKey`: a key of a ConfigMap's or Secret's data.
pub fn config_key(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > 253 {
        out.push(max_len(253, Unit::Characters));
    }
    if value.is_empty()
        || !value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        out.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if value == "." {
        out.push("must not be '.'".into());
    } else if value == ".." {
        out.push("must not be '..'".into());
    } else if value.starts_with("..") {
        out.push("must not start with '..'".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_messages() {
        assert!(dns1123_subdomain("a.b-c").is_empty());
        assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
        assert!(dns1123_label("Bad_NS")[0].contains("'my-name',  or '123-abc'"));
        assert_eq!(
            dns1123_subdomain(&"a".repeat(254))[0],
            "must be no more than 253 characters"
        );
        assert!(qualified_name("example.com/My_Name.1").is_empty());
        assert_eq!(qualified_name("/x"), ["prefix part must be non-empty"]);
        assert!(qualified_name("a/b/c")[0].starts_with("a valid label key must consist"));
        assert_eq!(qualified_name("x/").len(), 2, "empty name and the regex");
        assert_eq!(
            qualified_name(&"a".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        assert!(label_value("").is_empty() && label_value("a.b_c-1").is_empty());
        assert_eq!(label_value("-bad").len(), 1);
        assert_eq!(path_segment("..", false), ["may not be '..'"]);
        assert_eq!(
            path_segment("a/b%", false),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(NameRule::Subdomain.check("gen-", true).is_empty());
        assert!(!NameRule::Subdomain.check("Gen-", true).is_empty());
    }
}
