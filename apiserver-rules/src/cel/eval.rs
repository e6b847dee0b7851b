//! Evaluating a CRD's rules against an object, as apiextensions-apiserver's CEL validator
//! does: every node with a value, rules first and then the children, transition rules only
//! where an old value is correlated, and errors of unchanged values (ratcheting) turned
//! into warnings.

use std::sync::Arc;

use kube_cel::cel::objects::OptionalValue;
use kube_cel::cel::{ExecutionError, Value as Cel};
use serde_json::Value;

use super::node::{ListKind, Node, Rule};
use super::value::to_cel;
use crate::field::{ErrorType, FieldError, go_quote, show};

/// What an update's values are correlated with, for ratcheting: the old value at the same
/// place, or (where none can be found) whether the nearest correlated ancestor is unchanged.
#[derive(Clone, Copy)]
pub(crate) enum Correlation<'v> {
    Old(&'v Value),
    Uncorrelated { ancestor_unchanged: bool },
}

impl<'v> Correlation<'v> {
    fn unchanged(self, new: &Value) -> bool {
        match self {
            Correlation::Old(old) => old == new,
            Correlation::Uncorrelated { ancestor_unchanged } => ancestor_unchanged,
        }
    }

    fn key(self, new: &Value, key: &str) -> Correlation<'v> {
        match self {
            Correlation::Old(old) => match (old.get(key), new.get(key)) {
                (Some(o), Some(_)) if old.is_object() && new.is_object() => Correlation::Old(o),
                _ => Correlation::Uncorrelated {
                    ancestor_unchanged: old == new,
                },
            },
            other => other,
        }
    }

    fn index(self, node: &Node, new: &Value, i: usize) -> Correlation<'v> {
        match self {
            Correlation::Old(old) => {
                let item = new.get(i).unwrap_or(&Value::Null);
                match old_item(node, old, item) {
                    Some(o) => Correlation::Old(o),
                    None => Correlation::Uncorrelated {
                        ancestor_unchanged: old == new,
                    },
                }
            }
            other => other,
        }
    }
}

/// The item of `old` (a list-map) with the keys of `item`.
fn old_item<'v>(node: &Node, old: &'v Value, item: &Value) -> Option<&'v Value> {
    let ListKind::Map(keys) = &node.list else {
        return None;
    };
    old.as_array()?
        .iter()
        .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
}

pub(crate) struct Walk<'a> {
    pub errors: &'a mut Vec<FieldError>,
    pub warnings: &'a mut Vec<String>,
}

/// A field path as Go prints it; the root is `<nil>`.
fn shown(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_owned()
    } else {
        path.to_owned()
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else if name.starts_with('[') {
        format!("{path}{name}")
    } else {
        format!("{path}.{name}")
    }
}

