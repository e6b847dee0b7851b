//! `kube-codegen import`: CustomResourceDefinitions to the annotated Rust API types that
//! `kube-codegen generate` and `kube-codegen crds` read.
//!
//! The pipeline: [`read`] the manifests (and check each CRD as kube-apiserver would),
//! `plan` the names of every kind, group and version as `generate` will read them (or
//! refuse what no tree can hold), turn every version's schema into Rust [`types`] with
//! markers, [`emit`] one file per kind and version plus the `mod.rs` files, and write them
//! all or nothing.

mod doc;
pub mod emit;
mod modules;
mod names;
mod plan;
pub mod read;
mod resource;
mod root;
pub mod types;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Args;
use kube_codegen_core::emit::files::OutputFile;
use serde_json::Value;

use crate::error::{Error, Op, Outcome};
use crate::{output, paths};

use emit::KindVersion;

/// The files `import` writes.
pub const STYLE: output::Style = output::Style {
    ext: "rs",
    header: emit::HEADER_LINE,
};

/// Arguments of `kube-codegen import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// CRD manifests: a YAML or JSON file (several documents and `List`s allowed) or a
    /// directory of them; may be given more than once.
    #[arg(long, value_name = "FILE|DIR", required_unless_present = "crd")]
    pub input: Vec<PathBuf>,
    /// The API tree to write into (for example `src/apis`): `<group>/<version>/<kind>.rs`
    /// and `mod.rs` files. Files there without the import header are never touched; the
    /// tree's own `mod.rs` is written only when it is missing or was written by import.
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// Read the CRD of this name (`widgets.example.com`) from a cluster; may be given more
    /// than once.
    #[arg(long, value_name = "NAME")]
    pub crd: Vec<String>,
    /// The kubeconfig for `--crd` (default: `KUBECONFIG`, then `~/.kube/config`).
    #[arg(long, value_name = "FILE", requires = "crd")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context for `--crd` (default: the current one).
    #[arg(long, value_name = "NAME", requires = "crd")]
    pub context: Option<String>,
    /// Compare with the files on disk instead of writing; exit 1 and list what drifted.
    #[arg(long)]
    pub verify: bool,
    /// Whether `generate` writes apply configurations (typed server-side apply builders,
    /// their `extract_*` functions, and the clients' `apply`/`apply_status`) for the
    /// imported kinds: the marker `+kubebuilder:ac:generate=<BOOL>` in each version's
    /// `mod.rs`. `false` compiles faster (as Go's kube_codegen.sh without
    /// `--with-applyconfig`); `apply_object`, `apply_status_object` and `patch` stay.
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub apply_configurations: bool,
    /// Take ownership of the imported kinds: write them without `+kube-codegen:consumed`, so
    /// `crds`, `docs`, `lint`, the chart, `crds()` and conversion treat them as the crate's
    /// own API. By default imported kinds are consumed: the crate gets their clients,
    /// listers, informers and apply configurations, and their CRDs stay their owners'.
    #[arg(long)]
    pub owned: bool,
}

impl ImportArgs {
    fn command(&self) -> String {
        let root = paths::root(&self.output);
        let mut cmd = String::from("kube-codegen import");
        for i in &self.input {
            cmd.push_str(&format!(" --input {}", paths::shown(i, &root)));
        }
        for c in &self.crd {
            cmd.push_str(&format!(" --crd {c}"));
        }
        cmd.push_str(&format!(" --output {}", paths::shown(&self.output, &root)));
        if !self.apply_configurations {
            cmd.push_str(" --apply-configurations=false");
        }
        if self.owned {
            cmd.push_str(" --owned");
        }
        cmd
    }
}

/// Runs `import`: every problem of every CRD is reported, and nothing is written unless
/// there are none.
pub fn run(args: &ImportArgs) -> Result<Outcome, Error> {
    import(args).map(Outcome::new).map_err(|rendered| {
        let n = rendered.len();
        Error::Diagnostics {
            rendered,
            stopped: format!("nothing was imported: {n} error(s)"),
        }
    })
}

