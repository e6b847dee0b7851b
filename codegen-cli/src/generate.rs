//! `kube-codegen generate`: the typed clients, listers, informers and apply configurations of
//! an API tree, written as a reviewable module tree (all files or none, stale generated files
//! removed), or with `--verify` compared without writing.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Outcome};
use crate::{output, paths};

/// The Rust module path of the API types when none is given.
pub const API_MODULE: &str = "crate::apis";

/// Arguments of `kube-codegen generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
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
    #[arg(long, value_name = "PATH", default_value = API_MODULE)]
    api_module: String,
    /// Compare with the files on disk instead of writing; exit 1 and list what drifted.
    #[arg(long)]
    verify: bool,
}

impl GenerateArgs {
    /// What the arguments ask for.
    pub fn options(self) -> Options {
        Options {
            input: self.input,
            output: self.output,
            api_module: self.api_module,
            verify: self.verify,
        }
    }
}

/// What `generate` reads, writes and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory of API types.
    pub input: PathBuf,
    /// Directory of the generated tree.
    pub output: PathBuf,
    /// The Rust module path of `input` ([`API_MODULE`] unless the crate says otherwise).
    pub api_module: String,
    /// Compare instead of writing.
    pub verify: bool,
}

impl Options {
    /// The command written into each header: how to reproduce the files. Paths are relative
    /// to the workspace root (see `paths`), so the header does not depend on where the
    /// command ran or how the paths were typed.
    fn reproduce_command(&self) -> String {
        let root = paths::root(&self.output);
        let mut cmd = format!(
            "kube-codegen generate --input {} --output {}",
            paths::shown(&self.input, &root),
            paths::shown(&self.output, &root)
        );
        if self.api_module != API_MODULE {
            cmd.push_str(&format!(" --api-module {}", self.api_module));
        }
        cmd
    }

    /// What a build that finds the tree stale tells the user to run: the workspace's
    /// `hack/update-codegen.sh` where there is one (it regenerates the CRDs from the same
    /// types too, which `generate` alone would leave stale), `command` otherwise.
    fn regenerate_command(&self, command: &str) -> String {
        let root = paths::root(&self.output);
        if root.join(UPDATE_SCRIPT).is_file() {
            format!(
                "{UPDATE_SCRIPT}` (it regenerates the CRDs too), or for this tree alone `{command}"
            )
        } else {
            command.to_owned()
        }
    }
}

/// The script `init` writes and this repository keeps, which runs every generator.
const UPDATE_SCRIPT: &str = "hack/update-codegen.sh";

/// Generates (or verifies) the tree; its warnings are printed as they are found.
pub fn run(options: &Options) -> Result<Outcome, Error> {
    let command = options.reproduce_command();
    let sources = kube_codegen_core::source::load(&options.input)
        .map_err(kube_codegen_core::GenerateError::Io)?;
    // The tree's mod.rs fails the build once an input file changes after this run.
    let input = paths::relative(&options.output, &options.input);
    let regenerate = options.regenerate_command(&command);
    let fresh = kube_codegen_core::Freshness {
        input_from_output: &input,
        regenerate: &regenerate,
    };
    let (files, warnings) =
        kube_codegen_core::generate(&sources, &options.api_module, &command, Some(fresh))?;
    for w in &warnings {
        eprint!("{w}");
    }
    output::write_or_verify(
        &options.output,
        &files,
        output::RUST,
        options.verify,
        &command,
    )
    .map(Outcome::new)
}
