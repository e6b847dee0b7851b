//! `kube-codegen`: typed Kubernetes clients generated from annotated Rust API types.
//!
//! Each subcommand is a module whose `run` returns an [`Outcome`] or the one [`Error`] of
//! the CLI; only `main` prints them and turns them into the exit code:
//!
//! | exit | when |
//! |---|---|
//! | 0 | the command did what it was asked (with `--verify`: everything up to date) |
//! | 1 | any [`Error`]: unreadable or unwritable files, mistakes in the input, out of date with `--verify`, refused arguments, a failed cargo build or `init`/`create` step; or a bug (a panic) |
//! | 2 | the arguments do not parse (clap's usage error), or `compat` or `lint` cannot read what it checks |

mod chart;
mod cluster;
mod compat;
mod crds;
mod create;
mod dev;
mod docs;
#[cfg(all(feature = "cluster", unix))]
mod envtest;
mod error;
mod generate;
mod import;
mod init;
mod json;
mod lint;
mod migrate;
mod output;
mod paths;
mod rbac;
mod scaffold;
mod scratch;
mod verify;
mod webhooks;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::{Error, Outcome};

/// Generate typed Kubernetes clients from annotated Rust API types.
///
/// The input is a directory laid out like Go's code-generator expects, `<group>/<version>/*.rs`,
/// holding `#[derive(CustomResource)]` spec types marked `/// +genclient`. The output is a
/// module tree: one typed client per resource, a client per group/version and a clientset.
#[derive(Debug, Parser)]
#[command(name = "kube-codegen", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate (or with --verify, check) the typed clients of an API tree.
    Generate(generate::GenerateArgs),
    /// Check that the generated tree is up to date, writing nothing (same as `generate --verify`).
    Verify(verify::VerifyArgs),
    /// Write RBAC manifests from the `+kubebuilder:rbac` markers in a controller's sources.
    Rbac(rbac::RbacArgs),
    /// Write (or with --verify, check) the CRD manifests of a crate's API tree: one
    /// `<group>_<plural>.yaml` per kind, built from the compiled types and their markers.
    Crds(crds::CrdsArgs),
    /// Write (or with --verify, check) annotated Rust API types from CRD manifests or a
    /// cluster's CRDs: `<group>/<version>/<kind>.rs` that `generate` and `crds` read.
    Import(import::ImportArgs),
    /// Write (or with --verify, check) the admission webhook configurations declared by
    /// `+kubebuilder:webhook` markers in a controller's sources: `manifests.yaml`.
    Webhooks(webhooks::WebhooksArgs),
    /// Write (or with --verify, check) a Helm chart rendered from a kustomize overlay
    /// (`kubectl kustomize config/default`): the same objects, the namespace the release's.
    Chart(chart::ChartArgs),
    /// Compare an API with a baseline (CRD manifests or a cluster's CRDs) and classify each
    /// change as breaking, tightening or compatible; exit 1 on a change of the `--fail-on`
    /// class or worse, 2 on input it cannot compare.
    Compat(compat::CompatArgs),
    /// Check the API types against the Kubernetes API conventions (kube-api-linter's rules,
    /// for Rust); exit 1 on a finding not silenced, 2 when the tree cannot be read.
    Lint(lint::LintArgs),
    /// Rewrite every object of a CRD in its storage version and trim
    /// `status.storedVersions` to it, so older versions can be removed (resumable; passes
    /// again when the CRD changes meanwhile, fails rather than trim what it cannot prove).
    MigrateStorage(migrate::MigrateArgs),
    /// Development mode's cluster changes: `dev restore` puts back what a development run
    /// that died left (CRD conversions and webhook configurations pointing at it).
    Dev(dev::DevArgs),
    /// Write (or with --verify, check) Markdown or HTML API reference pages for an API tree: one per
    /// group and version, each kind with its fields, types, defaults, validations, CEL rules,
    /// enum values and printer columns, from the CRDs `crds` builds.
    Docs(docs::DocsArgs),
    /// Start a new operator crate: an API type, its generated clients, CRD and RBAC, a
    /// controller, a binary, a test on the in-memory API server, scripts and manifests.
    Init(init::InitArgs),
    /// Add to a crate `init` wrote: `create api --group G --version V --kind K` adds a kind,
    /// its controller, test and sample, and regenerates.
    Create(create::CreateArgs),
    /// Fetch or list the etcd and kube-apiserver binaries tests run on (`KUBEBUILDER_ASSETS`).
    #[cfg(all(feature = "cluster", unix))]
    Envtest(envtest::EnvtestArgs),
}

/// The stack the commands run on: deep enough for any input within the nesting limit
/// (`kube_codegen_core::tree::MAX_NESTING`) in a debug build.
const STACK: usize = 256 << 20;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let worker = std::thread::Builder::new()
        .name("kube-codegen".into())
        .stack_size(STACK)
        .spawn(move || run(cli));
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(Ok(outcome))) => {
            if let Some(report) = &outcome.report {
                print!("{report}");
            }
            eprintln!("{outcome}");
            ExitCode::SUCCESS
        }
        Ok(Ok(Err(err))) => {
            if let Error::Breaking { report, .. } = &err {
                print!("{report}");
            }
            eprintln!("{err}");
            exit_code(&err)
        }
        _ => {
            eprintln!("error: kube-codegen stopped unexpectedly (a bug)");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command.
fn run(cli: Cli) -> Result<Outcome, Error> {
    match cli.command {
        Command::Generate(args) => generate::run(&args.options()),
        Command::Verify(args) => verify::run(args),
        Command::Rbac(args) => rbac::run(&args.options()),
        Command::Crds(args) => crds::run(&args.options()),
        Command::Import(args) => import::run(&args),
        Command::Webhooks(args) => webhooks::run(&args.options()),
        Command::Chart(args) => chart::run(&args.options()),
        Command::Compat(args) => compat::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::MigrateStorage(args) => migrate::run(&args),
        Command::Dev(args) => dev::run(&args),
        Command::Docs(args) => docs::run(&args.options()),
        Command::Init(args) => init::run(&args),
        Command::Create(args) => create::run(&args),
        #[cfg(all(feature = "cluster", unix))]
        Command::Envtest(args) => envtest::run(&args),
    }
}

/// The exit code of a failed command (see the table above): every error is a failure, 1;
/// listed one by one so that a new kind of error is a decision.
fn exit_code(err: &Error) -> ExitCode {
    match err {
        Error::Io { .. }
        | Error::Spawn { .. }
        | Error::Diagnostics { .. }
        | Error::OutOfDate { .. }
        | Error::Refused(_)
        | Error::Failed(_)
        | Error::Undone(_)
        | Error::Restored(_)
        | Error::Breaking { .. }
        | Error::Step { .. } => ExitCode::FAILURE,
        Error::BadInput(_) => ExitCode::from(2),
    }
}