/// The summary, or every problem found.
fn import(args: &ImportArgs) -> Result<String, Vec<String>> {
    let sources = sources(args)?;
    let plans = plan::plans(&sources)?;
    let groups: BTreeSet<String> = plans.iter().map(|p| p.group.clone()).collect();
    let modules =
        modules::group_modules(&groups).map_err(|clashes| plan::group_clashes(&plans, &clashes))?;
    let kinds = plan::kind_versions(&plans, args.owned);
    let header = format!(
        "{}\n// Regenerate with: {}\n\n",
        emit::HEADER_LINE,
        args.command()
    );
    let root_mod = args.output.join("mod.rs");
    let root_is_ours = match std::fs::read_to_string(&root_mod) {
        Ok(text) => text.lines().next() == Some(emit::HEADER_LINE),
        Err(_) => true,
    };
    let mut files = Vec::new();
    for k in &kinds {
        let path = modules::kind_path(&modules, k);
        let contents = format!("{header}{}", k.text);
        check_rust(&path, &contents)?;
        files.push(OutputFile { path, contents });
    }
    for (path, text) in
        modules::mod_files(&kinds, &modules, root_is_ours, args.apply_configurations)
    {
        files.push(OutputFile {
            path,
            contents: format!("{header}{text}"),
        });
    }
    let mut notes = plan::renamed_notes(&kinds, &plans);
    if !root_is_ours {
        let text = std::fs::read_to_string(&root_mod).unwrap_or_default();
        for names in modules.values() {
            let module = kube_codegen_core::naming::ident(&names.module);
            if !text.contains(&format!("pub mod {module};")) {
                notes.push(format!(
                    "kube-codegen: note: add `pub mod {module};` to {} (it was not written by import, so it is left as it is)",
                    root_mod.display()
                ));
            }
        }
    }
    let written =
        output::write_or_verify(&args.output, &files, STYLE, args.verify, &args.command())
            .map_err(|e| vec![e.to_string()])?;
    Ok(summary(&kinds, &notes, sources.len(), &written))
}

/// Every CRD of the inputs and the cluster, each once, or every problem with them.
fn sources(args: &ImportArgs) -> Result<Vec<read::Source>, Vec<String>> {
    let root = paths::root(&args.output);
    let mut parsed = Vec::new();
    for input in &args.input {
        for file in read::files(input).map_err(|e| vec![e])? {
            let shown = paths::shown(&file, &root);
            let text = std::fs::read_to_string(&file)
                .map_err(|e| vec![Error::io(Op::Read, &file, e).to_string()])?;
            parsed.push(read::parse(&shown, &text));
        }
    }
    if !args.crd.is_empty() {
        match crate::cluster::fetch(
            &args.crd,
            args.kubeconfig.as_deref(),
            args.context.as_deref(),
        ) {
            Ok(found) => {
                for (name, crd) in found {
                    let origin = format!("CustomResourceDefinition {name} from the cluster");
                    parsed.push(read::parse_served(&origin, &crd).map(|mut s| {
                        for src in &mut s {
                            src.origin = origin.clone();
                        }
                        s
                    }));
                }
            }
            Err(e) => parsed.push(Err(vec![e])),
        }
    }
    let mut sources = Vec::new();
    let mut errors = Vec::new();
    for p in parsed {
        match p {
            Ok(mut s) => sources.append(&mut s),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if sources.is_empty() {
        return Err(vec![
            "error: the input holds no CustomResourceDefinition".to_owned(),
        ]);
    }
    let mut names = BTreeSet::new();
    for s in &sources {
        let name = s
            .crd
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !names.insert(name.to_owned()) {
            errors.push(format!(
                "error: {}: CustomResourceDefinition `{name}` is given twice",
                s.origin
            ));
        }
    }
    if errors.is_empty() {
        Ok(sources)
    } else {
        Err(errors)
    }
}

/// What was not carried over, the notes, the counts and what `written` says of the files.
fn summary(kinds: &[KindVersion], notes: &[String], crds: usize, written: &str) -> String {
    let mut summary = String::new();
    for k in kinds {
        if k.exceptions.is_empty() {
            continue;
        }
        summary.push_str(&format!(
            "kube-codegen: {}/{} {}: not carried over:\n",
            k.group, k.version, k.kind
        ));
        for e in &k.exceptions {
            let path = if e.path.is_empty() { "(root)" } else { &e.path };
            summary.push_str(&format!("  {path}: {}\n", e.what));
        }
    }
    for n in notes {
        summary.push_str(n);
        summary.push('\n');
    }
    summary.push_str(&format!(
        "kube-codegen: imported {} kind version(s) from {crds} CRD(s)\n{written}",
        kinds.len(),
    ));
    summary
}

/// The emitted text must be Rust; if it is not, that is a bug here, said with the file.
fn check_rust(path: &Path, text: &str) -> Result<(), Vec<String>> {
    syn::parse_file(text).map(|_| ()).map_err(|e| {
        vec![format!(
            "error: kube-codegen import wrote invalid Rust for {} (a bug): {e}",
            path.display()
        )]
    })
}
