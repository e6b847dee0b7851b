//! What a command returns: an [`Outcome`] to report, or the one [`Error`] of the CLI, which
//! keeps its cause so that `main` prints it once and `init`/`create` can say which of their
//! steps failed and why.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What a command did, as printed when it succeeds: one or more lines, without the final
/// newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The summary (`kube-codegen: 3 written, 0 unchanged, 0 stale removed in src/generated`).
    pub summary: String,
    /// What the command produced for standard output (`compat`'s findings), if anything.
    pub report: Option<String>,
}

impl Outcome {
    /// An outcome saying `summary`.
    pub fn new(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            report: None,
        }
    }

    /// The same outcome, with `report` for standard output.
    #[must_use]
    pub fn with_report(mut self, report: String) -> Self {
        self.report = Some(report);
        self
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

/// What was being done to a path when the file system said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Reading a file or listing a directory.
    Read,
    /// Writing a file.
    Write,
    /// Creating a directory.
    Create,
    /// Moving a file aside to replace it.
    Replace,
    /// Moving a stale file away.
    Remove,
    /// Setting a script's executable bit.
    MakeExecutable,
}

/// Why a command failed. Its text is what `main` prints; every variant exits with 1 but
/// [`Error::BadInput`], which exits with 2.
#[derive(Debug)]
pub enum Error {
    /// A file or directory could not be read or written.
    Io {
        /// What was being done.
        op: Op,
        /// The file or directory.
        path: PathBuf,
        /// Why, as the system says it.
        source: io::Error,
    },
    /// A program the command runs could not be started.
    Spawn {
        /// Its name (`cargo`).
        program: &'static str,
        /// Why.
        source: io::Error,
    },
    /// Mistakes in the input, each rendered as the user reads it (`file:line:col` and a
    /// caret in Rust sources; the file, document and JSON path in manifests), and the line
    /// that says what they stopped (`could not generate: 2 errors`).
    Diagnostics {
        /// Each mistake, rendered, without a final newline.
        rendered: Vec<String>,
        /// What did not happen, and how many mistakes stopped it.
        stopped: String,
    },
    /// `--verify`: what is on disk is not what would be written.
    OutOfDate {
        /// What is out of date.
        summary: String,
        /// The lines below the summary (each drifted, missing or stale file, and the command
        /// that regenerates them), starting with a newline; empty when the summary says all.
        details: String,
    },
    /// The arguments or the input are refused; the message says why and what to do.
    Refused(String),
    /// Something the command relies on failed (cargo, the CRD runner, the YAML encoder), or
    /// kube-codegen has a bug; the message says which.
    Failed(String),
    /// A write failed, and what it had done was undone.
    Undone(Box<Error>),
    /// `create` failed, and the crate was put back as it was.
    Restored(Box<Error>),
    /// `compat` found changes of the class `--fail-on` names (or worse): the report goes to
    /// standard output, the summary after `error:`.
    Breaking {
        /// The findings, as printed on standard output.
        report: String,
        /// How many changes, and how many breaking.
        summary: String,
    },
    /// `compat` could not read what it compares (exit 2, so scripts tell it from a finding).
    BadInput(Box<Error>),
    /// One of the commands `init` or `create` runs on the crate failed.
    Step {
        /// `init`, `create api` or `create webhook`.
        command: &'static str,
        /// What the step does (`generating the typed clients`).
        step: &'static str,
        /// Why it failed.
        cause: Box<Error>,
    },
}

/// An error in three parts: what is printed above its `error:` line, that line's text, and
/// what follows it. Wrapping errors ([`Error::Step`], ...) change the line and keep the rest.
struct Parts {
    above: String,
    headline: String,
    below: String,
}

