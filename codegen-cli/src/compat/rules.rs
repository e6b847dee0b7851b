//! The comparison of a schema node's CEL rules (`x-kubernetes-validations`): rules added,
//! changed or removed, matched by their text as CEL reads it, and what changes of their
//! message, reason, field path or `optionalOldSelf` do; part of [`super::schema::Walk`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::diff::Class;
use super::normal;
use super::schema::{Node, Walk, flag, ratcheted, shown};

impl Walk<'_> {
    pub(super) fn rules(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let path = node.path;
        // (the rule as compared, as shown, the entry)
        let rules = |s: &Value| -> Vec<(String, String, Value)> {
            s.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|r| {
                            let text = r.get("rule").and_then(Value::as_str).unwrap_or("");
                            (normal::cel_text(text), text.to_owned(), r.clone())
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let (o, n) = (rules(old), rules(new));
        let old_texts: BTreeSet<&str> = o.iter().map(|(t, _, _)| t.as_str()).collect();
        let new_texts: BTreeSet<&str> = n.iter().map(|(t, _, _)| t.as_str()).collect();
        let optional = |r: &Value| flag(r, "optionalOldSelf");
        for (i, (rule, text, body)) in n.iter().enumerate() {
            if let Some((_, _, before)) = o.iter().find(|(t, _, _)| t == rule) {
                self.rule_entry(path, text, before, body);
                continue;
            }
            let replaced = o
                .get(i)
                .filter(|(t, _, _)| !new_texts.contains(t.as_str()))
                .map(|(_, shown, _)| shown.clone());
            let (class, effect) = if normal::uses_old_self(rule) {
                let creates = if optional(body) {
                    "and creates, with `optionalOldSelf`"
                } else {
                    "creates are not"
                };
                (
                    Class::Tightening,
                    format!(
                        "a transition rule (it reads `oldSelf`), which is never ratcheted: every update of {} is checked against the stored value ({creates}); stored objects stay readable",
                        shown(path)
                    ),
                )
            } else if node.anchor.is_empty() {
                (
                    Class::Breaking,
                    "a rule on the object as a whole: ratcheting would need the whole object, metadata included, to be unchanged, so a stored object that breaks it can no longer be written at all, not even to remove a finalizer".to_owned(),
                )
            } else {
                (Class::Tightening, ratcheted(node))
            };
            match replaced {
                Some(before) => self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "cel-rule-changed",
                    class,
                    format!("{}: rule `{before}` became `{text}`: {effect}", shown(path)),
                ),
                None => self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "cel-rule-added",
                    class,
                    format!("{}: new rule `{text}`: {effect}", shown(path)),
                ),
            }
        }
        for (i, (rule, text, _)) in o.iter().enumerate() {
            let replaced = n
                .get(i)
                .is_some_and(|(t, _, _)| !old_texts.contains(t.as_str()));
            if !new_texts.contains(rule.as_str()) && !replaced {
                self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "validation-loosened",
                    Class::Compatible,
                    format!("{}: rule `{text}` removed", shown(path)),
                );
            }
        }
    }

    /// The same rule, before and after: `optionalOldSelf` set makes it run on creates too;
    /// `reason` and `fieldPath` only change the error clients get. Messages are not compared:
    /// they are only shown once the rule has failed.
    fn rule_entry(&mut self, path: &str, text: &str, before: &Value, after: &Value) {
        let optional = |r: &Value| flag(r, "optionalOldSelf");
        match (optional(before), optional(after)) {
            (false, true) => self.push(
                path,
                Some("x-kubernetes-validations"),
                "cel-rule-changed",
                Class::Tightening,
                format!(
                    "{}: rule `{text}` now also checks creates and updates without an old value (`optionalOldSelf`); it is never ratcheted, stored objects stay readable",
                    shown(path)
                ),
            ),
            (true, false) => self.push(
                path,
                Some("x-kubernetes-validations"),
                "validation-loosened",
                Class::Compatible,
                format!(
                    "{}: rule `{text}` no longer checks creates (`optionalOldSelf` removed)",
                    shown(path)
                ),
            ),
            _ => {}
        }
        let word = |r: &Value, k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
        if word(before, "reason") != word(after, "reason")
            || word(before, "fieldPath") != word(after, "fieldPath")
        {
            self.push(
                path,
                Some("x-kubernetes-validations"),
                "cel-rule-message-changed",
                Class::Compatible,
                format!(
                    "{}: the reason or field path of rule `{text}` changed (the error clients get when it fails)",
                    shown(path)
                ),
            );
        }
    }
}
