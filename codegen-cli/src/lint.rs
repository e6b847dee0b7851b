//! `kube-codegen lint`: the Kubernetes API conventions (kube-api-linter's rules, for Rust)
//! over every custom resource kind of an API tree; exit 1 on a finding not silenced, 2 when
//! the tree cannot be read.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use kube_codegen_core::GenerateError;
use kube_codegen_core::lint::RULES;

use crate::error::{Error, Op, Outcome, plural};

/// Arguments of `kube-codegen lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Directory of API types: `<group>/<version>/*.rs` (for example `src/apis`).
    #[arg(long, value_name = "DIR", required_unless_present = "rules")]
    input: Option<PathBuf>,
    /// Print the rules (id and what each asks for) and exit.
    #[arg(long)]
    rules: bool,
}

/// How a finding is silenced, as the summary says it.
const SILENCE: &str = "`// +kube-codegen:lint:ignore=<rule> <reason>` on the field (or its struct) silences a finding";

/// Lints the tree; findings are an error (exit 1), an unreadable tree bad input (exit 2).
pub fn run(args: &LintArgs) -> Result<Outcome, Error> {
    let Some(input) = args.input.as_ref().filter(|_| !args.rules) else {
        return Ok(
            Outcome::new("kube-codegen: the lint rules are listed above").with_report(rules()),
        );
    };
    let files = kube_codegen_core::source::load(input)
        .map_err(|e| Error::BadInput(Box::new(Error::io(Op::Read, e.path, e.error))))?;
    let report = kube_codegen_core::lint(&files).map_err(|e| {
        Error::BadInput(Box::new(match e {
            GenerateError::Diagnostics(rendered) => {
                let n = rendered.len();
                Error::Diagnostics {
                    rendered,
                    stopped: format!("could not lint: {n} error{}", plural(n)),
                }
            }
            other => Error::from(other),
        }))
    })?;
    let kinds = format!("{} kind version{}", report.kinds, plural(report.kinds));
    let silenced = match report.silenced {
        0 => String::new(),
        n => format!(", {n} silenced"),
    };
    let n = report.findings.len();
    if n > 0 {
        return Err(Error::Diagnostics {
            rendered: report.findings,
            stopped: format!(
                "lint: {n} finding{} in {kinds}{silenced}; {SILENCE}",
                plural(n)
            ),
        });
    }
    Ok(Outcome::new(format!(
        "kube-codegen: lint clean: {kinds}{silenced}"
    )))
}

/// The rule table, one rule a line.
fn rules() -> String {
    let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in RULES {
        let _ = writeln!(out, "{:width$}  {}", r.id, r.summary);
    }
    out
}
