//! `kube-codegen dev restore`: puts back what a development run (`INSTALL_WEBHOOKS=1`,
//! `--install-webhooks`) changed on a cluster and did not put back itself, from the record
//! each changed object carries (the runtime's `webhook::dev::restore`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::error::{Error, Outcome};

/// Arguments of `kube-codegen dev`.
#[derive(Debug, Args)]
pub struct DevArgs {
    #[command(subcommand)]
    command: DevCommand,
}

/// What `kube-codegen dev` does.
#[derive(Debug, Subcommand)]
enum DevCommand {
    /// Put back every CRD conversion and webhook configuration a development run changed:
    /// each carries a record (the `dev.kube-codegen.io/restore` annotation) of what it held
    /// and whom the change belongs to; configurations the run created are deleted. A stopped
    /// run does this itself, and the next start does it for a run that died.
    Restore(RestoreArgs),
}

/// Arguments of `kube-codegen dev restore`.
#[derive(Debug, Args)]
struct RestoreArgs {
    /// Only what this field manager changed (the operator's name; default: every one).
    #[arg(long, value_name = "NAME")]
    field_manager: Option<String>,
    /// The kubeconfig (default: `KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context.
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
}

/// Runs `dev restore`.
#[cfg(feature = "cluster")]
pub fn run(args: &DevArgs) -> Result<Outcome, Error> {
    let DevCommand::Restore(args) = &args.command;
    let restored = crate::cluster::block_on(async {
        let client =
            crate::cluster::client(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        kube_codegen_runtime::webhook::dev::restore(&client, args.field_manager.as_deref())
            .await
            .map_err(|e| format!("error: restoring: {e}"))
    })
    .map_err(|e| Error::Failed(e.strip_prefix("error: ").unwrap_or(&e).to_owned()))?;
    if restored.is_empty() {
        return Ok(Outcome::new(
            "kube-codegen: nothing to put back: no object carries a development record",
        ));
    }
    let list = restored
        .iter()
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Outcome::new(format!("kube-codegen: put back {list}")))
}

/// Without the `cluster` feature there is no client.
#[cfg(not(feature = "cluster"))]
pub fn run(_args: &DevArgs) -> Result<Outcome, Error> {
    Err(Error::Refused(
        "this kube-codegen was built without the `cluster` feature, which dev restore needs"
            .to_owned(),
    ))
}
