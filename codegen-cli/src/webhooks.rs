//! `kube-codegen webhooks`: the MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration of a controller, from its `+kubebuilder:webhook` markers,
//! written as `manifests.yaml` (controller-gen's file name) in the output directory.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use kube_codegen_core::emit::files::OutputFile;

use crate::{output, paths};

#[derive(Debug, Args)]
pub struct WebhooksArgs {
    /// Directory of the sources whose comments hold the markers; every `.rs` file below it
    /// is read.
    #[arg(long, value_name = "DIR")]
    pub input: PathBuf,
    /// Directory to write `manifests.yaml` into (for example `artifacts/webhooks`).
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Adds cert-manager's `cert-manager.io/inject-ca-from: <NAMESPACE>/<CERTIFICATE>`
    /// annotation, so cert-manager fills in each webhook's `caBundle`.
    #[arg(long, value_name = "NAMESPACE/CERTIFICATE")]
    pub cert_manager_certificate: Option<String>,
    /// Compare with the directory instead of writing; exit 1 when it differs.
    #[arg(long)]
    pub verify: bool,
}

impl WebhooksArgs {
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

pub fn run(args: &WebhooksArgs) -> ExitCode {
    let files = match files(args) {
        Ok(files) => files,
        Err(errors) => {
            for e in &errors {
                eprintln!("{e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let command = args.reproduce_command();
    output::report(output::write_or_verify(
        &args.output,
        &files,
        output::YAML,
        args.verify,
        &command,
    ))
}

/// `manifests.yaml`, or nothing when no marker declares a webhook.
fn files(args: &WebhooksArgs) -> Result<Vec<OutputFile>, Vec<String>> {
    if let Some(c) = &args.cert_manager_certificate {
        let valid = c
            .split_once('/')
            .is_some_and(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'));
        if !valid {
            return Err(vec![format!(
                "error: `--cert-manager-certificate {c}` is `<namespace>/<certificate>`"
            )]);
        }
    }
    let sources = kube_codegen_core::source::load(&args.input)
        .map_err(|err| vec![format!("error: {err}")])?;
    let webhooks = kube_codegen_core::webhook::collect(&sources).map_err(|mut errors| {
        let n = errors.len();
        errors.push(format!(
            "error: could not generate webhook configurations: {n} error{}",
            if n == 1 { "" } else { "s" }
        ));
        errors
    })?;
    let documents = kube_codegen_core::webhook::configurations(
        &webhooks,
        args.cert_manager_certificate.as_deref(),
    );
    let mut contents = format!(
        "{}\n# Regenerate with: {}\n",
        output::YAML_HEADER_LINE,
        args.reproduce_command()
    );
    if documents.is_empty() {
        // Still written, with no document: code that embeds the file (a crate serving only
        // conversion webhooks, say) builds, and stays right once markers are added.
        eprintln!(
            "kube-codegen: no `+kubebuilder:webhook` marker in `{}`: no configuration",
            args.input.display()
        );
        contents.push_str("# No `+kubebuilder:webhook` marker: no configuration.\n");
    }
    for doc in documents {
        let yaml = serde_saphyr::to_string(&crate::crds::sorted(&doc))
            .map_err(|e| vec![format!("error: cannot write YAML: {e}")])?;
        contents.push_str("---\n");
        contents.push_str(&yaml);
    }
    Ok(vec![OutputFile {
        path: PathBuf::from("manifests.yaml"),
        contents,
    }])
}
