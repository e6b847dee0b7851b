//! `kube-codegen compat`: the changes between a baseline API (CRD manifests, or the CRDs a
//! cluster serves) and the current one (CRD manifests, or a crate's Rust API tree), each
//! classified as breaking or compatible; exit 1 when a breaking change is found that no
//! `+kube-codegen:compat:acknowledge` marker acknowledges. With a Rust tree, each finding is
//! shown at the Rust token that made it (`source`).

pub mod diff;
mod schema;
mod source;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::error::{Error, Op, Outcome, plural};
use crate::import::read;

use diff::Finding;
use kube_codegen_core::tree::locate::At;
use source::{Located, Sources};

/// The marker that acknowledges a breaking change, as users write it after the `+`.
const ACKNOWLEDGE: &str = "kube-codegen:compat:acknowledge";

/// Arguments of `kube-codegen compat`.
#[derive(Debug, Args)]
pub struct CompatArgs {
    /// The API as released: a CRD manifest or a directory of them (for example `config/crd`
    /// at the last release, taken with `git show` or `git worktree`).
    #[arg(
        long,
        value_name = "FILE|DIR",
        required_unless_present = "baseline_cluster"
    )]
    baseline: Option<PathBuf>,
    /// Take the baseline from the cluster instead: the installed CRDs of the names the
    /// current API defines, with their `status.storedVersions`.
    #[arg(long, conflicts_with = "baseline")]
    baseline_cluster: bool,
    /// The API as it is now: a CRD manifest or a directory of them.
    #[arg(
        long,
        value_name = "FILE|DIR",
        required_unless_present = "input",
        conflicts_with = "input"
    )]
    current: Option<PathBuf>,
    /// The API as it is now, from a crate's Rust API tree (`src/apis`): its CRDs are built as
    /// `kube-codegen crds` builds them, and each finding is shown at the Rust marker, type,
    /// field or struct that made it (`file:line:col` and a caret). A breaking change on a
    /// field (or struct) marked `+kube-codegen:compat:acknowledge="<reason>"` is printed as
    /// acknowledged and does not fail the run.
    #[arg(long, value_name = "DIR")]
    input: Option<PathBuf>,
    /// How to print the findings: text, or a JSON array (`crd`, `version`, `path`, `change`,
    /// `breaking`, `message`; with `--input`, `file`, `line` and `column` where the sources
    /// show it, and `acknowledged`, the reason, when a marker acknowledges it).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The kubeconfig for `--baseline-cluster` (default: `KUBECONFIG`, `~/.kube/config`, or
    /// in-cluster).
    #[arg(long, value_name = "FILE", requires = "baseline_cluster")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context for `--baseline-cluster`.
    #[arg(long, value_name = "NAME", requires = "baseline_cluster")]
    context: Option<String>,
}

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per finding, breaking ones first.
    Text,
    /// A JSON array of findings.
    Json,
}

/// Compares, prints the findings on standard output, and fails when one is breaking and
/// not acknowledged.
pub fn run(args: &CompatArgs) -> Result<Outcome, Error> {
    let (current, sources) = match (&args.current, &args.input) {
        (Some(path), _) => (manifests(path)?, None),
        (None, Some(input)) => {
            let sources = Sources::load(input)?;
            (crate_crds(input)?, Some(sources))
        }
        (None, None) => unreachable!("clap requires --current or --input"),
    };
    let baseline = match &args.baseline {
        Some(path) => manifests(path)?,
        None => cluster_crds(&current, args)?,
    };
    let findings = diff::compare(&baseline, &current);
    let kinds: BTreeMap<&str, &str> = baseline
        .iter()
        .filter_map(|c| {
            let name = c.pointer("/metadata/name").and_then(Value::as_str)?;
            Some((name, c.pointer("/spec/names/kind").and_then(Value::as_str)?))
        })
        .collect();
    let shown: Vec<Shown<'_>> = findings
        .iter()
        .map(|finding| Shown {
            finding,
            located: sources
                .as_ref()
                .and_then(|s| s.locate(finding, kinds.get(finding.crd.as_str()).copied())),
        })
        .collect();
    let report = match args.format {
        Format::Text => text(&shown, sources.as_ref()),
        Format::Json => json_report(&shown, sources.as_ref()),
    };
    let acknowledged = shown.iter().filter(|s| s.acknowledged().is_some()).count();
    let breaking = shown
        .iter()
        .filter(|s| s.finding.breaking && s.acknowledged().is_none())
        .count();
    let summary = format!(
        "{} change{}, {breaking} breaking{}, between {} baseline and {} current CRD{}",
        findings.len(),
        plural(findings.len()),
        if acknowledged > 0 {
            format!(" ({acknowledged} more acknowledged)")
        } else {
            String::new()
        },
        baseline.len(),
        current.len(),
        plural(current.len())
    );
    if breaking > 0 {
        return Err(Error::Breaking { report, summary });
    }
    Ok(Outcome::new(format!("kube-codegen: {summary}")).with_report(report))
}

/// A finding and, with `--input`, where in the sources it is shown.
struct Shown<'a> {
    finding: &'a Finding,
    located: Option<Located<'a>>,
}

impl Shown<'_> {
    /// The acknowledgement that covers this finding, when it is breaking.
    fn acknowledged(&self) -> Option<&(String, At)> {
        self.located
            .as_ref()
            .and_then(|l| l.acknowledged)
            .filter(|_| self.finding.breaking)
    }

    /// `breaking`, `acknowledged` or `compatible`, and the order they are printed in.
    fn severity(&self) -> (usize, &'static str) {
        match (self.finding.breaking, self.acknowledged().is_some()) {
            (true, false) => (0, "breaking"),
            (true, true) => (1, "acknowledged"),
            (false, _) => (2, "compatible"),
        }
    }
}

