//! Assembly: the kinds read from each version directory checked together and put in order,
//! as the [`ApiTree`] the emitters read.

use std::collections::BTreeMap;

use super::checks::{self, push};
use super::read::{VersionDir, VersionSpans};
use super::{ApiTree, CrdVersion, FileDiagnostics, GroupVersion, TreeResource};
use crate::diag::Diagnostic;
use crate::naming;

/// The checked tree: one [`GroupVersion`] per version directory with clients, and every
/// version of every custom resource kind; mistakes go to `errors`.
pub(super) fn assemble(
    versions: BTreeMap<(String, String), VersionDir>,
    errors: &mut Vec<FileDiagnostics>,
) -> ApiTree {
    let mut out: Vec<GroupVersion> = Vec::new();
    let mut crds: Vec<CrdVersion> = Vec::new();
    for ((group_dir, version_dir), dir) in versions {
        out.extend(version(&group_dir, version_dir, dir, errors, &mut crds));
    }
    out.sort_by(|a, b| (&a.group, &a.version).cmp(&(&b.group, &b.version)));
    checks::consumed(&crds, errors);
    // A consumed kind's CRD is its owner's: not built, installed, converted, documented or
    // linted here.
    crds.retain(|c| !c.resource.resource.consumed);
    checks::storage_versions(&mut crds, errors);
    checks::group_modules(&out, errors);
    ApiTree {
        versions: out,
        crds,
        warnings: Vec::new(),
        inputs: Vec::new(),
        regenerate: String::new(),
    }
}

/// One version directory: its kinds checked against the directory and each other, its CRD
/// versions added to `crds`; the group/version when it has clients.
fn version(
    group_dir: &str,
    version_dir: String,
    dir: VersionDir,
    errors: &mut Vec<FileDiagnostics>,
    crds: &mut Vec<CrdVersion>,
) -> Option<GroupVersion> {
    let first = dir.resources.first().or(dir.crd_only.first())?;
    let package = dir.package.as_ref().map(|(_, p)| p);
    let marker_group = package.and_then(|p| p.group_name.as_ref());
    let group = marker_group.map_or_else(|| first.1.resource.group.clone(), |g| g.value.clone());
    checks::members(
        group_dir,
        &version_dir,
        &dir,
        &group,
        marker_group.is_some(),
        errors,
    );
    let client_count = dir.resources.len();
    let mut all: Vec<(bool, &(usize, TreeResource, VersionSpans))> = dir
        .resources
        .iter()
        .chain(&dir.crd_only)
        .enumerate()
        .map(|(i, r)| (i < client_count, r))
        .collect();
    all.sort_by(|a, b| a.1.1.resource.kind.cmp(&b.1.1.resource.kind));
    checks::duplicate_kinds(&all, &group, &version_dir, errors);
    // A version marked `+kubebuilder:skipversion` is not part of its kind's CRD.
    let in_crd = |r: &TreeResource| !r.resource.builtin && !r.skip_version;
    crds.extend(
        all.iter()
            .filter(|(_, (_, r, _))| in_crd(r))
            .map(|(client, (_, r, _))| CrdVersion {
                group: group.clone(),
                version: version_dir.clone(),
                resource: r.clone(),
                client: *client,
            }),
    );
    if dir.resources.is_empty() {
        return None;
    }
    let go_name = group_go_name(group_dir, &version_dir, &dir, &group, errors)?;
    let mut resources = dir.resources;
    resources.sort_by(|a, b| a.1.resource.kind.cmp(&b.1.resource.kind));
    let resources = resources.into_iter().map(|(_, r, _)| r).collect();
    let mut apply = dir.apply;
    apply.sort_by(|a, b| a.stem.cmp(&b.stem));
    Some(GroupVersion {
        group,
        group_go_name: go_name,
        version: version_dir,
        resources,
        apply,
    })
}

/// The name of a version directory's group in accessors: `+groupGoName`, or one made from
/// the group (of the k8s-openapi module for built-in kinds); `None` (reported) when the
/// directory mixes built-in and custom kinds or the name is not an identifier.
fn group_go_name(
    group_dir: &str,
    version_dir: &str,
    dir: &VersionDir,
    group: &str,
    errors: &mut Vec<FileDiagnostics>,
) -> Option<String> {
    let package = dir.package.as_ref().map(|(_, p)| p);
    let marker_go_name = package.and_then(|p| p.group_go_name.as_ref());
    let builtins = dir
        .resources
        .iter()
        .filter(|(_, r, _)| r.resource.builtin)
        .count();
    if builtins != 0 && builtins != dir.resources.len() {
        let (file, r, _) = &dir.resources[0];
        push(
            errors,
            *file,
            Diagnostic::new(
                r.resource.span,
                format!(
                    "`{group_dir}/{version_dir}/` mixes built-in kinds with custom resources; keep built-in kinds in their own group directory"
                ),
            ),
        );
        return None;
    }
    let default_go_name = match crate::builtin::module_group(group) {
        Some(module) if builtins != 0 => naming::group_go_name(module),
        _ => naming::group_go_name(group),
    };
    let go_name = marker_go_name.map_or(default_go_name, |g| g.value.clone());
    if !naming::is_ident_like(&go_name) {
        let message = match marker_go_name {
            Some(_) => format!(
                "`+groupGoName={go_name}` is not an identifier; use a name such as `SampleController`"
            ),
            None => format!(
                "the group `{group}` gives the accessor name `{go_name}`, which is not an identifier; add `//! +groupGoName=<Name>` to the version module"
            ),
        };
        let (file, diag) = match (marker_go_name, &dir.package) {
            (Some(marker), Some((file, _))) => (
                *file,
                Diagnostic {
                    span: marker.loc.span,
                    doc_range: marker.loc.doc_range.clone(),
                    message,
                },
            ),
            _ => (
                dir.resources[0].0,
                Diagnostic::new(dir.resources[0].2.group, message),
            ),
        };
        push(errors, file, diag);
        return None;
    }
    Some(go_name)
}
