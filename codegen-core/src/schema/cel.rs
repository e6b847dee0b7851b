//! `+kubebuilder:validation:XValidation`: a CEL rule read from its marker and compiled and
//! type-checked against the field's type, as kube-apiserver does when the CRD is created.

use serde_json::{Map, Value};

use apiserver_rules::cel::check::{Expect, Ty, check as cel_check};

use crate::attr::marker::Marker;
use crate::diag::{Ctxt, did_you_mean};

/// The reasons a rule may give (`reason=`), as kube-apiserver accepts them.
const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// The rule of an `XValidation` marker on a field of type `self_ty`, or `None` (reported).
pub(super) fn xvalidation(cx: &mut Ctxt, m: &Marker, self_ty: &Ty) -> Option<Value> {
    let mut rule = Map::new();
    for arg in &m.args {
        let key = match arg.key.as_str() {
            "rule" => "rule",
            "message" => "message",
            "messageExpression" => "messageExpression",
            "fieldPath" => "fieldPath",
            "reason" => {
                if !REASONS.contains(&arg.value.as_str()) {
                    cx.error_at(
                        &arg.loc,
                        format!(
                            "`reason={}` is not one of {}{}",
                            arg.value,
                            REASONS.join(", "),
                            did_you_mean(&arg.value, REASONS.iter().copied())
                        ),
                    );
                    return None;
                }
                "reason"
            }
            "optionalOldSelf" => {
                let Ok(b) = arg.value.parse::<bool>() else {
                    cx.error_at(&arg.loc, "`optionalOldSelf` is `true` or `false`");
                    return None;
                };
                rule.insert("optionalOldSelf".into(), Value::from(b));
                continue;
            }
            other => {
                let keys = [
                    "rule",
                    "message",
                    "messageExpression",
                    "reason",
                    "fieldPath",
                    "optionalOldSelf",
                ];
                cx.error_at(
                    &arg.loc,
                    format!(
                        "unknown key `{other}` in `+kubebuilder:validation:XValidation`{}",
                        did_you_mean(other, keys)
                    ),
                );
                return None;
            }
        };
        rule.insert(key.into(), Value::from(arg.value.clone()));
    }
    if !rule.contains_key("rule") {
        cx.error_at(
            &m.name_loc,
            "`+kubebuilder:validation:XValidation` needs `rule=\"<CEL>\"`",
        );
        return None;
    }
    // Compiled and type-checked here, as the API server does when the CRD is created.
    let optional = rule.get("optionalOldSelf") == Some(&Value::Bool(true));
    for (key, expect) in [
        ("rule", Expect::Rule),
        ("messageExpression", Expect::Message),
    ] {
        let Some(source) = rule.get(key).and_then(Value::as_str) else {
            continue;
        };
        if let Err(why) = cel_check(source, self_ty, optional, expect) {
            let at = m
                .args
                .iter()
                .find(|a| a.key == key)
                .map_or(&m.name_loc, |a| &a.loc);
            cx.error_at(
                at,
                format!("`{key}` of `+kubebuilder:validation:XValidation` would be refused by the API server: {why}"),
            );
            return None;
        }
    }
    Some(Value::Object(rule))
}
