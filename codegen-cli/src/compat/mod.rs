//! `kube-codegen compat`: the changes between a baseline API (CRD manifests, or the CRDs a
//! cluster serves) and the current one (CRD manifests, or a crate's Rust API tree), each
//! classed breaking, tightening or compatible ([`diff::Class`]); exit 1 when a change of the
//! `--fail-on` class or worse is found that no `+kube-codegen:compat:acknowledge` marker
//! acknowledges, 2 when an input cannot be compared (unreadable, no CRD in it, a CRD given
//! twice, a directory that links back into itself). With a Rust tree, each finding is shown
//! at the Rust token that made it (`source`).

pub mod diff;
mod normal;
mod rules;
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

use diff::{Class, Finding};
use kube_codegen_core::tree::locate::At;
use source::{Located, Sources};

/// The marker that acknowledges a breaking or tightening change, as users write it after
/// the `+`.
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
    /// `kube-codegen crds` builds them, with conversion through the webhook for the kinds
    /// whose storage version is marked `+kube-codegen:conversion` (as they are deployed), and
    /// each finding is shown at the Rust marker, type, field or struct that made it
    /// (`file:line:col` and a caret). A breaking or tightening change on a field (or struct)
    /// marked `+kube-codegen:compat:acknowledge="<reason>"` is printed as acknowledged and
    /// does not fail the run.
    #[arg(long, value_name = "DIR")]
    input: Option<PathBuf>,
    /// The class of change that fails the run (exit 1): `breaking` (clients of a version
    /// fail; stored objects become unreadable, lost or unwritable as they are), or
    /// `tightening` (that, and new writes that can be refused while stored objects stay
    /// readable and, under validation ratcheting, writable while unchanged).
    #[arg(long, value_enum, default_value_t = FailOn::Tightening)]
    fail_on: FailOn,
    /// How to print the findings: text, or a JSON array (`crd`, `version`, `path`, `change`,
    /// `class`, `breaking`, `message`; with `--input`, `file`, `line` and `column` where the
    /// sources show it, and `acknowledged`, the reason, when a marker acknowledges it).
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

/// The class of change that fails the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Breaking changes only.
    Breaking,
    /// Breaking and tightening changes.
    Tightening,
}

impl FailOn {
    /// The least class that fails.
    fn class(self) -> Class {
        match self {
            FailOn::Breaking => Class::Breaking,
            FailOn::Tightening => Class::Tightening,
        }
    }
}

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per finding, each starting with its class: breaking ones first, then
    /// tightening, acknowledged and compatible ones.
    Text,
    /// A JSON array of findings.
    Json,
}

/// Compares, prints the findings on standard output, and fails when one of the `--fail-on`
/// class or worse is not acknowledged.
pub fn run(args: &CompatArgs) -> Result<Outcome, Error> {
    let (current, sources) = match (&args.current, &args.input) {
        (Some(path), _) => (manifests(path)?, None),
        (None, Some(input)) => {
            let sources = Sources::load(input)?;
            (crate_crds(input, &sources)?, Some(sources))
        }
        (None, None) => return Err(bad_input("give `--current` or `--input`".to_owned())),
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
    let count = |class: Class| {
        shown
            .iter()
            .filter(|s| s.finding.class == class && s.acknowledged().is_none())
            .count()
    };
    let (breaking, tightening) = (count(Class::Breaking), count(Class::Tightening));
    let summary = format!(
        "{} change{}, {breaking} breaking, {tightening} tightening{}, between {} baseline and {} current CRD{}",
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
    let failing = shown
        .iter()
        .filter(|s| s.finding.class >= args.fail_on.class() && s.acknowledged().is_none())
        .count();
    if failing > 0 {
        let what = match args.fail_on {
            FailOn::Breaking => "breaking",
            FailOn::Tightening => "breaking or tightening",
        };
        return Err(Error::Breaking {
            report,
            summary: format!(
                "{summary}: failed on {failing} {what} change{} (`--fail-on {}`)",
                plural(failing),
                args.fail_on.class().as_str()
            ),
        });
    }
    Ok(Outcome::new(format!("kube-codegen: {summary}")).with_report(report))
}

/// A finding and, with `--input`, where in the sources it is shown.
struct Shown<'a> {
    finding: &'a Finding,
    located: Option<Located<'a>>,
}

impl Shown<'_> {
    /// The acknowledgement that covers this finding, when it is breaking or tightening.
    fn acknowledged(&self) -> Option<&(String, At)> {
        self.located
            .as_ref()
            .and_then(|l| l.acknowledged)
            .filter(|_| self.finding.class > Class::Compatible)
    }

    /// How the finding is labelled (its class, or `acknowledged <class>`), and the order
    /// labels are printed in.
    fn severity(&self) -> (usize, String) {
        let class = self.finding.class;
        match (class, self.acknowledged().is_some()) {
            (Class::Compatible, _) => (4, class.as_str().to_owned()),
            (_, true) => (
                if class == Class::Breaking { 2 } else { 3 },
                format!("acknowledged {}", class.as_str()),
            ),
            (Class::Breaking, false) => (0, class.as_str().to_owned()),
            (Class::Tightening, false) => (1, class.as_str().to_owned()),
        }
    }
}

