//! What changed between two sets of CRDs, each change in a [`Class`]: breaking (clients of a
//! version fail, or stored objects become unreadable, lost or unwritable as they are),
//! tightening (new writes can be refused, while stored objects stay readable and, under
//! validation ratcheting, writable while unchanged) or compatible.
//!
//! The rules follow what kube-apiserver 1.36 does with an updated CRD: a removed field is
//! pruned from every read at once; a removed or unserved version fails every client of it;
//! value validation (bounds, patterns, enums, formats, rules below the root, `required`
//! below the root) is ratcheted on update (Kubernetes 1.30 and later: an error at a node
//! whose value did not change is only a warning), but never on create and never for
//! transition rules; conversion `None` only relabels stored objects. Differences that
//! kube-apiserver does not make (an unset list type and `atomic`, descriptions, the order of
//! `enum` values, ...) are not findings: see [`super::normal`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::normal;
use super::schema::Walk;

/// How a change affects what is already stored and who already uses it, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Nothing that worked stops working.
    Compatible,
    /// New writes can be refused; stored objects stay readable and, under validation
    /// ratcheting, writable while the part the change is about is left unchanged.
    Tightening,
    /// Clients of a version fail, or stored objects become unreadable, lose data, or can no
    /// longer be written as they are.
    Breaking,
}

impl Class {
    /// `breaking`, `tightening` or `compatible`, as the report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Compatible => "compatible",
            Class::Tightening => "tightening",
            Class::Breaking => "breaking",
        }
    }
}

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
    /// How it affects stored objects and existing clients.
    pub class: Class,
    /// What changed and what it does, in words.
    pub message: String,
    /// The schema keyword the change is about (`maximum`, `pattern`, `required`, ...), when
    /// it is about one: with `--input`, the marker that sets it is where the change is shown.
    pub key: Option<&'static str>,
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
                            Class::Breaking,
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
                Class::Breaking,
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
                Class::Compatible,
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
    class: Class,
    message: String,
) -> Finding {
    Finding {
        crd: crd.to_owned(),
        version: None,
        path: path.to_owned(),
        change,
        class,
        message,
        key: None,
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

/// The CRD's conversion strategy: `None` when unset.
fn strategy(crd: &Value) -> &str {
    crd.pointer("/spec/conversion/strategy")
        .and_then(Value::as_str)
        .unwrap_or("None")
}

/// What pruning and decoding read of a version's schema (see [`normal::structural`]).
fn structure(version: &Value) -> Value {
    let empty = Value::Null;
    let schema = version.pointer("/schema/openAPIV3Schema").unwrap_or(&empty);
    normal::structural(&normal::schema(schema))
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
                Class::Breaking,
                format!(
                    "changed from `{}` to `{}`: clients and stored objects of the old one no longer match",
                    text(was, field),
                    text(now, field)
                ),
            ));
        }
    }
    compare_names(name, was, now, out);
    // What the cluster says it stored in, when the baseline is the cluster's.
    let known: Option<BTreeSet<&str>> = was
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect());
    // A manifest has no status: what it stored is at least its storage version.
    let stored = known
        .clone()
        .unwrap_or_else(|| storage_version(was).into_iter().collect());
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
            None if served(old) => out.push(version_finding(
                name,
                version,
                "",
                "version-removed",
                Class::Breaking,
                format!(
                    "version {version} is no longer in the CRD: clients of it fail{stored_note}"
                ),
            )),
            // Not served: no client uses it, but objects may have been stored in it before.
            None => {
                let none_stored = known.as_ref().is_some_and(|k| !k.contains(version));
                out.push(version_finding(
                    name,
                    version,
                    "",
                    "version-removed",
                    if none_stored { Class::Compatible } else { Class::Breaking },
                    if none_stored {
                        format!("version {version}, not served and with no objects stored in it, is no longer in the CRD")
                    } else {
                        format!("version {version}, not served, is no longer in the CRD: kube-apiserver refuses the update while `status.storedVersions` lists it (objects were stored in it once)")
                    },
                ));
            }
            Some(new) => {
                if served(old) && !served(new) {
                    out.push(version_finding(
                        name,
                        version,
                        "",
                        "version-unserved",
                        Class::Breaking,
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
                ctx.root(old_schema, new_schema);
                ctx.subresources(old, new);
                version_extras(name, version, old, new, out);
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
                Class::Compatible,
                format!("version {version} is new"),
            ));
        }
    }
    compare_storage(name, was, now, &new_versions, &old_versions, out);
    compare_conversion(name, was, now, &new_versions, out);
}

