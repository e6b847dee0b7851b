//! `kube-codegen migrate-storage --crd NAME`: rewrites every object of a CRD in its storage
//! version and trims `status.storedVersions` to it (the runtime's `migrate::migrate_storage`),
//! so that an old version can then be removed from the CRD.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Outcome};

/// Arguments of `kube-codegen migrate-storage`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The CRD whose objects to migrate (`widgets.example.com`).
    #[arg(long, value_name = "NAME")]
    crd: String,
    /// The kubeconfig (default: `KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context.
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
    /// Objects per list page.
    #[arg(long, value_name = "N", default_value_t = 500)]
    page_size: u32,
    /// At most this many rewrites a second.
    #[arg(long, value_name = "N", default_value_t = 50.0)]
    writes_per_second: f64,
    /// Stop after this many rewrites, leaving a checkpoint the next run resumes from.
    #[arg(long, value_name = "N")]
    stop_after: Option<u64>,
}

/// Runs the migration, printing progress after each page.
#[cfg(feature = "cluster")]
pub fn run(args: &MigrateArgs) -> Result<Outcome, Error> {
    use kube_codegen_runtime::migrate::{MigrateOptions, migrate_storage};

    if args.writes_per_second.is_nan() || args.writes_per_second <= 0.0 || args.page_size == 0 {
        return Err(Error::Refused(
            "--page-size and --writes-per-second must be more than 0".to_owned(),
        ));
    }
    let options = MigrateOptions {
        page_size: args.page_size,
        writes_per_second: args.writes_per_second,
        stop_after: args.stop_after,
    };
    let done = crate::cluster::block_on(async {
        let client =
            crate::cluster::client(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
        migrate_storage(&client, &args.crd, &options, |p| match p.remaining {
            Some(left) => eprintln!("kube-codegen: {} rewritten, about {left} left", p.rewritten),
            None => eprintln!("kube-codegen: {} rewritten", p.rewritten),
        })
        .await
        .map_err(|e| format!("error: migrating `{}`: {e}", args.crd))
    })
    .map_err(|e| Error::Failed(e.strip_prefix("error: ").unwrap_or(&e).to_owned()))?;
    let resumed = match (done.resumed, done.passes) {
        (true, 1) => " (resumed)".to_owned(),
        (false, 1) => String::new(),
        // The CRD changed during a pass: every object was rewritten again.
        (resumed, n) => format!(
            " ({}{n} passes: the CRD changed during the first)",
            if resumed { "resumed, " } else { "" }
        ),
    };
    Ok(Outcome::new(if done.complete {
        format!(
            "kube-codegen: {} object(s) of {} rewritten as {}{resumed}; status.storedVersions was {:?}, now [\"{}\"]",
            done.rewritten,
            args.crd,
            done.storage_version,
            done.stored_before,
            done.storage_version
        )
    } else {
        format!(
            "kube-codegen: stopped after {} object(s) of {}{resumed}; run again to continue",
            done.rewritten, args.crd
        )
    }))
}

/// Without the `cluster` feature there is no client.
#[cfg(not(feature = "cluster"))]
pub fn run(_args: &MigrateArgs) -> Result<Outcome, Error> {
    Err(Error::Refused(
        "this kube-codegen was built without the `cluster` feature, which migrate-storage needs"
            .to_owned(),
    ))
}