impl Walk<'_> {
    pub(crate) fn node(
        &mut self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        corr: Correlation<'_>,
    ) {
        if !node.has_rules || new.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        self.rules(node, path, new, old, corr);
        match new {
            Value::Object(map) => {
                if let Some(values) = node.values.as_deref() {
                    for (k, v) in map {
                        let o = old.and_then(|o| o.get(k));
                        self.node(values, &format!("{path}[{k}]"), v, o, corr.key(new, k));
                    }
                }
                for (k, v) in map {
                    if let Some(sub) = node.props.get(k) {
                        let o = old.and_then(|o| o.get(k));
                        self.node(sub, &child(path, k), v, o, corr.key(new, k));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = node.items.as_deref() {
                    for (i, v) in items.iter().enumerate() {
                        let o = old.and_then(|o| old_item(node, o, v));
                        self.node(
                            item,
                            &format!("{path}[{i}]"),
                            v,
                            o,
                            corr.index(node, new, i),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn rules(
        &mut self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        corr: Correlation<'_>,
    ) {
        if node.rules.is_empty() {
            return;
        }
        let self_value = to_cel(Some(node), new);
        let old_value = old.map(|o| to_cel(Some(node), o));
        let type_name = go_quote(&node.ty);
        for rule in &node.rules {
            let expr = match &rule.expr {
                Ok(expr) => expr,
                Err(e) => {
                    self.errors.push(invalid(
                        path,
                        &type_name,
                        format!("rule compile error: {e}"),
                    ));
                    continue;
                }
            };
            if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
                continue;
            }
            let (result, message) = super::with_context(|base| {
                let mut ctx = base.new_inner_scope();
                ctx.add_variable_from_value("self", self_value.clone());
                if rule.optional_old_self {
                    let opt = match &old_value {
                        Some(v) => OptionalValue::of(v.clone()),
                        None => OptionalValue::none(),
                    };
                    ctx.add_variable_from_value("oldSelf", Cel::Opaque(Arc::new(opt)));
                } else if let Some(v) = &old_value {
                    ctx.add_variable_from_value("oldSelf", v.clone());
                }
                let result = Cel::resolve(expr, &ctx);
                // A message is worked out only for a rule that ran and failed.
                let message = match (&result, &rule.message_expr) {
                    (Ok(Cel::Bool(true)) | Err(_), _) | (_, None) => None,
                    (Ok(_), Some(m)) => message_of(Cel::resolve(m, &ctx)),
                };
                (result, message)
            });
            match result {
                Ok(Cel::Bool(true)) => {}
                Err(e) => {
                    let detail = match go_error(&e) {
                        msg if msg.starts_with("no such overload") => format!(
                            "'{msg}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule.error_string()
                        ),
                        msg => format!("{msg} evaluating rule: {}", rule.error_string()),
                    };
                    self.errors.push(invalid(path, &type_name, detail));
                }
                Ok(_) => {
                    let at = if rule.field_path.is_empty() {
                        path.to_owned()
                    } else {
                        child(path, &rule.field_path)
                    };
                    let detail = message.unwrap_or_else(|| default_message(rule));
                    let value = if matches!(node.ty.as_str(), "object" | "array") {
                        String::new()
                    } else {
                        show(new)
                    };
                    let e = for_reason(rule.reason.as_deref(), &at, value, detail);
                    if !rule.uses_old_self && corr.unchanged(new) {
                        self.warnings.push(e.to_string());
                    } else {
                        self.errors.push(e);
                    }
                }
            }
        }
    }
}

/// What a failing rule says without a (usable) `messageExpression`.
fn default_message(rule: &Rule) -> String {
    if rule.message.is_empty() {
        format!("failed rule: {}", rule.error_string())
    } else {
        rule.message.trim().to_owned()
    }
}

/// A `messageExpression`'s result, when it is a usable message: a string that is not empty
/// after trimming, has no line breaks and is at most 5000 bytes.
fn message_of(result: Result<Cel, ExecutionError>) -> Option<String> {
    match result {
        Ok(Cel::String(s)) => {
            let s = s.trim();
            (!s.is_empty() && !s.contains('\n') && s.len() <= 5000).then(|| s.to_owned())
        }
        _ => None,
    }
}

fn invalid(path: &str, value: &str, detail: String) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: shown(path),
        value: value.to_owned(),
        detail,
    }
}

/// The field error a failing rule's `reason` asks for.
fn for_reason(reason: Option<&str>, path: &str, value: String, detail: String) -> FieldError {
    let (kind, value, detail) = match reason {
        Some("FieldValueForbidden") => (ErrorType::Forbidden, String::new(), detail),
        Some("FieldValueRequired") => (ErrorType::Required, String::new(), detail),
        Some("FieldValueDuplicate") => (ErrorType::Duplicate, value, String::new()),
        _ => (ErrorType::Invalid, value, detail),
    };
    FieldError {
        kind,
        field: shown(path),
        value,
        detail,
    }
}

/// An evaluation error in cel-go's words (`no such key: x`, `no such overload`, ...).
fn go_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::NoSuchOverload
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::UnsupportedUnaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. } => "no such overload".to_owned(),
        ExecutionError::UndeclaredReference(r) => format!("no such attribute(s): {r}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", show_cel(i)),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => {
            let s = other.to_string();
            let mut c = s.chars();
            match c.next() {
                Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
                None => s,
            }
        }
    }
}

fn show_cel(v: &Cel) -> String {
    match v {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}
