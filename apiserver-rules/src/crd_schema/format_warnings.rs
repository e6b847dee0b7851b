//! Warnings: `unrecognized format` for formats the server ignores for the node's type.

use serde_json::Value;

use super::{Obj, children, text};

/// `unrecognized format` warnings for formats the server ignores for the node's type.
pub(super) fn formats(s: &Obj, warnings: &mut Vec<String>) {
    if let Some(format) = s.get("format").and_then(Value::as_str) {
        let known: &[&str] = match text(s, "type") {
            "integer" => &["int32", "int64"],
            "number" => &["float", "double"],
            "string" | "" => &[
                "bsonobjectid",
                "uri",
                "email",
                "hostname",
                "ipv4",
                "ipv6",
                "cidr",
                "mac",
                "uuid",
                "uuid3",
                "uuid4",
                "uuid5",
                "isbn",
                "isbn10",
                "isbn13",
                "creditcard",
                "ssn",
                "hexcolor",
                "rgbcolor",
                "byte",
                "password",
                "date",
                "duration",
                "datetime",
                "k8sshortname",
                "k8slongname",
            ],
            _ => &[],
        };
        let normalized: String = format.chars().filter(|c| *c != '-').collect();
        if !known.is_empty() && !known.contains(&normalized.as_str()) {
            let w = format!("unrecognized format \"{format}\"");
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    for (_, child) in children(s) {
        if let Some(child) = child.as_object() {
            formats(child, warnings);
        }
    }
}
