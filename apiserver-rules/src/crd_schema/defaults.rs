//! Defaults against their own schema: no unknown fields, embedded resources with
//! `apiVersion` and `kind`, and every value validation (enum, bounds, pattern, ...).

use serde_json::Value;

use super::{Obj, flag, sub};
use crate::field::FieldError;
use crate::schema;

/// The defaults at and below `n`; `root` for the schema's root, whose own default and
/// resource meta are not checked here.
pub(super) fn defaults(s: &Obj, n: &str, root: bool, errs: &mut Vec<FieldError>) {
    if let Some(d) = s.get("default")
        && !root
    {
        let d_path = format!("{n}.default");
        let node = Value::Object(s.clone());
        let mut pruned = d.clone();
        if !schema::prune(&node, &mut pruned).is_empty() {
            errs.push(FieldError::invalid(
                &d_path,
                d,
                "must not have unknown fields",
            ));
        }
        let embedded = flag(s, "x-kubernetes-embedded-resource");
        let missing: Vec<&str> = ["apiVersion", "kind"]
            .into_iter()
            .filter(|k| embedded && d.is_object() && d.get(*k).is_none())
            .collect();
        if missing.is_empty() {
            if !(d.is_null() && flag(s, "nullable")) {
                schema::validate(&node, d, &d_path, "", errs);
            }
        } else {
            for k in missing {
                errs.push(FieldError::required(format!("{d_path}.{k}"), ""));
            }
        }
    }
    if let Some(props) = sub(s, "properties") {
        for (k, v) in props {
            // Defaults in the root's resource meta are forbidden; the keyword walk says so.
            if root && matches!(k.as_str(), "metadata" | "apiVersion" | "kind") {
                continue;
            }
            if let Some(v) = v.as_object() {
                defaults(v, &format!("{n}.properties[{k}]"), false, errs);
            }
        }
    }
    if let Some(i) = sub(s, "items") {
        defaults(i, &format!("{n}.items"), false, errs);
    }
}
