//! `kube-codegen webhooks`: the MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration of a controller, from its `+kubebuilder:webhook` markers,
//! written as `manifests.yaml` (controller-gen's file name) in the output directory.

use std::path::PathBuf;

use clap::Args;
use kube_codegen_core::emit::files::OutputFile;

use crate::error::{Error, Op, Outcome, plural};
use crate::{json, output, paths};

/// Arguments of `kube-codegen webhooks`.
#[derive(Debug, Args)]
pub struct WebhooksArgs {
    /// Directory of the sources whose comments hold the markers; every `.rs` file below it
    /// is read.
    #[arg(long, value_name = "DIR")]
    input: PathBuf,
    /// Directory to write `manifests.yaml` into (for example `artifacts/webhooks`).
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// Adds cert-manager's `cert-manager.io/inject-ca-from: <NAMESPACE>/<CERTIFICATE>`
    /// annotation, so cert-manager fills in each webhook's `caBundle`.
    #[arg(long, value_name = "NAMESPACE/CERTIFICATE")]
    cert_manager_certificate: Option<String>,
    /// Compare with the directory instead of writing; exit 1 when it differs.
    #[arg(long)]
    verify: bool,
}

impl WebhooksArgs {
    /// What the arguments ask for.
    pub fn options(self) -> Options {
        Options {
            input: self.input,
            output: self.output,
            cert_manager_certificate: self.cert_manager_certificate,
            verify: self.verify,
        }
    }
}

/// What `webhooks` reads, writes and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory of the sources with the markers.
    pub input: PathBuf,
    /// Directory of `manifests.yaml`.
    pub output: PathBuf,
    /// `NAMESPACE/CERTIFICATE` of cert-manager's CA injection, if any.
    pub cert_manager_certificate: Option<String>,
    /// Compare instead of writing.
    pub verify: bool,
}

impl Options {
    /// The command that writes the same files, for their header.
    fn reproduce_command(&self) -> String {
        let root = paths::root(&self.output);
        let mut command = format!(
            "kube-codegen webhooks --input {} --output {}",
            paths::shown(&self.input, &root),
            paths::shown(&self.output, &root)
        );
        if let Some(c) = &self.cert_manager_certificate {
            command.push_str(&format!(" --cert-manager-certificate {c}"));
        }
        command
    }
}

/// Writes (or verifies) `manifests.yaml`.
pub fn run(options: &Options) -> Result<Outcome, Error> {
    let files = files(options)?;
    let command = options.reproduce_command();
    output::write_or_verify(
        &options.output,
        &files,
        output::YAML,
        options.verify,
        &command,
    )
    .map(Outcome::new)
}

/// `manifests.yaml`, or nothing when no marker declares a webhook.
fn files(options: &Options) -> Result<Vec<OutputFile>, Error> {
    if let Some(c) = &options.cert_manager_certificate {
        let valid = c
            .split_once('/')
            .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'));
        if !valid {
            return Err(Error::Refused(format!(
                "`--cert-manager-certificate {c}` is `<namespace>/<certificate>`"
            )));
        }
    }
    let sources = kube_codegen_core::source::load(&options.input)
        .map_err(|e| Error::io(Op::Read, e.path, e.error))?;
    let webhooks = kube_codegen_core::webhook::collect(&sources).map_err(|rendered| {
        let n = rendered.len();
        Error::Diagnostics {
            rendered,
            stopped: format!(
                "could not generate webhook configurations: {n} error{}",
                plural(n)
            ),
        }
    })?;
    let documents = kube_codegen_core::webhook::configurations(
        &webhooks,
        options.cert_manager_certificate.as_deref(),
    );
    let mut contents = format!(
        "{}\n# Regenerate with: {}\n",
        output::YAML_HEADER_LINE,
        options.reproduce_command()
    );
    if documents.is_empty() {
        // Still written, with no document: code that embeds the file (a crate serving only
        // conversion webhooks, say) builds, and stays right once markers are added.
        eprintln!(
            "kube-codegen: no `+kubebuilder:webhook` marker in `{}`: no configuration",
            options.input.display()
        );
        contents.push_str("# No `+kubebuilder:webhook` marker: no configuration.\n");
    }
    for doc in documents {
        let yaml = serde_saphyr::to_string(&json::sorted(&doc))
            .map_err(|e| Error::Failed(format!("cannot write YAML: {e}")))?;
        contents.push_str("---\n");
        contents.push_str(&yaml);
    }
    Ok(vec![OutputFile {
        path: PathBuf::from("manifests.yaml"),
        contents,
    }])
}
