//! What changed between two sets of CRDs, each change classified as breaking (stored objects
//! or existing clients stop working) or compatible.
//!
//! The rules follow what kube-apiserver does with an updated CRD: objects already stored are
//! not revalidated until they are written, so a tightened schema breaks the next update of an
//! object that was valid; a removed field is pruned from stored objects on their next write;
//! a removed served version breaks every client that uses it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One change between the baseline and the current CRDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The CRD's name (`widgets.example.com`).
    pub crd: String,
    /// The version whose schema changed; `None` for changes to the CRD as a whole.
    pub version: Option<String>,
    /// Where: a field path in the object (`spec.replicas`, `spec.items[*].name`), or the
    /// CRD's own field for CRD-level changes (`spec.scope`).
    pub path: String,
    /// What kind of change, as a stable id (`field-removed`, `bound-tightened`, ...).
    pub change: &'static str,
    /// Whether stored objects or existing clients may stop working.
    pub breaking: bool,
    /// What changed, in words.
    pub message: String,
}

/// Compares every CRD of `baseline` with the CRD of the same name in `current`.
pub fn compare(baseline: &[Value], current: &[Value]) -> Vec<Finding> {
    let old = by_name(baseline);
    let new = by_name(current);
    let mut out = Vec::new();
    let removed: Vec<&String> = old.keys().filter(|n| !new.contains_key(*n)).collect();
    let added: Vec<&String> = new.keys().filter(|n| !old.contains_key(*n)).collect();
    let mut paired_added = BTreeSet::new();
    for name in removed {
        let was = old[name];
        // The same kind under another plural or group is a rename, not a new kind.
        let renamed = added.iter().find(|n| {
            !paired_added.contains(**n)
                && text(new[**n], "/spec/names/kind") == text(was, "/spec/names/kind")
        });
        match renamed {
            Some(other) => {
                paired_added.insert((*other).clone());
                let now = new[*other];
                for (field, what) in [("/spec/group", "group"), ("/spec/names/plural", "plural")] {
                    if text(was, field) != text(now, field) {
                        out.push(crd_finding(
                            name,
                            &field[1..].replace('/', "."),
                            if what == "group" { "group-changed" } else { "plural-changed" },
                            true,
                            format!(
                                "{what} changed from `{}` to `{}` (the CRD is now `{other}`): every client and stored object of the old name is lost",
                                text(was, field),
                                text(now, field)
                            ),
                        ));
                    }
                }
            }
            None => out.push(crd_finding(
                name,
                "",
                "crd-removed",
                true,
                "the CRD is gone: its objects are deleted with it".to_owned(),
            )),
        }
    }
    for name in added {
        if !paired_added.contains(name) {
            out.push(crd_finding(
                name,
                "",
                "crd-added",
                false,
                "a new CRD".to_owned(),
            ));
        }
    }
    for (name, was) in &old {
        if let Some(now) = new.get(name) {
            compare_crd(name, was, now, &mut out);
        }
    }
    out
}

fn by_name(crds: &[Value]) -> BTreeMap<String, &Value> {
    crds.iter()
        .map(|c| (text(c, "/metadata/name").to_owned(), c))
        .collect()
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn crd_finding(
    crd: &str,
    path: &str,
    change: &'static str,
    breaking: bool,
    message: String,
) -> Finding {
    Finding {
        crd: crd.to_owned(),
        version: None,
        path: path.to_owned(),
        change,
        breaking,
        message,
    }
}

fn versions(crd: &Value) -> Vec<&Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default()
}

fn storage_version(crd: &Value) -> Option<&str> {
    versions(crd)
        .into_iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
}

