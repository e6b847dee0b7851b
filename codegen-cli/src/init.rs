//! `kube-codegen init DIR --group G --version V --kind K`: a new operator crate that builds
//! and passes its own checks at once. The hand-written files come from the templates with
//! the names filled in; what kube-codegen generates (the typed clients, the CRD, the RBAC) is
//! written by the same code as `generate`, `crds` and `rbac`, so `hack/verify-codegen.sh`
//! agrees from the first run.
//!
//! All or nothing: the directory must be new or empty, and on any failure what was written
//! into it is removed again.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::{Error, Op, Outcome};
use crate::paths;
use crate::scaffold::{KindArgs, Names, files, kind_names, steps, undo};

/// Arguments of `kube-codegen init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The new crate's directory: created, or empty. Its name is the crate's name.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The API group of the first kind (a DNS subdomain with a dot: `batch.example.com`).
    #[arg(long)]
    pub group: String,
    /// Its version (`v1`, `v1alpha1`, `v2beta1`).
    #[arg(long)]
    pub version: String,
    /// The kind (`Backup`).
    #[arg(long)]
    pub kind: String,
    /// The kind is cluster-scoped (default: namespaced).
    #[arg(long)]
    pub cluster: bool,
    /// A kube-codegen checkout to depend on by path. Default: the checkout this binary was
    /// built from, when it is still there; otherwise the crates by version.
    #[arg(long, value_name = "CHECKOUT")]
    pub kube_codegen_path: Option<PathBuf>,
}

/// Why `init` refuses its arguments, each in the words a user needs to fix them.
fn check(args: &InitArgs) -> Result<Names, Error> {
    let dir = paths::absolute(&args.dir);
    let krate = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let crate_ok = krate.starts_with(|c: char| c.is_ascii_lowercase())
        && krate
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !crate_ok {
        return Err(Error::Refused(format!(
            "`{}` cannot name a crate: the directory's name must start with a lowercase letter and hold only lowercase letters, digits, `-` and `_`",
            args.dir.display()
        )));
    }
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(Error::Refused(format!(
            "`{}` exists and is not an empty directory; init writes a new crate only",
            args.dir.display()
        )));
    }
    let checkout = match &args.kube_codegen_path {
        Some(path) => {
            let path = paths::absolute(path);
            if !path.join("codegen-runtime/Cargo.toml").is_file() {
                return Err(Error::Refused(format!(
                    "`--kube-codegen-path {}` is not a kube-codegen checkout (no codegen-runtime/Cargo.toml)",
                    path.display()
                )));
            }
            Some(path)
        }
        // The checkout this binary was built from, when it is still there.
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .filter(|p| p.join("codegen-runtime/Cargo.toml").is_file())
            .map(Path::to_path_buf),
    };
    let kind = KindArgs {
        group: &args.group,
        version: &args.version,
        kind: &args.kind,
        cluster: args.cluster,
    };
    kind_names(krate, &kind, checkout)
}

/// Writes the crate, then runs kube-codegen's commands on it; on failure the directory is
/// left as it was (absent, or empty).
pub fn run(args: &InitArgs) -> Result<Outcome, Error> {
    let names = check(args)?;
    let dir = paths::absolute(&args.dir);
    let created = !dir.exists();
    std::fs::create_dir_all(&dir).map_err(Error::at(Op::Create, &args.dir))?;
    let written = files::write_files(&dir, &names.crate_files())
        .and_then(|()| steps::regenerate(&dir, &names, "init"));
    if let Err(err) = written {
        undo::clear(&dir, created);
        return Err(err);
    }
    Ok(Outcome::new(format!(
        "kube-codegen: a new operator crate `{}` in {}\n  next: cd {} && cargo test && cargo run -- --embedded",
        names.krate,
        args.dir.display(),
        args.dir.display()
    )))
}
