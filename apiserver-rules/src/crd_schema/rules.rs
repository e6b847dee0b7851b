//! The form of `x-kubernetes-validations` entries: a rule, a message without line breaks,
//! a known reason, a field path that resolves. Compiling, type-checking and costing the
//! rules is `cel::check`'s (feature `cel`).

use serde_json::{Value, json};

use super::{Obj, path::resolve};
use crate::field::FieldError;

/// The reasons a rule may give.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// The form of `x-kubernetes-validations` entries (message, reason, field path); the rules
/// themselves are compiled, type-checked and costed by `cel::check` (feature `cel`).
pub(super) fn check(s: &Obj, n: &str, errs: &mut Vec<FieldError>) {
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return;
    };
    for (i, r) in rules.iter().enumerate() {
        let p = format!("{n}.x-kubernetes-validations[{i}]");
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let rule = get("rule").trim();
        let message = get("message");
        if rule.is_empty() {
            errs.push(FieldError::required(
                format!("{p}.rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.push(FieldError::invalid_str(
                format!("{p}.message"),
                message,
                "must be non-empty if specified",
            ));
        } else if message.trim().contains(['\n', '\r']) {
            errs.push(FieldError::invalid_str(
                format!("{p}.message"),
                message,
                "must not contain line breaks",
            ));
        } else if rule.contains(['\n', '\r']) && message.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{p}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let expr = get("messageExpression");
        if !expr.is_empty() && expr.trim().is_empty() {
            errs.push(FieldError::required(
                format!("{p}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = r.get("reason").and_then(Value::as_str)
            && !REASONS.contains(&reason)
        {
            errs.push(FieldError::not_supported(
                format!("{p}.reason"),
                &json!(reason),
                &REASONS,
            ));
        }
        let field_path = get("fieldPath");
        if !field_path.is_empty() {
            if field_path.trim().is_empty() {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must be non-empty if specified",
                ));
            } else if field_path.contains(['\n', '\r']) {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must not contain line breaks",
                ));
            } else if resolve(s, field_path, true).is_err() {
                errs.push(FieldError::invalid_str(
                    format!("{p}.fieldPath"),
                    field_path,
                    "must be a valid path",
                ));
            }
        }
    }
}