impl Error {
    /// A failure of `op` on `path`.
    pub fn io(op: Op, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// Returns a closure for `map_err`: a failure of `op` on `path`.
    pub fn at(op: Op, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Error::io(op, path, source)
    }

    /// `self` as the failed `step` of `command`.
    pub fn in_step(self, command: &'static str, step: &'static str) -> Self {
        Error::Step {
            command,
            step,
            cause: Box::new(self),
        }
    }

    fn parts(&self) -> Parts {
        let line = |headline: String| Parts {
            above: String::new(),
            headline,
            below: String::new(),
        };
        match self {
            Error::Io { op, path, source } => {
                let path = path.display();
                line(match op {
                    Op::Read => format!("cannot read `{path}`: {source}"),
                    Op::Write => format!("cannot write `{path}`: {source}"),
                    Op::Create => format!("cannot create `{path}`: {source}"),
                    Op::Replace => format!("cannot replace `{path}`: {source}"),
                    Op::Remove => format!("cannot remove `{path}`: {source}"),
                    Op::MakeExecutable => format!("cannot make `{path}` executable: {source}"),
                })
            }
            Error::Spawn { program, source } => line(format!("cannot run {program}: {source}")),
            Error::Diagnostics { rendered, stopped } => Parts {
                above: rendered.iter().map(|d| format!("{d}\n")).collect(),
                headline: stopped.clone(),
                below: String::new(),
            },
            Error::OutOfDate { summary, details } => Parts {
                above: String::new(),
                headline: summary.clone(),
                below: details.clone(),
            },
            Error::Refused(message) | Error::Failed(message) => line(message.clone()),
            Error::Breaking { summary, .. } => line(summary.clone()),
            Error::BadInput(cause) => cause.parts(),
            Error::Undone(cause) => {
                let mut parts = cause.parts();
                parts.headline.push_str("; nothing was changed");
                parts
            }
            Error::Restored(cause) => {
                let mut parts = cause.parts();
                parts.below.push_str("\nerror: nothing was changed");
                parts
            }
            Error::Step {
                command,
                step,
                cause,
            } => {
                let mut parts = cause.parts();
                parts.headline = format!("{command}: {step} failed: {}", parts.headline);
                parts
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Parts {
            above,
            headline,
            below,
        } = self.parts();
        write!(f, "{above}error: {headline}{below}")
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Spawn { source, .. } => Some(source),
            Error::Undone(cause)
            | Error::Restored(cause)
            | Error::BadInput(cause)
            | Error::Step { cause, .. } => Some(cause.as_ref()),
            _ => None,
        }
    }
}

impl From<kube_codegen_core::GenerateError> for Error {
    fn from(err: kube_codegen_core::GenerateError) -> Self {
        use kube_codegen_core::GenerateError;
        match err {
            GenerateError::Io(load) => Error::io(Op::Read, load.path, load.error),
            GenerateError::Diagnostics(rendered) => {
                let n = rendered.len();
                Error::Diagnostics {
                    rendered,
                    stopped: format!("could not generate: {n} error{}", plural(n)),
                }
            }
            GenerateError::Internal(err) => {
                Error::Failed(format!("kube-codegen emitted invalid Rust (a bug): {err}"))
            }
        }
    }
}

/// `s` after a count other than one.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_names_itself_and_keeps_its_cause_and_diagnostics() {
        let cause = Error::Diagnostics {
            rendered: vec!["error: bad\n --> a.rs:1:1\n".into()],
            stopped: "could not generate: 1 error".into(),
        };
        let err = Error::Restored(Box::new(
            cause.in_step("create api", "generating the typed clients"),
        ));
        assert_eq!(
            err.to_string(),
            "error: bad\n --> a.rs:1:1\n\nerror: create api: generating the typed clients failed: could not generate: 1 error\nerror: nothing was changed"
        );
    }

    #[test]
    fn an_undone_write_says_so_on_its_line() {
        let err = Error::Undone(Box::new(Error::io(
            Op::Replace,
            "out/a.rs",
            io::Error::other("busy"),
        )));
        assert_eq!(
            err.to_string(),
            "error: cannot replace `out/a.rs`: busy; nothing was changed"
        );
    }
}