/// The CRDs below `path` (other objects there are passed over); anything unreadable is bad
/// input (exit 2).
fn manifests(path: &Path) -> Result<Vec<Value>, Error> {
    let files = read::files(path).map_err(|e| bad_input(strip_error(&e)))?;
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Error::BadInput(Box::new(Error::io(Op::Read, &file, e))))?;
        match read::parse_crds(&file.display().to_string(), &text) {
            Ok(sources) => out.extend(sources.into_iter().map(|s| s.crd)),
            Err(mut errors) => problems.append(&mut errors),
        }
    }
    if !problems.is_empty() {
        let n = problems.len();
        return Err(Error::BadInput(Box::new(Error::Diagnostics {
            rendered: problems,
            stopped: format!(
                "could not compare: {n} problem{} in `{}`",
                plural(n),
                path.display()
            ),
        })));
    }
    Ok(out)
}

/// The CRDs of a crate's API tree, built into a temporary directory as `crds` builds them.
fn crate_crds(input: &Path) -> Result<Vec<Value>, Error> {
    let out = std::env::temp_dir().join(format!("kube-codegen-compat-{}", std::process::id()));
    let options = crate::crds::Options::new(input.to_owned(), out.clone());
    let built = crate::crds::run(&options).map_err(|e| Error::BadInput(Box::new(e)));
    let crds = built.and_then(|_| manifests(&out));
    // The directory is ours alone; whether it could be removed changes nothing reported.
    let _ = std::fs::remove_dir_all(&out);
    crds
}

/// The installed CRDs of the names `current` defines, status included.
fn cluster_crds(current: &[Value], args: &CompatArgs) -> Result<Vec<Value>, Error> {
    let names: Vec<String> = current
        .iter()
        .filter_map(|c| c.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let fetched = crate::cluster::fetch_installed(
        &names,
        args.kubeconfig.as_deref(),
        args.context.as_deref(),
    )
    .map_err(|e| bad_input(strip_error(&e)))?;
    fetched
        .into_iter()
        .map(|text| {
            serde_json::from_str(&text)
                .map_err(|e| bad_input(format!("the cluster's CRD does not read as JSON: {e}")))
        })
        .collect()
}

fn strip_error(message: &str) -> String {
    message
        .strip_prefix("error: ")
        .unwrap_or(message)
        .to_owned()
}

fn bad_input(message: String) -> Error {
    Error::BadInput(Box::new(Error::Refused(message)))
}

/// `breaking: widgets.example.com v1: spec.size: maximum changed from 10 to 5
/// [bound-tightened]`, breaking findings first, then acknowledged, then compatible ones;
/// with `--input`, each at its Rust token (`--> file:line:col`, the line, a caret), and a
/// warning at each acknowledgement that covers nothing.
fn text(shown: &[Shown<'_>], sources: Option<&Sources>) -> String {
    let mut sorted: Vec<&Shown<'_>> = shown.iter().collect();
    sorted.sort_by_key(|s| s.severity().0);
    let mut out = String::new();
    for s in &sorted {
        let f = s.finding;
        let severity = s.severity().1;
        let version = f
            .version
            .as_deref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default();
        let message = format!("{}{version}: {} [{}]", f.crd, f.message, f.change);
        match (sources, &s.located) {
            (Some(sources), Some(located)) => {
                out.push_str(&sources.render(severity, located.at, &message));
                if let Some((reason, at)) = s.acknowledged() {
                    let place = sources
                        .position(at)
                        .map(|(file, line, column)| format!(" at {file}:{line}:{column}"))
                        .unwrap_or_default();
                    out.push_str(&format!("  = note: acknowledged{place}: {reason}\n"));
                }
            }
            _ => out.push_str(&format!("{severity}: {message}\n")),
        }
    }
    if let Some(sources) = sources {
        for (crd, version, ack) in sources.acknowledgements() {
            let used = shown
                .iter()
                .any(|s| s.acknowledged().is_some_and(|a| std::ptr::eq(a, ack)));
            if !used {
                out.push_str(&sources.render(
                    "warning",
                    &ack.1,
                    &format!("{crd} {version}: `+{ACKNOWLEDGE}` acknowledges no breaking change against this baseline; remove it once the baseline has the change"),
                ));
            }
        }
    }
    out
}

/// The findings as a JSON array; with `--input`, `file`, `line` and `column` where the Rust
/// sources show a finding, and `acknowledged` (the reason) when a marker acknowledges it.
fn json_report(shown: &[Shown<'_>], sources: Option<&Sources>) -> String {
    let list: Vec<Value> = shown
        .iter()
        .map(|s| {
            let f = s.finding;
            let mut entry = json!({
                "crd": f.crd,
                "version": f.version,
                "path": f.path,
                "change": f.change,
                "breaking": f.breaking,
                "message": f.message,
            });
            let at = s.located.as_ref().and_then(|l| sources?.position(l.at));
            if let Some((file, line, column)) = at {
                entry["file"] = json!(file);
                entry["line"] = json!(line);
                entry["column"] = json!(column);
            }
            if let Some((reason, _)) = s.acknowledged() {
                entry["acknowledged"] = json!(reason);
            }
            entry
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".to_owned());
    text.push('\n');
    text
}
