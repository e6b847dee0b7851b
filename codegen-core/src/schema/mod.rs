//! What the CRD markers mean: checked against the Rust types they sit on and turned into
//! patches on the CRD that kube's `CustomResourceExt::crd()` builds.
//!
//! kube and schemars write the schema; markers only add what they cannot express
//! (`+kubebuilder:validation:Pattern`, `+listType=map`, CEL rules, printer columns, ...).
//! Paths are JSON property names after serde renames: `spec.items.[].name`, where `[]` is an
//! array's items and `{}` a map's values.
//!
//! One file per concern: `patch` (what a marker changes), `walk` (from the spec down to
//! every struct the source shows), `place` (which Rust shapes a marker may sit on),
//! `keyword` (a marker's value as schema keys), `list_map`, `defaults`, `cel`
//! (`XValidation` rules), and `resource` (the markers of the CRD as a whole).

mod cel;
mod defaults;
mod keyword;
mod list_map;
mod one_of;
mod patch;
mod place;
mod resource;
mod walk;

use apiserver_rules::crd::{APPROVAL, is_protected_group};
use syn::{ItemStruct, Type};

use crate::ast::Structs;
use crate::attr::kube::KubeAttrs;
use crate::attr::marker::{self, Place};
use crate::diag::Ctxt;
use crate::model::Resource;

pub use patch::Origin;
use patch::coalesce;
pub(crate) use patch::{Markers, Patch, Probe};
pub(crate) use walk::Memo;
use walk::Walker;

/// Every patch of one resource: its resource markers and the markers of its spec, status
/// and the structs below them. `structs` is what the source shows (the derive: the spec).
/// With `probe` (the derive), fields of types the source does not show are recorded as
/// [`Probe`]s, and so is a status type it does not show.
pub(crate) fn resource_patches<'a>(
    cx: &mut Ctxt,
    spec: &'a ItemStruct,
    resource: &Resource,
    structs: &Structs<'a>,
    memo: &mut Memo<'a>,
    probe: bool,
) -> Markers {
    let kube = &resource.kube;
    let mut out = Markers::default();
    let mut walker = Walker {
        structs,
        memo,
        probe,
    };
    // With `no_spec` the struct's fields are the object's root properties.
    let root: Vec<String> = if kube.no_spec.is_some() {
        Vec::new()
    } else {
        vec!["spec".to_owned()]
    };
    walker.expand(cx, spec, &root, &mut out, 0);
    let status_name = kube
        .status
        .as_ref()
        .map(|s| s.value.rsplit("::").next().unwrap_or(&s.value).to_owned());
    let status = status_name.as_deref().and_then(|name| structs.get(name));
    if let Some(status) = status {
        walker.expand(cx, status, &["status".to_owned()], &mut out, 0);
    } else if probe
        && let Some(s) = &kube.status
        && let Ok(ty) = syn::parse_str::<Type>(&s.value)
    {
        out.probes.push(Probe {
            path: vec!["status".to_owned()],
            ty,
        });
    }
    let markers = marker::read_checked_elsewhere(&spec.attrs);
    out.skip_version = markers.iter().any(|m| m.name == "kubebuilder:skipversion");
    if markers
        .iter()
        .any(|m| m.name == "kubebuilder:subresource:status")
        && let Some(m) = markers
            .iter()
            .find(|m| m.name == "kube-codegen:noStatusSubresource")
    {
        cx.error_at(&m.name_loc, "`+kube-codegen:noStatusSubresource` contradicts `+kubebuilder:subresource:status`; keep one of them");
    }
    for m in &markers {
        if m.place == Place::Type
            && let Some(p) = resource::patch(
                cx,
                m,
                &resource::Context {
                    kube,
                    resource,
                    spec,
                    status,
                    structs,
                },
            )
        {
            out.origins.push(Origin {
                path: Vec::new(),
                key: None,
                loc: m.name_loc.clone(),
            });
            out.patches.push(p);
        }
    }
    check_approval(cx, kube, resource, &out.patches);
    out.patches = coalesce(out.patches);
    out
}

/// Checks the markers of `s` (any struct of an API tree) and keeps its patches in `memo`,
/// reporting mistakes to `cx`, the context of the file that defines it.
pub(crate) fn check_struct<'a>(
    cx: &mut Ctxt,
    s: &'a ItemStruct,
    structs: &Structs<'a>,
    memo: &mut Memo<'a>,
) {
    let mut walker = Walker {
        structs,
        memo,
        probe: false,
    };
    walker.remember(cx, s);
}

/// The markers of a struct that derives `CrdMarkers`, relative to where it appears.
pub(crate) fn struct_markers(cx: &mut Ctxt, s: &ItemStruct) -> Markers {
    let structs = Structs::new([], Some(s));
    let mut memo = Memo::default();
    let mut out = Markers::default();
    let mut walker = Walker {
        structs: &structs,
        memo: &mut memo,
        probe: true,
    };
    walker.expand(cx, s, &[], &mut out, 0);
    out.patches = coalesce(out.patches);
    out
}

/// A CRD of a protected group without the approval annotation is rejected by the API
/// server: say so where the group is written.
fn check_approval(cx: &mut Ctxt, kube: &KubeAttrs, resource: &Resource, patches: &[Patch]) {
    if resource.builtin || !is_protected_group(&resource.group) {
        return;
    }
    let by_marker = patches.iter().any(|p| {
        matches!(p, Patch::Merge { pointer: "/metadata", value } if value.pointer("/annotations/api-approved.kubernetes.io").is_some())
    });
    let by_kube = kube.annotations.iter().any(|(k, _)| k.value == APPROVAL);
    if by_marker || by_kube {
        return;
    }
    let span = kube.group.as_ref().map_or(resource.span, |g| g.span);
    cx.error(
        span,
        format!(
            "group `{}` is protected: kube-apiserver rejects its CRD without the `{APPROVAL}` annotation; add `/// +kubebuilder:metadata:annotations=\"{APPROVAL}=<URL of the API review>\"` to the spec struct, or `=unapproved, <reason>` for an API Kubernetes did not review",
            resource.group
        ),
    );
}
