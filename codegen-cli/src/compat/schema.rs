//! The comparison of one version's schemas, keyword by keyword, in the words, change ids
//! and classes of [`super::diff`]. Both schemas are first brought to the form of
//! [`super::normal`], so what kube-apiserver does not tell apart is never compared.
//!
//! A tightening is classed by where kube-apiserver's validation ratcheting looks: an error
//! at a node is only a warning when the node's value is unchanged and ratcheting can pair
//! the node with its old value (object fields and map values by key, list items only in
//! `x-kubernetes-list-type: map` lists); otherwise the nearest such node above must be
//! unchanged as a whole. At the root that is the whole object, metadata included, which
//! practically never holds: a rule or a required field there is breaking.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::diff::{Class, Finding, version_finding};
use super::normal;

/// The walk over one version's schemas.
pub(super) struct Walk<'a> {
    pub(super) crd: &'a str,
    pub(super) version: &'a str,
    pub(super) out: &'a mut Vec<Finding>,
}

/// A schema node: its path, and the node ratcheting pairs it with its old value through
/// (itself, or the nearest node above that it can pair).
#[derive(Clone, Copy)]
pub(super) struct Node<'p> {
    pub(super) path: &'p str,
    pub(super) anchor: &'p str,
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

pub(super) fn shown(path: &str) -> &str {
    if path.is_empty() { "the object" } else { path }
}

/// What a tightening at `node` leaves of stored objects.
pub(super) fn ratcheted(node: Node<'_>) -> String {
    format!(
        "new objects, and writes that change {}, must pass; stored objects stay readable, and writable while it is left unchanged (validation ratcheting, Kubernetes 1.30 and later)",
        shown(node.anchor)
    )
}