/// What a version shows and serves besides its schema: printer columns (kubectl's output
/// only), selectable fields (a removed one fails the field selectors clients send), and
/// deprecation.
fn version_extras(name: &str, version: &str, old: &Value, new: &Value, out: &mut Vec<Finding>) {
    let columns = |v: &Value| -> Vec<String> {
        v.get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .map(|cols| {
                cols.iter()
                    .map(|c| {
                        let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
                        format!("{} ({})", field("name"), field("jsonPath"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (was, now) = (columns(old), columns(new));
    if was != now {
        let gone: Vec<&String> = was.iter().filter(|c| !now.contains(c)).collect();
        let added: Vec<&String> = now.iter().filter(|c| !was.contains(c)).collect();
        out.push(version_finding(
            name,
            version,
            "additionalPrinterColumns",
            "printer-columns-changed",
            Class::Compatible,
            format!(
                "printer columns changed (kubectl's output only): removed {gone:?}, added {added:?}"
            ),
        ));
    }
    let fields = |v: &Value| -> BTreeSet<String> {
        v.get("selectableFields")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (was, now) = (fields(old), fields(new));
    for gone in was.difference(&now) {
        out.push(version_finding(
            name,
            version,
            "selectableFields",
            "selectable-field-removed",
            Class::Breaking,
            format!("selectable field `{gone}` removed: field selectors on it are refused"),
        ));
    }
    for added in now.difference(&was) {
        out.push(version_finding(
            name,
            version,
            "selectableFields",
            "selectable-field-added",
            Class::Compatible,
            format!("selectable field `{added}` added"),
        ));
    }
    let deprecated = |v: &Value| v.get("deprecated").and_then(Value::as_bool) == Some(true);
    if !deprecated(old) && deprecated(new) {
        out.push(version_finding(
            name,
            version,
            "deprecated",
            "version-deprecated",
            Class::Compatible,
            format!("version {version} is now deprecated: clients get a warning"),
        ));
    }
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
                Class::Compatible,
                format!("{field} changed from {old:?} to {new:?}"),
            ));
        }
    }
}

/// A moved storage version: breaking only with conversion `None` between versions whose
/// stored shape differs. Objects stored as the old version are then read as the new one
/// unchanged, so what matters is what pruning and decoding read ([`normal::structural`]);
/// versions that differ only in validation (a new rule, a bound) read each other's objects
/// without loss, and the validation itself is compared version by version.
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
    let structure_of =
        |versions: &BTreeMap<&str, &Value>, v: &str| versions.get(v).map(|v| structure(v));
    let same_structure = structure_of(new_versions, old_storage)
        .or_else(|| structure_of(old_versions, old_storage))
        == structure_of(new_versions, new_storage);
    let breaking = strategy(now) == "None" && !same_structure;
    out.push(crd_finding(
        name,
        "spec.versions[*].storage",
        if breaking { "storage-changed-without-conversion" } else { "storage-version-changed" },
        if breaking { Class::Breaking } else { Class::Compatible },
        if breaking {
            format!(
                "the storage version moved from {old_storage} to {new_storage}, whose stored shapes (types or fields) differ, with conversion `None`: objects stored as {old_storage} are read as {new_storage} unchanged, and what {new_storage} does not have is pruned"
            )
        } else {
            format!(
                "the storage version moved from {old_storage} to {new_storage}; migrate stored objects (`kube-codegen migrate-storage`) before dropping {old_storage}"
            )
        },
    ));
}

/// Conversion through a webhook given up (`None`) while the served versions' stored shapes
/// differ: objects are then only relabelled with the version asked for.
fn compare_conversion(
    name: &str,
    was: &Value,
    now: &Value,
    new_versions: &BTreeMap<&str, &Value>,
    out: &mut Vec<Finding>,
) {
    if strategy(was) != "Webhook" || strategy(now) != "None" {
        return;
    }
    let shapes: Vec<Value> = new_versions
        .values()
        .filter(|v| served(v))
        .map(|v| structure(v))
        .collect();
    if shapes.windows(2).all(|w| w[0] == w[1]) {
        return;
    }
    out.push(crd_finding(
        name,
        "spec.conversion.strategy",
        "conversion-removed",
        Class::Breaking,
        "conversion changed from `Webhook` to `None` while the served versions' stored shapes differ: objects read in another version than they are stored in keep the stored shape".to_owned(),
    ));
}

pub(super) fn version_finding(
    crd: &str,
    version: &str,
    path: &str,
    change: &'static str,
    class: Class,
    message: String,
) -> Finding {
    Finding {
        crd: crd.to_owned(),
        version: Some(version.to_owned()),
        path: path.to_owned(),
        change,
        class,
        message,
        key: None,
    }
}
