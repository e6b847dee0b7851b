//! `kube-codegen envtest fetch` and `envtest list`: the etcd and kube-apiserver binaries a
//! test's control plane runs (`fake_apiserver::envtest`, `KUBEBUILDER_ASSETS`), from the
//! release index controller-tools publishes for setup-envtest, into setup-envtest's store, so
//! that either tool finds what the other fetched.
//!
//! The index maps each version to its archives (`envtest-v1.36.2-linux-amd64.tar.gz`), each
//! with a SHA-512 digest and a download link. `fetch` resolves `1.36` to the newest release
//! of 1.36 (pre-releases never), downloads this platform's archive, checks its digest,
//! unpacks its regular files (flattened, as setup-envtest does) into a directory beside the
//! target and renames it into place: on a wrong digest, a truncated archive or a missing
//! platform nothing is left behind.

mod index;
mod unpack;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::error::{Error, Outcome};
use index::{Index, Platform, Version};

/// controller-tools' index, the one setup-envtest and envtest read by default.
pub const DEFAULT_INDEX: &str =
    "https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml";

/// Arguments of `kube-codegen envtest`.
#[derive(Debug, Args)]
pub struct EnvtestArgs {
    #[command(subcommand)]
    command: EnvtestCommand,
}

/// What `kube-codegen envtest` does.
#[derive(Debug, Subcommand)]
enum EnvtestCommand {
    /// Download etcd and kube-apiserver for tests on real binaries, check their digest and
    /// print the `KUBEBUILDER_ASSETS` line to export.
    Fetch(FetchArgs),
    /// List the versions the index has for this platform (those already fetched marked).
    List(ListArgs),
}

/// Where the index and the binaries are.
#[derive(Debug, Args)]
struct Common {
    /// The release index (http or https).
    #[arg(long, value_name = "URL", default_value = DEFAULT_INDEX)]
    index: String,
    /// Where versions are kept, one directory `<X.Y.Z>-<os>-<arch>` each (default:
    /// setup-envtest's: `$XDG_DATA_HOME/kubebuilder-envtest/k8s` or
    /// `~/.local/share/kubebuilder-envtest/k8s`; on macOS
    /// `~/Library/Application Support/io.kubebuilder.envtest/k8s`).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The operating system, as Go names it (default: this one's).
    #[arg(long, value_name = "OS")]
    os: Option<String>,
    /// The architecture, as Go names it (default: this one's).
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
}

/// Arguments of `kube-codegen envtest fetch`.
#[derive(Debug, Args)]
struct FetchArgs {
    /// `1.36` (the newest 1.36 release), `1.36.x`, or an exact `1.36.2`.
    #[arg(long, value_name = "VERSION")]
    version: String,
    /// Download again even when the version is already there.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    common: Common,
}

/// Arguments of `kube-codegen envtest list`.
#[derive(Debug, Args)]
struct ListArgs {
    #[command(flatten)]
    common: Common,
}

/// Runs `envtest fetch` or `envtest list`.
pub fn run(args: &EnvtestArgs) -> Result<Outcome, Error> {
    match &args.command {
        EnvtestCommand::Fetch(args) => fetch(args),
        EnvtestCommand::List(args) => list(args),
    }
}

fn failed(e: impl Into<String>) -> Error {
    Error::Failed(e.into())
}

impl Common {
    fn platform(&self) -> Platform {
        Platform::new(self.os.as_deref(), self.arch.as_deref())
    }

    fn store(&self) -> Result<PathBuf, Error> {
        if let Some(dir) = &self.dir {
            return Ok(dir.clone());
        }
        if cfg!(target_os = "macos") {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or_else(|| failed("no HOME to keep the binaries in; give --dir"))?;
            return Ok(
                PathBuf::from(home).join("Library/Application Support/io.kubebuilder.envtest/k8s")
            );
        }
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share"))
            })
            .ok_or_else(|| {
                failed("no HOME or XDG_DATA_HOME to keep the binaries in; give --dir")
            })?;
        Ok(data.join("kubebuilder-envtest").join("k8s"))
    }

    fn index(&self) -> Result<Index, Error> {
        let text = crate::cluster::block_on(index::download_text(&self.index))
            .map_err(|e| failed(format!("reading the index {}: {e}", self.index)))?;
        Index::parse(&text).map_err(|e| failed(format!("the index {}: {e}", self.index)))
    }
}

/// Whether `dir` holds a usable version.
fn installed(dir: &Path) -> bool {
    ["etcd", "kube-apiserver"]
        .iter()
        .all(|b| dir.join(b).is_file())
}

fn fetch(args: &FetchArgs) -> Result<Outcome, Error> {
    let wanted = Version::parse_request(&args.version).map_err(|e| {
        Error::Refused(format!(
            "--version {}: {e} (give 1.36, 1.36.x or 1.36.2)",
            args.version
        ))
    })?;
    let platform = args.common.platform();
    let store = args.common.store()?;
    let index = args.common.index()?;
    let (version, archive) = index.resolve(&wanted, &platform).map_err(failed)?;
    let target = store.join(format!("{}-{}", version.plain(), platform.dashed()));
    if installed(&target) && !args.force {
        return Ok(Outcome::new(format!(
            "kube-codegen: envtest {} for {} already in {}",
            version.plain(),
            platform.dashed(),
            target.display()
        ))
        .with_report(export_line(&target)));
    }
    let bytes = crate::cluster::block_on(index::download_bytes(&archive.link))
        .map_err(|e| failed(format!("downloading {}: {e}", archive.link)))?;
    let digest = index::sha512_hex(&bytes);
    if !digest.eq_ignore_ascii_case(&archive.sha512) {
        return Err(failed(format!(
            "{}: the SHA-512 digest is {digest}, the index says {}; nothing was written",
            archive.name, archive.sha512
        )));
    }
    let files = unpack::install(&bytes, &target).map_err(|e| {
        failed(format!(
            "unpacking {}: {e}; nothing was written",
            archive.name
        ))
    })?;
    Ok(Outcome::new(format!(
        "kube-codegen: envtest {} for {} ({}) in {}",
        version.plain(),
        platform.dashed(),
        files.join(", "),
        target.display()
    ))
    .with_report(export_line(&target)))
}

/// `export KUBEBUILDER_ASSETS=<dir>`, the directory quoted for a POSIX shell when it needs it.
fn export_line(dir: &Path) -> String {
    let text = dir.display().to_string();
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    if plain {
        format!("export KUBEBUILDER_ASSETS={text}\n")
    } else {
        format!(
            "export KUBEBUILDER_ASSETS='{}'\n",
            text.replace('\'', "'\\''")
        )
    }
}

fn list(args: &ListArgs) -> Result<Outcome, Error> {
    let platform = args.common.platform();
    let store = args.common.store()?;
    let index = args.common.index()?;
    let versions = index.versions_for(&platform);
    let mut report = String::new();
    for version in &versions {
        let dir = store.join(format!("{}-{}", version.plain(), platform.dashed()));
        if installed(&dir) {
            report.push_str(&format!(
                "{}\tinstalled\t{}\n",
                version.plain(),
                dir.display()
            ));
        } else {
            report.push_str(&format!("{}\tavailable\n", version.plain()));
        }
    }
    Ok(Outcome::new(format!(
        "kube-codegen: {} versions for {} in {}",
        versions.len(),
        platform.dashed(),
        args.common.index
    ))
    .with_report(report))
}