/// A schema's type, with `x-kubernetes-int-or-string` as its own.
fn type_of(s: &Value) -> Option<String> {
    if flag(s, "x-kubernetes-int-or-string") {
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

pub(super) fn flag(s: &Value, key: &str) -> bool {
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

/// A tightening that refuses new writes, or a loosening.
fn tightens(tightened: bool) -> Class {
    if tightened {
        Class::Tightening
    } else {
        Class::Compatible
    }
}

impl Walk<'_> {
    /// A finding at `path`, about the schema keyword `key` when it is about one.
    pub(super) fn push(
        &mut self,
        path: &str,
        key: Option<&'static str>,
        change: &'static str,
        class: Class,
        message: String,
    ) {
        let mut finding = version_finding(self.crd, self.version, path, change, class, message);
        finding.key = key;
        self.out.push(finding);
    }

    /// Compares two versions' `openAPIV3Schema`.
    pub(super) fn root(&mut self, old: &Value, new: &Value) {
        let root = Node {
            path: "",
            anchor: "",
        };
        self.schema(root, &normal::schema(old), &normal::schema(new));
    }

    fn schema(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let path = node.path;
        let (old_type, new_type) = (type_of(old), type_of(new));
        if old_type != new_type {
            self.push(
                path,
                Some("type"),
                "type-changed",
                Class::Breaking,
                format!(
                    "{}: type changed from {} to {}: stored values of the old type no longer fit, and clients of one type fail on the other",
                    shown(path),
                    old_type.as_deref().unwrap_or("any"),
                    new_type.as_deref().unwrap_or("any")
                ),
            );
            // The rest of the schema belongs to another type; comparing it says nothing more.
            return;
        }
        self.format(node, old, new);
        self.enums(node, old, new);
        self.bounds(node, old, new);
        self.pattern(node, old, new);
        self.flags(path, old, new);
        self.list_and_map(path, old, new);
        self.rules(node, old, new);
        self.combinators(node, old, new);
        self.default(path, old, new);
        self.properties(node, old, new);
        // Ratcheting pairs list items by key only in map lists, and map values by key.
        let pairs = |paired: bool, at: &str| {
            if paired && node.anchor == path {
                at.to_owned()
            } else {
                node.anchor.to_owned()
            }
        };
        if let (Some(o), Some(n)) = (old.get("items"), new.get("items")) {
            let at = format!("{path}[*]");
            let map_list = new.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
            let anchor = pairs(map_list, &at);
            self.schema(
                Node {
                    path: &at,
                    anchor: &anchor,
                },
                o,
                n,
            );
        }
        match (
            old.get("additionalProperties"),
            new.get("additionalProperties"),
        ) {
            (Some(o), Some(n)) if o.is_object() && n.is_object() => {
                let at = format!("{path}[*]");
                let anchor = pairs(true, &at);
                self.schema(
                    Node {
                        path: &at,
                        anchor: &anchor,
                    },
                    o,
                    n,
                );
            }
            _ => {}
        }
    }

    fn format(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let (o, n) = (old.get("format"), new.get("format"));
        if o == n {
            return;
        }
        let tightened = n.is_some();
        let word = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("none").to_owned();
        let mut message = format!(
            "{}: format changed from {} to {}",
            shown(node.path),
            word(o),
            word(n)
        );
        if tightened {
            message.push_str(&format!(": {}", ratcheted(node)));
        }
        self.push(
            node.path,
            Some("format"),
            if tightened {
                "format-changed"
            } else {
                "validation-loosened"
            },
            tightens(tightened),
            message,
        );
    }

    fn enums(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let path = node.path;
        let values =
            |s: &Value| -> Option<Vec<Value>> { s.get("enum").and_then(Value::as_array).cloned() };
        match (values(old), values(new)) {
            (None, Some(_)) => self.push(
                path,
                Some("enum"),
                "enum-added",
                Class::Tightening,
                format!(
                    "{}: now limited to an enum: {}",
                    shown(path),
                    ratcheted(node)
                ),
            ),
            (Some(_), None) => self.push(
                path,
                Some("enum"),
                "validation-loosened",
                Class::Compatible,
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
                        Class::Tightening,
                        format!(
                            "{}: enum value(s) {} removed: {}",
                            shown(path),
                            removed.join(", "),
                            ratcheted(node)
                        ),
                    );
                }
                if !added.is_empty() {
                    self.push(
                        path,
                        Some("enum"),
                        "enum-value-added",
                        Class::Compatible,
                        format!("{}: enum value(s) {} added", shown(path), added.join(", ")),
                    );
                }
            }
            (None, None) => {}
        }
    }

    fn bounds(&mut self, node: Node<'_>, old: &Value, new: &Value) {
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
            self.bound(
                node,
                key,
                tightened,
                format!("{key} changed from {} to {}", word(o), word(n)),
            );
        }
        self.multiple_of(node, old, new);
        for key in ["exclusiveMinimum", "exclusiveMaximum"] {
            if flag(old, key) != flag(new, key) {
                let tightened = flag(new, key);
                self.bound(node, key, tightened, format!("{key} is now {tightened}"));
            }
        }
    }

    /// A bound tightened (`bound-tightened`) or loosened (`validation-loosened`).
    fn bound(&mut self, node: Node<'_>, key: &'static str, tightened: bool, what: String) {
        let mut message = format!("{}: {what}", shown(node.path));
        if tightened {
            message.push_str(&format!(": {}", ratcheted(node)));
        }
        self.push(
            node.path,
            Some(key),
            if tightened {
                "bound-tightened"
            } else {
                "validation-loosened"
            },
            tightens(tightened),
            message,
        );
    }

    /// `multipleOf`: a new one, or one that old values need not be multiples of, tightens.
    fn multiple_of(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let (o, n) = (number(old, "multipleOf"), number(new, "multipleOf"));
        let tightened = match (o, n) {
            (None, Some(_)) => true,
            (Some(_), None) => false,
            // Every multiple of 4 is a multiple of 2: from 4 to 2 loosens.
            (Some(o), Some(n)) if o != n => n == 0.0 || (o / n).fract() != 0.0,
            _ => return,
        };
        let word = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
        self.bound(
            node,
            "multipleOf",
            tightened,
            format!("multipleOf changed from {} to {}", word(o), word(n)),
        );
    }

    fn pattern(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let (o, n) = (old.get("pattern"), new.get("pattern"));
        if o == n {
            return;
        }
        let tightened = n.is_some();
        let word = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map_or("none".to_owned(), |p| format!("`{p}`"))
        };
        let mut message = format!(
            "{}: pattern changed from {} to {}",
            shown(node.path),
            word(o),
            word(n)
        );
        if tightened {
            message.push_str(&format!(": {}", ratcheted(node)));
        }
        self.push(
            node.path,
            Some("pattern"),
            if tightened {
                "pattern-changed"
            } else {
                "validation-loosened"
            },
            tightens(tightened),
            message,
        );
    }

    fn flags(&mut self, path: &str, old: &Value, new: &Value) {
        const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
        // Unknown fields are kept with `x-kubernetes-preserve-unknown-fields` or
        // `additionalProperties: true`.
        let keeps_unknown = |s: &Value| {
            flag(s, PRESERVE) || s.get("additionalProperties") == Some(&Value::Bool(true))
        };
        match (keeps_unknown(old), keeps_unknown(new)) {
            (true, false) => {
                let key = if flag(old, PRESERVE) {
                    PRESERVE
                } else {
                    "additionalProperties"
                };
                self.push(
                    path,
                    Some(key),
                    "preserve-unknown-removed",
                    Class::Breaking,
                    format!("{}: unknown fields are now pruned ({key} removed): stored data outside the schema disappears from every read at once, and from storage on the next write", shown(path)),
                );
            }
            (false, true) => self.push(
                path,
                Some(PRESERVE),
                "preserve-unknown-added",
                Class::Compatible,
                format!("{}: unknown fields are now kept", shown(path)),
            ),
            _ => {}
        }
        match (flag(old, "nullable"), flag(new, "nullable")) {
            (true, false) => self.push(
                path,
                Some("nullable"),
                "nullable-removed",
                Class::Tightening,
                format!("{}: null is no longer accepted: a null field or map value is dropped (or replaced by the default) when read or written, and a null list item is refused", shown(path)),
            ),
            (false, true) => self.push(
                path,
                Some("nullable"),
                "nullable-added",
                Class::Compatible,
                format!("{}: null is now accepted", shown(path)),
            ),
            _ => {}
        }
        if flag(old, "x-kubernetes-embedded-resource")
            != flag(new, "x-kubernetes-embedded-resource")
        {
            self.push(
                path,
                Some("x-kubernetes-embedded-resource"),
                "embedded-resource-changed",
                Class::Breaking,
                format!("{}: x-kubernetes-embedded-resource changed: `apiVersion`, `kind` and `metadata` are checked (and kept) differently, on every write", shown(path)),
            );
        }
    }

    /// The list type (unset is `atomic`), the map type (unset is `granular`) and the keys of
    /// a map list (in any order): each changes how server-side apply merges the value.
    fn list_and_map(&mut self, path: &str, old: &Value, new: &Value) {
        for (key, unset) in [
            ("x-kubernetes-list-type", "atomic"),
            ("x-kubernetes-map-type", "granular"),
        ] {
            let word = |s: &Value| {
                s.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or(unset)
                    .to_owned()
            };
            let (o, n) = (word(old), word(new));
            if o != n {
                self.push(
                    path,
                    Some(key),
                    "list-type-changed",
                    Class::Breaking,
                    format!(
                        "{}: {key} changed from {o} to {n}: server-side apply merges it differently, and appliers' ownership of it changes",
                        shown(path),
                    ),
                );
            }
        }
        // Keys count in map lists only; a list that became one is reported above.
        let map_list =
            |s: &Value| s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
        let (o, n) = (
            strings(old, "x-kubernetes-list-map-keys"),
            strings(new, "x-kubernetes-list-map-keys"),
        );
        if map_list(old) && map_list(new) && o != n {
            self.push(
                path,
                Some("x-kubernetes-list-map-keys"),
                "list-type-changed",
                Class::Breaking,
                format!(
                    "{}: list-map keys changed from {o:?} to {n:?}: server-side apply merges it differently",
                    shown(path)
                ),
            );
        }
    }

    /// `anyOf`, `oneOf`, `allOf` and `not` (in the order-free form of [`normal`]): removing
    /// one loosens; adding or changing one may refuse values it accepted, which cannot be
    /// told in general, so it counts as tightening.
    fn combinators(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let path = node.path;
        for key in ["anyOf", "oneOf", "allOf", "not"] {
            let (o, n) = (
                old.get(key).map(normal::comparable),
                new.get(key).map(normal::comparable),
            );
            if o == n {
                continue;
            }
            let tightened = n.is_some();
            self.push(
                path,
                Some(key),
                if tightened {
                    "validation-changed"
                } else {
                    "validation-loosened"
                },
                tightens(tightened),
                if tightened {
                    format!(
                        "{}: {key} {}; whether it refuses values it accepted cannot be told, so it counts as tightening: {}",
                        shown(path),
                        if o.is_some() { "changed" } else { "added" },
                        ratcheted(node)
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
                Class::Breaking,
                format!("{}: default changed from {o} to {n}: stored objects without it, and clients that leave it out, now get another value", shown(path)),
            ),
            (Some(o), None) => self.push(
                path, Some("default"),
                "default-changed",
                Class::Breaking,
                format!("{}: default {o} removed: stored objects without it, and clients that leave it out, no longer get it", shown(path)),
            ),
            (None, Some(n)) => self.push(
                path, Some("default"),
                "default-added",
                Class::Compatible,
                format!("{}: default {n} added", shown(path)),
            ),
            _ => {}
        }
    }

    /// How a field that became required affects stored objects: not at all with a default
    /// (it is filled in on every read and write); breaking at the root (see the module
    /// docs); else a tightening ratcheted at the object the field is in.
    fn required(&self, node: Node<'_>, field: &Value) -> (Class, String) {
        if field.get("default").is_some() {
            return (
                Class::Compatible,
                "it has a default, which fills it in on every read and write".to_owned(),
            );
        }
        if node.anchor.is_empty() {
            return (
                Class::Breaking,
                "at the root, ratcheting would need the whole object, metadata included, to be unchanged, so stored objects without it can no longer be written at all, not even to remove a finalizer".to_owned(),
            );
        }
        (
            Class::Tightening,
            format!(
                "new objects without it are refused; stored objects stay readable, and writable while {} is left unchanged as a whole (validation ratcheting, Kubernetes 1.30 and later)",
                shown(node.anchor)
            ),
        )
    }

    fn properties(&mut self, node: Node<'_>, old: &Value, new: &Value) {
        let path = node.path;
        let (o, n) = (object(old, "properties"), object(new, "properties"));
        let old_required: BTreeSet<String> = strings(old, "required").into_iter().collect();
        let new_required: BTreeSet<String> = strings(new, "required").into_iter().collect();
        for (name, old_field) in &o {
            let at = child(path, name);
            // Ratcheting pairs an object's fields by name.
            let anchor = if node.anchor == path {
                at.clone()
            } else {
                node.anchor.to_owned()
            };
            let field_node = Node {
                path: &at,
                anchor: &anchor,
            };
            match n.get(name) {
                // Kept as an unknown field: nothing is pruned.
                None if flag(new, "x-kubernetes-preserve-unknown-fields") => self.push(
                    &at, None,
                    "validation-loosened",
                    Class::Compatible,
                    format!("{at}: no longer in the schema, and kept as an unknown field (x-kubernetes-preserve-unknown-fields)"),
                ),
                None => self.push(
                    &at, None,
                    "field-removed",
                    Class::Breaking,
                    format!("{at}: removed: pruned from stored objects on every read at once (and from storage on their next write); clients that set it lose it, or are refused with strict field validation"),
                ),
                Some(new_field) => {
                    if new_required.contains(name) && !old_required.contains(name) {
                        let (class, effect) = self.required(node, new_field);
                        self.push(
                            &at, Some("required"),
                            "field-required",
                            class,
                            format!("{at}: now required; {effect}"),
                        );
                    } else if old_required.contains(name) && !new_required.contains(name) {
                        self.push(&at, Some("required"), "validation-loosened", Class::Compatible, format!("{at}: no longer required"));
                    }
                    self.schema(field_node, old_field, new_field);
                }
            }
        }
        for (name, new_field) in &n {
            if o.contains_key(name) {
                continue;
            }
            let at = child(path, name);
            if new_required.contains(name) {
                let (class, effect) = self.required(node, new_field);
                self.push(
                    &at,
                    Some("required"),
                    "field-required",
                    class,
                    format!("{at}: a new required field, which stored objects lack; {effect}"),
                );
            } else {
                self.push(
                    &at,
                    None,
                    "field-added",
                    Class::Compatible,
                    format!("{at}: a new optional field"),
                );
            }
        }
    }

    /// The status and scale subresources: a removed one fails its clients; a new status
    /// subresource makes writes to the object ignore `status`; new scale paths make `/scale`
    /// read and write other fields.
    pub(super) fn subresources(&mut self, old: &Value, new: &Value) {
        for sub in ["status", "scale"] {
            let pointer = format!("/subresources/{sub}");
            match (old.pointer(&pointer).is_some(), new.pointer(&pointer).is_some()) {
                (true, false) => self.push(
                    &format!("subresources.{sub}"), None,
                    "subresource-removed",
                    Class::Breaking,
                    format!("the {sub} subresource is gone: clients of `/{sub}` fail"),
                ),
                // With a status subresource, writes to the object no longer change its
                // status: a client that wrote both at once silently loses its status.
                (false, true) if sub == "status" => self.push(
                    "subresources.status", None,
                    "subresource-added",
                    Class::Breaking,
                    "the status subresource is new: writes to the object no longer change `status`, clients must write `/status`".to_owned(),
                ),
                (false, true) => self.push(
                    "subresources.scale", None,
                    "subresource-added",
                    Class::Compatible,
                    "the scale subresource is new".to_owned(),
                ),
                _ => {}
            }
        }
        for key in [
            "specReplicasPath",
            "statusReplicasPath",
            "labelSelectorPath",
        ] {
            let pointer = format!("/subresources/scale/{key}");
            let (Some(_), Some(_)) = (
                old.pointer("/subresources/scale"),
                new.pointer("/subresources/scale"),
            ) else {
                break;
            };
            let word = |v: &Value| {
                v.pointer(&pointer)
                    .and_then(Value::as_str)
                    .unwrap_or("none")
                    .to_owned()
            };
            let (o, n) = (word(old), word(new));
            if o != n {
                self.push(
                    &format!("subresources.scale.{key}"),
                    None,
                    "scale-path-changed",
                    Class::Breaking,
                    format!("the scale subresource's {key} changed from `{o}` to `{n}`: clients of `/scale` (a HorizontalPodAutoscaler) read and write another field"),
                );
            }
        }
    }
}
