//! The comparison of one version's schemas, keyword by keyword, in the words and change
//! ids of [`super::diff`].

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::diff::{Finding, version_finding};

/// The walk over one version's schemas.
pub(super) struct Walk<'a> {
    pub(super) crd: &'a str,
    pub(super) version: &'a str,
    pub(super) out: &'a mut Vec<Finding>,
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "the object" } else { path }
}

/// A schema's type, with `x-kubernetes-int-or-string` as its own.
fn type_of(s: &Value) -> Option<String> {
    if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return Some("int-or-string".to_owned());
    }
    let ty = s.get("type").and_then(Value::as_str)?;
    // An object with `additionalProperties` is a map: its keys are free, not its fields.
    if ty == "object" && s.get("additionalProperties").is_some_and(|a| a.is_object()) {
        return Some("map".to_owned());
    }
    Some(ty.to_owned())
}

fn number(s: &Value, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

fn flag(s: &Value, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool) == Some(true)
}

fn object(s: &Value, key: &str) -> Map<String, Value> {
    s.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn strings(s: &Value, key: &str) -> Vec<String> {
    crate::json::strings(s.get(key))
        .map(str::to_owned)
        .collect()
}

impl Walk<'_> {
    /// A finding at `path`, about the schema keyword `key` when it is about one.
    fn push(
        &mut self,
        path: &str,
        key: Option<&'static str>,
        change: &'static str,
        breaking: bool,
        message: String,
    ) {
        let mut finding = version_finding(self.crd, self.version, path, change, breaking, message);
        finding.key = key;
        self.out.push(finding);
    }

    pub(super) fn schema(&mut self, path: &str, old: &Value, new: &Value) {
        let (old_type, new_type) = (type_of(old), type_of(new));
        if old_type != new_type {
            self.push(
                path,
                Some("type"),
                "type-changed",
                true,
                format!(
                    "{}: type changed from {} to {}",
                    shown(path),
                    old_type.as_deref().unwrap_or("any"),
                    new_type.as_deref().unwrap_or("any")
                ),
            );
            // The rest of the schema belongs to another type; comparing it says nothing more.
            return;
        }
        self.format(path, old, new);
        self.enums(path, old, new);
        self.bounds(path, old, new);
        self.pattern(path, old, new);
        self.flags(path, old, new);
        self.list_and_map(path, old, new);
        self.rules(path, old, new);
        self.combinators(path, old, new);
        self.default(path, old, new);
        if old.get("description") != new.get("description") && old.get("description").is_some() {
            self.push(
                path,
                Some("description"),
                "description-changed",
                false,
                format!("{}: description changed", shown(path)),
            );
        }
        self.properties(path, old, new);
        if let (Some(o), Some(n)) = (old.get("items"), new.get("items")) {
            self.schema(&format!("{path}[*]"), o, n);
        }
        match (
            old.get("additionalProperties"),
            new.get("additionalProperties"),
        ) {
            (Some(o), Some(n)) if o.is_object() && n.is_object() => {
                self.schema(&format!("{path}[*]"), o, n);
            }
            _ => {}
        }
    }

    fn format(&mut self, path: &str, old: &Value, new: &Value) {
        let (o, n) = (old.get("format"), new.get("format"));
        if o == n {
            return;
        }
        let breaking = n.is_some();
        let word = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("none").to_owned();
        self.push(
            path,
            Some("format"),
            if breaking {
                "format-changed"
            } else {
                "validation-loosened"
            },
            breaking,
            format!(
                "{}: format changed from {} to {}",
                shown(path),
                word(o),
                word(n)
            ),
        );
    }

    fn enums(&mut self, path: &str, old: &Value, new: &Value) {
        let values =
            |s: &Value| -> Option<Vec<Value>> { s.get("enum").and_then(Value::as_array).cloned() };
        match (values(old), values(new)) {
            (None, Some(_)) => self.push(
                path,
                Some("enum"),
                "enum-added",
                true,
                format!(
                    "{}: now limited to an enum; stored values outside it fail their next update",
                    shown(path)
                ),
            ),
            (Some(_), None) => self.push(
                path,
                Some("enum"),
                "validation-loosened",
                false,
                format!("{}: no longer limited to an enum", shown(path)),
            ),
            (Some(o), Some(n)) => {
                let removed: Vec<String> = o
                    .iter()
                    .filter(|v| !n.contains(v))
                    .map(Value::to_string)
                    .collect();
                let added: Vec<String> = n
                    .iter()
                    .filter(|v| !o.contains(v))
                    .map(Value::to_string)
                    .collect();
                if !removed.is_empty() {
                    self.push(
                        path,
                        Some("enum"),
                        "enum-value-removed",
                        true,
                        format!(
                            "{}: enum value(s) {} removed",
                            shown(path),
                            removed.join(", ")
                        ),
                    );
                }
                if !added.is_empty() {
                    self.push(
                        path,
                        Some("enum"),
                        "enum-value-added",
                        false,
                        format!("{}: enum value(s) {} added", shown(path), added.join(", ")),
                    );
                }
            }
            (None, None) => {}
        }
    }

    fn bounds(&mut self, path: &str, old: &Value, new: &Value) {
        // (key, a larger value tightens)
        const LOWER: [&str; 4] = ["minimum", "minLength", "minItems", "minProperties"];
        const UPPER: [&str; 4] = ["maximum", "maxLength", "maxItems", "maxProperties"];
        for key in LOWER.iter().chain(UPPER.iter()) {
            let lower = LOWER.contains(key);
            let (o, n) = (number(old, key), number(new, key));
            let tightened = match (o, n) {
                (None, Some(_)) => Some(true),
                (Some(_), None) => Some(false),
                (Some(o), Some(n)) if o != n => Some(if lower { n > o } else { n < o }),
                _ => None,
            };
            let Some(tightened) = tightened else { continue };
            let word = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
            self.push(
                path,
                Some(key),
                if tightened {
                    "bound-tightened"
                } else {
                    "validation-loosened"
                },
                tightened,
                format!(
                    "{}: {key} changed from {} to {}",
                    shown(path),
                    word(o),
                    word(n)
                ),
            );
        }
        self.multiple_of(path, old, new);
        for key in ["exclusiveMinimum", "exclusiveMaximum"] {
            if flag(old, key) != flag(new, key) {
                let tightened = flag(new, key);
                self.push(
                    path,
                    Some(key),
                    if tightened {
                        "bound-tightened"
                    } else {
                        "validation-loosened"
                    },
                    tightened,
                    format!("{}: {key} is now {}", shown(path), flag(new, key)),
                );
            }
        }
    }

    /// `multipleOf`: a new one, or one that old values need not be multiples of, tightens.
    fn multiple_of(&mut self, path: &str, old: &Value, new: &Value) {
        let (o, n) = (number(old, "multipleOf"), number(new, "multipleOf"));
        let tightened = match (o, n) {
            (None, Some(_)) => true,
            (Some(_), None) => false,
            // Every multiple of 4 is a multiple of 2: from 4 to 2 loosens.
            (Some(o), Some(n)) if o != n => n == 0.0 || (o / n).fract() != 0.0,
            _ => return,
        };
        let word = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
        self.push(
            path,
            Some("multipleOf"),
            if tightened {
                "bound-tightened"
            } else {
                "validation-loosened"
            },
            tightened,
            format!(
                "{}: multipleOf changed from {} to {}",
                shown(path),
                word(o),
                word(n)
            ),
        );
    }

    fn pattern(&mut self, path: &str, old: &Value, new: &Value) {
        let (o, n) = (old.get("pattern"), new.get("pattern"));
        if o == n {
            return;
        }
        let breaking = n.is_some();
        let word = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map_or("none".to_owned(), |p| format!("`{p}`"))
        };
        self.push(
            path,
            Some("pattern"),
            if breaking {
                "pattern-changed"
            } else {
                "validation-loosened"
            },
            breaking,
            format!(
                "{}: pattern changed from {} to {}",
                shown(path),
                word(o),
                word(n)
            ),
        );
    }

    fn flags(&mut self, path: &str, old: &Value, new: &Value) {
        if flag(old, "x-kubernetes-preserve-unknown-fields")
            && !flag(new, "x-kubernetes-preserve-unknown-fields")
        {
            self.push(
                path, Some("x-kubernetes-preserve-unknown-fields"),
                "preserve-unknown-removed",
                true,
                format!("{}: unknown fields are now pruned (x-kubernetes-preserve-unknown-fields removed): stored data outside the schema is dropped on the next write", shown(path)),
            );
        }
        if flag(old, "nullable") && !flag(new, "nullable") {
            self.push(
                path,
                Some("nullable"),
                "nullable-removed",
                true,
                format!("{}: null is no longer accepted", shown(path)),
            );
        }
        if flag(old, "x-kubernetes-embedded-resource")
            != flag(new, "x-kubernetes-embedded-resource")
        {
            self.push(
                path,
                Some("x-kubernetes-embedded-resource"),
                "embedded-resource-changed",
                true,
                format!("{}: x-kubernetes-embedded-resource changed", shown(path)),
            );
        }
    }

    fn list_and_map(&mut self, path: &str, old: &Value, new: &Value) {
        for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
            let (o, n) = (old.get(key), new.get(key));
            if o != n {
                let word =
                    |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("unset").to_owned();
                self.push(
                    path,
                    Some(key),
                    "list-type-changed",
                    true,
                    format!(
                        "{}: {key} changed from {} to {}: server-side apply merges it differently",
                        shown(path),
                        word(o),
                        word(n)
                    ),
                );
            }
        }
        let (o, n) = (
            strings(old, "x-kubernetes-list-map-keys"),
            strings(new, "x-kubernetes-list-map-keys"),
        );
        if o != n {
            self.push(
                path,
                Some("x-kubernetes-list-map-keys"),
                "list-type-changed",
                true,
                format!("{}: list-map keys changed from {o:?} to {n:?}", shown(path)),
            );
        }
    }

    fn rules(&mut self, path: &str, old: &Value, new: &Value) {
        let rules = |s: &Value| -> Vec<(String, Value)> {
            s.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|r| {
                            (
                                r.get("rule")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_owned(),
                                r.clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let (o, n) = (rules(old), rules(new));
        let old_texts: BTreeSet<&str> = o.iter().map(|(t, _)| t.as_str()).collect();
        let new_texts: BTreeSet<&str> = n.iter().map(|(t, _)| t.as_str()).collect();
        for (i, (rule, body)) in n.iter().enumerate() {
            if let Some((_, before)) = o.iter().find(|(t, _)| t == rule) {
                if before != body {
                    self.push(
                        path,
                        Some("x-kubernetes-validations"),
                        "cel-rule-message-changed",
                        false,
                        format!(
                            "{}: the message or reason of rule `{rule}` changed",
                            shown(path)
                        ),
                    );
                }
                continue;
            }
            let replaced = o
                .get(i)
                .filter(|(t, _)| !new_texts.contains(t.as_str()))
                .map(|(t, _)| t.clone());
            let ratcheting = if rule.contains("oldSelf") {
                "a transition rule: it checks updates against the stored value, and creates are not checked by it".to_owned()
            } else {
                format!(
                    "ratcheting keeps stored objects writable while {} is left unchanged; new objects and changes to it must pass",
                    shown(path)
                )
            };
            match replaced {
                Some(before) => self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "cel-rule-changed",
                    true,
                    format!(
                        "{}: rule `{before}` became `{rule}`; {ratcheting}",
                        shown(path)
                    ),
                ),
                None => self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "cel-rule-added",
                    true,
                    format!("{}: new rule `{rule}`; {ratcheting}", shown(path)),
                ),
            }
        }
        for (i, (rule, _)) in o.iter().enumerate() {
            let replaced = n
                .get(i)
                .is_some_and(|(t, _)| !old_texts.contains(t.as_str()));
            if !new_texts.contains(rule.as_str()) && !replaced {
                self.push(
                    path,
                    Some("x-kubernetes-validations"),
                    "validation-loosened",
                    false,
                    format!("{}: rule `{rule}` removed", shown(path)),
                );
            }
        }
    }

    /// `anyOf`, `oneOf`, `allOf` and `not`: removing one loosens; adding or changing one may
    /// refuse what was accepted, which cannot be told in general, so it counts as breaking.
    fn combinators(&mut self, path: &str, old: &Value, new: &Value) {
        for key in ["anyOf", "oneOf", "allOf", "not"] {
            let (o, n) = (old.get(key), new.get(key));
            if o == n {
                continue;
            }
            let breaking = n.is_some();
            self.push(
                path,
                Some(key),
                if breaking {
                    "validation-changed"
                } else {
                    "validation-loosened"
                },
                breaking,
                if breaking {
                    format!(
                        "{}: {key} {}; whether it refuses values it accepted cannot be told, so it counts as breaking",
                        shown(path),
                        if o.is_some() { "changed" } else { "added" }
                    )
                } else {
                    format!("{}: {key} removed", shown(path))
                },
            );
        }
    }

    fn default(&mut self, path: &str, old: &Value, new: &Value) {
        match (old.get("default"), new.get("default")) {
            (Some(o), Some(n)) if o != n => self.push(
                path, Some("default"),
                "default-changed",
                true,
                format!("{}: default changed from {o} to {n}: objects written without it now get another value", shown(path)),
            ),
            (Some(o), None) => self.push(
                path, Some("default"),
                "default-changed",
                true,
                format!("{}: default {o} removed: objects written without it no longer get it", shown(path)),
            ),
            (None, Some(n)) => self.push(
                path, Some("default"),
                "default-added",
                false,
                format!("{}: default {n} added", shown(path)),
            ),
            _ => {}
        }
    }

    fn properties(&mut self, path: &str, old: &Value, new: &Value) {
        let (o, n) = (object(old, "properties"), object(new, "properties"));
        let old_required: BTreeSet<String> = strings(old, "required").into_iter().collect();
        let new_required: BTreeSet<String> = strings(new, "required").into_iter().collect();
        for (name, old_field) in &o {
            let at = child(path, name);
            match n.get(name) {
                None => self.push(
                    &at, None,
                    "field-removed",
                    true,
                    format!("{at}: removed; clients that set it are refused or lose it, and stored values are pruned on the next write"),
                ),
                Some(new_field) => {
                    if new_required.contains(name) && !old_required.contains(name) {
                        self.push(
                            &at, Some("required"),
                            "field-required",
                            true,
                            format!("{at}: now required; objects and clients without it are refused"),
                        );
                    } else if old_required.contains(name) && !new_required.contains(name) {
                        self.push(&at, Some("required"), "validation-loosened", false, format!("{at}: no longer required"));
                    }
                    self.schema(&at, old_field, new_field);
                }
            }
        }
        for name in n.keys() {
            if o.contains_key(name) {
                continue;
            }
            let at = child(path, name);
            if new_required.contains(name) {
                self.push(
                    &at,
                    Some("required"),
                    "field-required",
                    true,
                    format!(
                        "{at}: a new required field; every existing object and client lacks it"
                    ),
                );
            } else {
                self.push(
                    &at,
                    None,
                    "field-added",
                    false,
                    format!("{at}: a new optional field"),
                );
            }
        }
    }

    pub(super) fn subresources(&mut self, old: &Value, new: &Value) {
        for sub in ["status", "scale"] {
            let pointer = format!("/subresources/{sub}");
            match (old.pointer(&pointer).is_some(), new.pointer(&pointer).is_some()) {
                (true, false) => self.push(
                    &format!("subresources.{sub}"), None,
                    "subresource-removed",
                    true,
                    format!("the {sub} subresource is gone: clients of `/{sub}` fail"),
                ),
                // With a status subresource, writes to the object no longer change its
                // status: a client that wrote both at once silently loses its status.
                (false, true) => self.push(
                    &format!("subresources.{sub}"), None,
                    "subresource-added",
                    sub == "status",
                    if sub == "status" {
                        "the status subresource is new: writes to the object no longer change `status`, clients must write `/status`".to_owned()
                    } else {
                        "the scale subresource is new".to_owned()
                    },
                ),
                _ => {}
            }
        }
    }
}
