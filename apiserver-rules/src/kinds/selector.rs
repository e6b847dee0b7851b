//! What the kinds served for operators share: label selectors (`ValidateLabelSelector`),
//! port numbers and names, IP addresses and CIDRs, each with kube-apiserver's messages.

use std::net::IpAddr;

use serde_json::{Value, json};

use crate::field::FieldError;
use crate::names::{label_value, qualified_name};

/// `ValidateLabelSelector`: `matchLabels` keys and values, then each expression's key,
/// operator and values.
pub(crate) fn label_selector(selector: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let labels = format!("{at}.matchLabels");
    for (k, v) in super::entries(selector, "matchLabels") {
        for msg in qualified_name(k) {
            errors.push(FieldError::invalid_str(&labels, k, msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in label_value(v) {
            errors.push(FieldError::invalid_str(&labels, v, msg));
        }
    }
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    for (i, e) in expressions.into_iter().flatten().enumerate() {
        let at = format!("{at}.matchExpressions[{i}]");
        let values = e
            .get("values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" | "NotIn" if values == 0 => errors.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if values > 0 => errors.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errors.push(FieldError::invalid_str(
                format!("{at}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        for msg in qualified_name(key) {
            errors.push(FieldError::invalid_str(format!("{at}.key"), key, msg));
        }
    }
}

/// `IsValidPortNum` at `at`, when `port` is not in 1..=65535.
pub(crate) fn port_number(port: i64, at: &str, errors: &mut Vec<FieldError>) {
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            at,
            &json!(port),
            "must be between 1 and 65535, inclusive",
        ));
    }
}

/// `IsValidPortName`'s messages.
pub(crate) fn port_name(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name.len() > 15 {
        out.push("must be no more than 15 characters".to_owned());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

/// An IP address as Go's `net.ParseIP` reads it.
pub(crate) fn ip(s: &str) -> Option<IpAddr> {
    s.parse().ok()
}

/// A CIDR's network address (as a 128-bit number, IPv4 in the low bits), prefix length
/// and address width, when it parses.
pub(crate) fn cidr(s: &str) -> Option<(u128, u32, u32)> {
    let (addr, prefix) = s.split_once('/')?;
    let prefix: u32 = prefix.parse().ok()?;
    let (bits, width) = match ip(addr)? {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    if prefix > width {
        return None;
    }
    let host = if prefix == width {
        0
    } else {
        (1u128 << (width - prefix)) - 1
    };
    Some((bits & !host, prefix, width))
}

/// Whether CIDR `inner` lies strictly inside CIDR `outer`.
pub(crate) fn strict_subset(outer: (u128, u32, u32), inner: (u128, u32, u32)) -> bool {
    let (net, prefix, width) = outer;
    if inner.2 != width || inner.1 <= prefix {
        return false;
    }
    let mask = if prefix == 0 {
        0
    } else {
        !((1u128 << (width - prefix)) - 1)
    };
    inner.0 & mask == net
}
