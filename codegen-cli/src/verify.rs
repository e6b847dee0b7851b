//! `kube-codegen verify`: `generate --verify` under its own name, for scripts and CI.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Outcome};
use crate::generate::{self, API_MODULE};

/// Arguments of `kube-codegen verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Directory of API types: `<group>/<version>/*.rs` (for example `src/apis`).
    #[arg(long, value_name = "DIR")]
    input: PathBuf,
    /// The generated module tree to compare (for example `src/generated`); nothing in it is
    /// changed.
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// The Rust module path of the input directory, used to import the API types.
    #[arg(long, value_name = "PATH", default_value = API_MODULE)]
    api_module: String,
}

/// Compares the tree on disk with what `generate` would write; out of date is an error.
pub fn run(args: VerifyArgs) -> Result<Outcome, Error> {
    generate::run(&generate::Options {
        input: args.input,
        output: args.output,
        api_module: args.api_module,
        verify: true,
    })
}