/// The CRDs below `path` (other objects there are passed over). Bad input (exit 2): anything
/// unreadable, no CRD at all (an empty file from a wrong `git show` path, say), a CRD given
/// twice (the comparison would see only one), a directory that links back to one it is in.
fn manifests(path: &Path) -> Result<Vec<Value>, Error> {
    no_loops(path)?;
    let files = read::files(path).map_err(|e| bad_input(strip_error(&e)))?;
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut origins: BTreeMap<String, String> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Error::BadInput(Box::new(Error::io(Op::Read, &file, e))))?;
        match read::parse_crds(&file.display().to_string(), &text) {
            Ok(sources) => {
                for source in sources {
                    let name = source
                        .crd
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    if let Some(first) = origins.get(&name) {
                        problems.push(format!(
                            "error: {}: the CustomResourceDefinition `{name}` is already in {first}; give each CRD once",
                            source.origin
                        ));
                        continue;
                    }
                    origins.insert(name, source.origin);
                    out.push(source.crd);
                }
            }
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
    if out.is_empty() {
        return Err(bad_input(format!(
            "no CustomResourceDefinition in `{}`: nothing to compare (is it the right path?)",
            path.display()
        )));
    }
    Ok(out)
}

/// Refuses a directory below `path` that is (through a symbolic link) one of the
/// directories it is in: listing it would never end, or read the same files again and again.
fn no_loops(path: &Path) -> Result<(), Error> {
    if !path.is_dir() {
        return Ok(());
    }
    let looping = |dir: &Path, target: &Path| {
        bad_input(format!(
            "`{}` links back to `{}`, a directory it is in: a symbolic link loop",
            dir.display(),
            target.display()
        ))
    };
    let root = std::fs::canonicalize(path)
        .map_err(|e| Error::BadInput(Box::new(Error::io(Op::Read, path, e))))?;
    // Each directory to list, and the real directories it is in (itself included).
    let mut stack = vec![(path.to_owned(), vec![root])];
    while let Some((dir, inside)) = stack.pop() {
        // What cannot be listed here is left to the listing itself to report.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let entry = entry.path();
            if !entry.is_dir() {
                continue;
            }
            let Ok(real) = std::fs::canonicalize(&entry) else {
                continue;
            };
            if inside.contains(&real) {
                return Err(looping(&entry, &real));
            }
            let mut below = inside.clone();
            below.push(real);
            stack.push((entry, below));
        }
    }
    Ok(())
}

/// The CRDs of a crate's API tree, built into a temporary directory as `crds` builds them.
/// The kinds whose storage version (the hub) is marked `+kube-codegen:conversion` convert
/// through the webhook once deployed (`crds --kustomize` patches it in beside the CRD
/// files, which name no Service), so they are compared with conversion `Webhook`.
fn crate_crds(input: &Path, sources: &Sources) -> Result<Vec<Value>, Error> {
    let scratch = crate::scratch::Scratch::new("kube-codegen-compat")
        .map_err(|e| Error::io(Op::Write, std::env::temp_dir(), e))?;
    let out = scratch.path().join("crds");
    let options = crate::crds::Options::new(input.to_owned(), out.clone());
    let built = crate::crds::run(&options).map_err(|e| Error::BadInput(Box::new(e)));
    let crds = built.and_then(|_| {
        let written = std::fs::read_dir(&out).is_ok_and(|mut entries| entries.next().is_some());
        if written {
            manifests(&out)
        } else {
            Err(bad_input(format!(
                "`{}` defines no CRDs: nothing to compare",
                input.display()
            )))
        }
    });
    // The directory is ours alone, removed when `scratch` goes.
    drop(scratch);
    let mut crds = crds?;
    let hubs = sources.conversion_hubs();
    for crd in &mut crds {
        let name = crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let storage = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .and_then(|versions| {
                versions
                    .iter()
                    .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            })
            .and_then(|v| v.get("name").and_then(Value::as_str))
            .unwrap_or("");
        if hubs.contains(&(name.to_owned(), storage.to_owned())) {
            crd["spec"]["conversion"] = json!({"strategy": "Webhook"});
        }
    }
    Ok(crds)
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
        let severity = severity.as_str();
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
                    &format!("{crd} {version}: `+{ACKNOWLEDGE}` acknowledges no breaking or tightening change against this baseline; remove it once the baseline has the change"),
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
                "class": f.class.as_str(),
                "breaking": f.class == Class::Breaking,
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
