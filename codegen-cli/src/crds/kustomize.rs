//! `kube-codegen crds --kustomize DIR`: the CRDs as kustomize bases, so the directory of
//! CRD files never names a Service and the conversion webhook is set only where the Service
//! is deployed.
//!
//! Two files, each named `Kustomization` (a name kustomize reads and `kubectl apply -f DIR/`
//! skips, as it reads only `.yaml`, `.yml` and `.json`):
//! - `<output>/Kustomization` lists the CRD files: `config/crd` as a base;
//! - `DIR/Kustomization` takes that base and patches each converting CRD's `spec.conversion`
//!   (and cert-manager's annotation) in: the CRDs as deployed beside the webhook Service.
//!   It holds no `.yaml` file, so `kubectl apply -f DIR/` applies nothing by mistake.

use std::path::{Path, PathBuf};

use kube_codegen_core::emit::files::OutputFile;
use serde_json::Value;

use crate::error::Error;
use crate::{json, output, paths};

/// The file name kustomize reads and `kubectl apply -f` skips.
pub const FILE: &str = "Kustomization";

/// One converting CRD's patch: its name and what it sets.
#[derive(Debug)]
pub struct ConversionPatch {
    /// `<plural>.<group>`.
    pub crd: String,
    /// `spec.conversion`.
    pub conversion: Value,
    /// `metadata.annotations` to add (cert-manager's CA injection), if any.
    pub annotations: Option<Value>,
}

impl ConversionPatch {
    /// The patch as a partial CRD (a strategic merge patch).
    fn object(&self) -> Value {
        let mut metadata = serde_json::json!({ "name": self.crd });
        if let Some(annotations) = &self.annotations {
            metadata["annotations"] = annotations.clone();
        }
        serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": metadata,
            "spec": { "conversion": self.conversion },
        })
    }
}

/// The header every file starts with.
fn header(command: &str, what: &str) -> String {
    format!(
        "{}\n# Regenerate with: {command}\n# {what}\n",
        output::YAML_HEADER_LINE
    )
}

/// `<output>/Kustomization`: every CRD file of `crd_files`, as a kustomize base.
pub fn base(crd_files: &[OutputFile], command: &str) -> OutputFile {
    let mut text = header(
        command,
        "The CRDs of this directory, as a kustomize base (`kubectl apply -f` skips this file).",
    );
    text.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n");
    text.push_str(if crd_files.is_empty() {
        "resources: []\n"
    } else {
        "resources:\n"
    });
    for file in crd_files {
        text.push_str(&format!("- {}\n", file.path.display()));
    }
    OutputFile {
        path: PathBuf::from(FILE),
        contents: text,
    }
}

/// `<dir>/Kustomization`: the base in `crd_dir` with each of `patches` applied.
pub fn with_conversion(
    dir: &Path,
    crd_dir: &Path,
    patches: &[ConversionPatch],
    command: &str,
) -> Result<OutputFile, Error> {
    let mut text = header(
        command,
        "The CRDs with their conversion through the webhook Service: deploy them beside it (`kubectl apply -k`).",
    );
    text.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n");
    text.push_str(&format!(
        "resources:\n- {}\n",
        paths::relative(dir, crd_dir)
    ));
    if !patches.is_empty() {
        text.push_str("patches:\n");
    }
    for patch in patches {
        let yaml = serde_saphyr::to_string(&json::sorted(&patch.object()))
            .map_err(|e| Error::Failed(format!("cannot write YAML: {e}")))?;
        text.push_str(&format!(
            "- target: {{group: apiextensions.k8s.io, kind: CustomResourceDefinition, name: {}}}\n  patch: |-\n",
            patch.crd
        ));
        for line in yaml.lines() {
            text.push_str(&format!("    {line}\n"));
        }
    }
    Ok(OutputFile {
        path: PathBuf::from(FILE),
        contents: text,
    })
}
