//! What import will write, checked before anything is: every version of every CRD with the
//! Rust names the tree gives it, and the names `generate` then derives from them. A name
//! kube-apiserver accepts and `generate` would refuse is an error here, or is mapped to one
//! it takes (a kind's type, a group's module and Go name); two CRDs whose kinds would share
//! a type, a file or a client file are an error naming both, since no rename keeps both
//! kinds as their owners named them.

use std::collections::{BTreeMap, BTreeSet};

use kube_codegen_core::naming;
use serde_json::Value;

use super::emit::{self, KindVersion, text};
use super::names::{file_stem, generated_stem, kind_type};
use super::read::Source;

/// One version of one CRD and the names it gets.
pub struct Plan<'a> {
    /// The CRD.
    pub source: &'a Source,
    /// The version object (`spec.versions[i]`).
    pub version: &'a Value,
    /// How many versions the CRD has.
    pub versions: usize,
    /// API group.
    pub group: String,
    /// Version name.
    pub version_name: String,
    /// Kind.
    pub kind: String,
    /// The kind's Rust type ([`kind_type`]).
    pub rust_kind: String,
    /// The stem of the kind's file in the tree ([`file_stem`]).
    pub stem: String,
    /// The stem of the client file `generate` writes for it ([`generated_stem`]).
    pub generated: String,
}

impl Plan<'_> {
    /// `crds/a.yaml, document 1 (CustomResourceDefinition `a.example.com`)`.
    fn named(&self) -> String {
        named(self.source)
    }
}

fn named(source: &Source) -> String {
    format!(
        "{} (CustomResourceDefinition `{}`)",
        source.origin,
        text(&source.crd, "/metadata/name")
    )
}

/// Every version of every CRD, named; or every CRD `generate` could not read (a version or
/// plural it refuses) and every two whose kinds would share a name.
pub fn plans(sources: &[Source]) -> Result<Vec<Plan<'_>>, Vec<String>> {
    let mut plans = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        let crd = &source.crd;
        let plural = text(crd, "/spec/names/plural");
        if !naming::is_plural_name(plural) {
            errors.push(format!(
                "error: {}: `spec.names.plural`: `{plural}` is not a name `generate` reads (lowercase letters and digits, starting with a letter), which the clients' accessors are named after; kube-apiserver accepts it, import cannot",
                named(source)
            ));
        }
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let kind = text(crd, "/spec/names/kind");
        let rust_kind = kind_type(kind);
        for (i, version) in versions.iter().enumerate() {
            let version_name = text(version, "/name");
            if !naming::is_kube_version(version_name) {
                errors.push(format!(
                    "error: {}: `spec.versions[{i}].name`: `{version_name}` is not a Kubernetes API version (`v1`, `v1beta1`, `v1alpha1`), the only versions `generate` reads; kube-apiserver accepts it, import cannot",
                    named(source)
                ));
                continue;
            }
            plans.push(Plan {
                source,
                version,
                versions: versions.len(),
                group: text(crd, "/spec/group").to_owned(),
                version_name: version_name.to_owned(),
                kind: kind.to_owned(),
                stem: file_stem(kind),
                generated: generated_stem(&rust_kind),
                rust_kind: rust_kind.clone(),
            });
        }
    }
    errors.extend(clashes(&plans));
    if errors.is_empty() {
        Ok(plans)
    } else {
        Err(errors)
    }
}

/// Every two CRDs whose kinds share a group and version and would share a type, the tree's
/// file or `generate`'s file (names equal after casing: `FooBar` and `FOOBar` are both
/// `foo_bar.rs`, on any file system), once per pair.
fn clashes(plans: &[Plan<'_>]) -> Vec<String> {
    let mut errors = Vec::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, a) in plans.iter().enumerate() {
        for b in &plans[i + 1..] {
            if (&a.group, &a.version_name) != (&b.group, &b.version_name)
                || std::ptr::eq(a.source, b.source)
            {
                continue;
            }
            let what = if a.kind == b.kind {
                format!("both define the kind `{}`", a.kind)
            } else if a.rust_kind == b.rust_kind {
                format!(
                    "kinds `{}` and `{}` both become the Rust type `{}`",
                    a.kind, b.kind, a.rust_kind
                )
            } else if a.stem == b.stem {
                format!(
                    "kinds `{}` and `{}` both become the file `{}.rs`",
                    a.kind, b.kind, a.stem
                )
            } else if a.generated == b.generated {
                format!(
                    "kinds `{}` and `{}` both become the client file `{}.rs` that `generate` writes",
                    a.kind, b.kind, a.generated
                )
            } else {
                continue;
            };
            if !seen.insert((&a.source.origin, &b.source.origin)) {
                continue;
            }
            errors.push(format!(
                "error: {} and {}: {what} in `{}/{}`; one tree holds only one of them (import each into a tree of its own)",
                a.named(),
                b.named(),
                a.group,
                a.version_name
            ));
        }
    }
    errors
}

/// The errors for groups that would share a module ([`super::modules::group_modules`]),
/// naming a CRD of each.
pub fn group_clashes(plans: &[Plan<'_>], clashes: &[(String, String)]) -> Vec<String> {
    let first = |group: &str| {
        plans
            .iter()
            .find(|p| p.group == group)
            .map_or_else(String::new, Plan::named)
    };
    clashes
        .iter()
        .map(|(a, b)| {
            format!(
                "error: {} and {}: groups `{a}` and `{b}` both become the same Rust module; one tree holds only one of them (import each into a tree of its own)",
                first(a),
                first(b)
            )
        })
        .collect()
}

/// Every version of every CRD as Rust, in order; the types of each version's kinds named
/// apart (the version's apply configurations share a module), the kinds' own types first.
pub fn kind_versions(plans: &[Plan<'_>], owned: bool) -> Vec<KindVersion> {
    let mut taken: BTreeMap<(&str, &str), BTreeSet<String>> = BTreeMap::new();
    for p in plans {
        taken
            .entry((&p.group, &p.version_name))
            .or_default()
            .insert(p.rust_kind.clone());
    }
    plans
        .iter()
        .map(|p| {
            let names = taken.entry((&p.group, &p.version_name)).or_default();
            let kv = emit::kind_version(&emit::VersionInput {
                crd: &p.source.crd,
                version: p.version,
                versions: p.versions,
                origin: &p.source.origin,
                owned,
                rust_kind: &p.rust_kind,
                taken: names,
            });
            names.clone_from(&kv.taken);
            kv
        })
        .collect()
}

/// A note for each top struct that is not `<Kind>Spec`, `<Kind>Status` or `<Kind>Fields`
/// because that name was taken, with what took it.
pub fn renamed_notes(kinds: &[KindVersion], plans: &[Plan<'_>]) -> Vec<String> {
    let mut notes = Vec::new();
    for k in kinds {
        for (wanted, given) in &k.renamed {
            let by = plans
                .iter()
                .find(|p| {
                    p.group == k.group && p.version_name == k.version && &p.rust_kind == wanted
                })
                .map_or_else(
                    || "a type of another kind of the version".to_owned(),
                    |p| format!("the kind of {}", p.named()),
                );
            notes.push(format!(
                "kube-codegen: note: {}/{} {}: `{given}` rather than `{wanted}`, which is {by}",
                k.group, k.version, k.kind
            ));
        }
    }
    notes
}
