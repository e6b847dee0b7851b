//! The kustomize layout that deploys a crate as generated: `config/default` (everything,
//! `kubectl apply --server-side -k config/default`) over the bases `config/crd-conversion`
//! (written by `crds --kustomize`), `config/rbac`, `config/manager` and, once the crate has
//! webhooks, `config/webhook`; and the `config/cert-manager` overlay that issues the
//! webhooks' certificate. The bases' kustomizations are named `Kustomization`, which
//! `kubectl apply -f DIR/` skips, so applying a directory of manifests keeps working.

use std::path::Path;

use super::Names;
use super::files::{NewFile, above, read, write, write_files};
use crate::error::Error;

/// The line of `config/default/kustomization.yaml` the webhook base goes above.
const RESOURCES_MARKER: &str = "# kube-codegen create webhook: more resources above this line.";

/// A base kustomization listing `resources`.
fn base(what: &str, resources: &[&str]) -> String {
    let mut text = format!(
        "# {what}, as a kustomize base of config/default (`kubectl apply -f` skips this file).\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
    );
    for resource in resources {
        text.push_str(&format!("- {resource}\n"));
    }
    text
}

/// What `init` writes for deploying: `config/default` and the bases of `config/rbac` and
/// `config/manager`.
pub fn init_files(names: &Names) -> Vec<NewFile> {
    vec![
        NewFile::new(
            "config/default/kustomization.yaml",
            names.fill(include_str!("template/default_kustomization.yaml.tmpl")),
        ),
        NewFile::new(
            "config/rbac/Kustomization",
            base("The RBAC of role.yaml", &["role.yaml"]),
        ),
        NewFile::new(
            "config/manager/Kustomization",
            base("The Namespace and the manager", &["deployment.yaml"]),
        ),
    ]
}

/// What the first webhook of a crate adds for deploying: the webhook base (configurations
/// and Service), the manager serving them with its own certificate, and the cert-manager
/// overlay (which mounts cert-manager's instead); `config/default` gains them. A crate without `config/default` (older than it)
/// gets nothing.
pub fn add_webhooks(dir: &Path, names: &Names) -> Result<(), Error> {
    let default = dir.join("config/default/kustomization.yaml");
    if !default.is_file() {
        return Ok(());
    }
    let text = read(&default)?;
    write_files(
        dir,
        &[
            NewFile::new(
                "config/webhook/Kustomization",
                base(
                    "The webhook configurations (manifests.yaml, from the markers) and their Service",
                    &["manifests.yaml", "service.yaml"],
                ),
            ),
            NewFile::new(
                "config/webhook/service.yaml",
                names.fill(include_str!("template/webhook_service.yaml.tmpl")),
            ),
            NewFile::new(
                "config/default/manager_webhook_patch.yaml",
                names.fill(include_str!("template/manager_webhook_patch.yaml.tmpl")),
            ),
            NewFile::new(
                "config/cert-manager/kustomization.yaml",
                names.fill(include_str!("template/certmanager_kustomization.yaml.tmpl")),
            ),
            NewFile::new(
                "config/cert-manager/certificate.yaml",
                names.fill(include_str!("template/certificate.yaml.tmpl")),
            ),
        ],
    )?;
    if text.contains("- ../webhook\n") || !text.contains(RESOURCES_MARKER) {
        return Ok(());
    }
    let mut text = above(&text, RESOURCES_MARKER, "- ../webhook");
    text.push_str("patches:\n- path: manager_webhook_patch.yaml\n");
    write(&default, &text)
}