fn served(version: &Value) -> bool {
    version
        .get("served")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn compare_crd(name: &str, was: &Value, now: &Value, out: &mut Vec<Finding>) {
    for (field, change) in [
        ("/spec/names/kind", "kind-changed"),
        ("/spec/scope", "scope-changed"),
    ] {
        if text(was, field) != text(now, field) {
            out.push(crd_finding(
                name,
                &field[1..].replace('/', "."),
                change,
                true,
                format!(
                    "changed from `{}` to `{}`: clients and stored objects of the old one no longer match",
                    text(was, field),
                    text(now, field)
                ),
            ));
        }
    }
    compare_names(name, was, now, out);
    let stored: BTreeSet<&str> = match was
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
    {
        Some(list) => list.iter().filter_map(Value::as_str).collect(),
        // A manifest has no status: what it stored is at least its storage version.
        None => storage_version(was).into_iter().collect(),
    };
    let old_versions: BTreeMap<&str, &Value> = versions(was)
        .into_iter()
        .map(|v| (v.get("name").and_then(Value::as_str).unwrap_or(""), v))
        .collect();
    let new_versions: BTreeMap<&str, &Value> = versions(now)
        .into_iter()
        .map(|v| (v.get("name").and_then(Value::as_str).unwrap_or(""), v))
        .collect();
    for (version, old) in &old_versions {
        let stored_note = if stored.contains(version) {
            " and objects are stored in it (kube-apiserver refuses the update until `status.storedVersions` no longer lists it)"
        } else {
            ""
        };
        match new_versions.get(version) {
            None => out.push(version_finding(
                name,
                version,
                "",
                "version-removed",
                true,
                format!(
                    "version {version} is no longer in the CRD: clients of it fail{stored_note}"
                ),
            )),
            Some(new) => {
                if served(old) && !served(new) {
                    out.push(version_finding(
                        name,
                        version,
                        "",
                        "version-unserved",
                        true,
                        format!(
                            "version {version} is no longer served: clients of it fail{stored_note}"
                        ),
                    ));
                }
                let mut ctx = Walk {
                    crd: name,
                    version,
                    out,
                };
                let empty = Value::Null;
                let old_schema = old.pointer("/schema/openAPIV3Schema").unwrap_or(&empty);
                let new_schema = new.pointer("/schema/openAPIV3Schema").unwrap_or(&empty);
                ctx.schema("", old_schema, new_schema);
                ctx.subresources(old, new);
            }
        }
    }
    for version in new_versions.keys() {
        if !old_versions.contains_key(version) {
            out.push(version_finding(
                name,
                version,
                "",
                "version-added",
                false,
                format!("version {version} is new"),
            ));
        }
    }
    compare_storage(name, was, now, &new_versions, &old_versions, out);
}

fn compare_names(name: &str, was: &Value, now: &Value, out: &mut Vec<Finding>) {
    for field in ["shortNames", "categories"] {
        let list = |crd: &Value| -> BTreeSet<String> {
            crd.pointer(&format!("/spec/names/{field}"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (old, new) = (list(was), list(now));
        if old != new {
            out.push(crd_finding(
                name,
                &format!("spec.names.{field}"),
                "names-changed",
                false,
                format!("{field} changed from {old:?} to {new:?}"),
            ));
        }
    }
}

fn compare_storage(
    name: &str,
    was: &Value,
    now: &Value,
    new_versions: &BTreeMap<&str, &Value>,
    old_versions: &BTreeMap<&str, &Value>,
    out: &mut Vec<Finding>,
) {
    let (Some(old_storage), Some(new_storage)) = (storage_version(was), storage_version(now))
    else {
        return;
    };
    if old_storage == new_storage {
        return;
    }
    let strategy = now
        .pointer("/spec/conversion/strategy")
        .and_then(Value::as_str)
        .unwrap_or("None");
    let schema_of = |versions: &BTreeMap<&str, &Value>, v: &str| {
        versions
            .get(v)
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
            .cloned()
    };
    let same_schema = schema_of(new_versions, old_storage)
        .or_else(|| schema_of(old_versions, old_storage))
        == schema_of(new_versions, new_storage);
    let breaking = strategy == "None" && !same_schema;
    out.push(crd_finding(
        name,
        "spec.versions[*].storage",
        if breaking { "storage-changed-without-conversion" } else { "storage-version-changed" },
        breaking,
        if breaking {
            format!(
                "the storage version moved from {old_storage} to {new_storage}, whose schemas differ, with conversion `None`: objects stored as {old_storage} are read as {new_storage} unchanged"
            )
        } else {
            format!(
                "the storage version moved from {old_storage} to {new_storage}; migrate stored objects (`kube-codegen migrate-storage`) before dropping {old_storage}"
            )
        },
    ));
}

fn version_finding(
    crd: &str,
    version: &str,
    path: &str,
    change: &'static str,
    breaking: bool,
    message: String,
) -> Finding {
    Finding {
        crd: crd.to_owned(),
        version: Some(version.to_owned()),
        path: path.to_owned(),
        change,
        breaking,
        message,
    }
}

/// The walk over one version's schemas.
struct Walk<'a> {
    crd: &'a str,
    version: &'a str,
    out: &'a mut Vec<Finding>,
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
    s.get("type").and_then(Value::as_str).map(str::to_owned)
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
    s.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

impl Walk<'_> {
    fn push(&mut self, path: &str, change: &'static str, breaking: bool, message: String) {
        self.out.push(version_finding(
            self.crd,
            self.version,
            path,
            change,
            breaking,
            message,
        ));
    }

    fn schema(&mut self, path: &str, old: &Value, new: &Value) {
        let (old_type, new_type) = (type_of(old), type_of(new));
        if old_type != new_type {
            self.push(
                path,
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
        self.default(path, old, new);
        if old.get("description") != new.get("description") && old.get("description").is_some() {
            self.push(
                path,
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
                "enum-added",
                true,
                format!(
                    "{}: now limited to an enum; stored values outside it fail their next update",
                    shown(path)
                ),
            ),
            (Some(_), None) => self.push(
                path,
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
        for key in ["exclusiveMinimum", "exclusiveMaximum"] {
            if flag(old, key) != flag(new, key) {
                let tightened = flag(new, key);
                self.push(
                    path,
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
                path,
                "preserve-unknown-removed",
                true,
                format!("{}: unknown fields are now pruned (x-kubernetes-preserve-unknown-fields removed): stored data outside the schema is dropped on the next write", shown(path)),
            );
        }
        if flag(old, "nullable") && !flag(new, "nullable") {
            self.push(
                path,
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
                    "cel-rule-changed",
                    true,
                    format!(
                        "{}: rule `{before}` became `{rule}`; {ratcheting}",
                        shown(path)
                    ),
                ),
                None => self.push(
                    path,
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
                    "validation-loosened",
                    false,
                    format!("{}: rule `{rule}` removed", shown(path)),
                );
            }
        }
    }

    fn default(&mut self, path: &str, old: &Value, new: &Value) {
        match (old.get("default"), new.get("default")) {
            (Some(o), Some(n)) if o != n => self.push(
                path,
                "default-changed",
                true,
                format!("{}: default changed from {o} to {n}: objects written without it now get another value", shown(path)),
            ),
            (Some(o), None) => self.push(
                path,
                "default-changed",
                true,
                format!("{}: default {o} removed: objects written without it no longer get it", shown(path)),
            ),
            (None, Some(n)) => self.push(
                path,
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
                    &at,
                    "field-removed",
                    true,
                    format!("{at}: removed; clients that set it are refused or lose it, and stored values are pruned on the next write"),
                ),
                Some(new_field) => {
                    if new_required.contains(name) && !old_required.contains(name) {
                        self.push(
                            &at,
                            "field-required",
                            true,
                            format!("{at}: now required; objects and clients without it are refused"),
                        );
                    } else if old_required.contains(name) && !new_required.contains(name) {
                        self.push(&at, "validation-loosened", false, format!("{at}: no longer required"));
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
                    "field-required",
                    true,
                    format!(
                        "{at}: a new required field; every existing object and client lacks it"
                    ),
                );
            } else {
                self.push(
                    &at,
                    "field-added",
                    false,
                    format!("{at}: a new optional field"),
                );
            }
        }
    }

    fn subresources(&mut self, old: &Value, new: &Value) {
        for sub in ["status", "scale"] {
            let pointer = format!("/subresources/{sub}");
            match (old.pointer(&pointer).is_some(), new.pointer(&pointer).is_some()) {
                (true, false) => self.push(
                    &format!("subresources.{sub}"),
                    "subresource-removed",
                    true,
                    format!("the {sub} subresource is gone: clients of `/{sub}` fail"),
                ),
                // With a status subresource, writes to the object no longer change its
                // status: a client that wrote both at once silently loses its status.
                (false, true) => self.push(
                    &format!("subresources.{sub}"),
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
