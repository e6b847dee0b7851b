//! `kube-codegen`: typed Kubernetes clients generated from annotated Rust API types.
//!
//! `generate` writes a reviewable tree (all files or none, stale generated files removed);
//! `--verify` (or `verify`) compares without writing and fails on drift.

mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

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
    Generate(GenerateArgs),
    /// Check that the generated tree is up to date, writing nothing (same as `generate --verify`).
    Verify(GenerateArgs),
}

#[derive(Debug, Args)]
struct GenerateArgs {
    /// Directory of API types: `<group>/<version>/*.rs` (for example `src/apis`).
    #[arg(long, value_name = "DIR")]
    input: PathBuf,
    /// Directory to write the generated module tree to (for example `src/generated`).
    ///
    /// Files there that start with the kube-codegen header and are no longer generated are
    /// removed; other files are never touched.
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// The Rust module path of the input directory, used to import the API types.
    #[arg(long, value_name = "PATH", default_value = "crate::apis")]
    api_module: String,
    /// Compare with the files on disk instead of writing; exit 1 and list what drifted.
    #[arg(long)]
    verify: bool,
}

impl GenerateArgs {
    /// The command written into each header: how to reproduce the files.
    fn reproduce_command(&self) -> String {
        let mut cmd = format!(
            "kube-codegen generate --input {} --output {}",
            self.input.display(),
            self.output.display()
        );
        if self.api_module != "crate::apis" {
            cmd.push_str(&format!(" --api-module {}", self.api_module));
        }
        cmd
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (args, verify) = match cli.command {
        Command::Generate(args) => {
            let verify = args.verify;
            (args, verify)
        }
        Command::Verify(args) => (args, true),
    };
    let command = args.reproduce_command();
    let files = match kube_codegen_core::generate(&args.input, &args.api_module, &command) {
        Ok(files) => files,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    let result = if verify {
        output::verify(&args.output, &files, &command)
    } else {
        output::write(&args.output, &files)
    };
    match result {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
