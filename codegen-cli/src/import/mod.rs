//! `kube-codegen import`: CustomResourceDefinitions to the annotated Rust API types that
//! `kube-codegen generate` and `kube-codegen crds` read.
//!
//! The pipeline: [`read`] the manifests (and check each CRD as kube-apiserver would),
//! turn every version's schema into Rust [`types`] with markers, [`emit`] one file per kind
//! and version plus the `mod.rs` files, and write them all or nothing.

pub mod emit;
pub mod read;
pub mod types;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use kube_codegen_core::emit::files::OutputFile;
use serde_json::Value;

use crate::{output, paths};

/// The files `import` writes.
pub const STYLE: output::Style = output::Style {
    ext: "rs",
    header: emit::HEADER_LINE,
};

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
        cmd
    }
}

/// Runs `import`.
pub fn run(args: &ImportArgs) -> ExitCode {
    match import(args) {
        Ok(summary) => {
            eprintln!("{summary}");
            ExitCode::SUCCESS
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("{e}");
            }
            eprintln!("error: nothing was imported: {} error(s)", errors.len());
            ExitCode::FAILURE
        }
    }
}

fn import(args: &ImportArgs) -> Result<String, Vec<String>> {
    let root = paths::root(&args.output);
    let mut sources = Vec::new();
    let mut errors = Vec::new();
    for input in &args.input {
        let files = read::files(input).map_err(|e| vec![e])?;
        for file in files {
            let shown = paths::shown(&file, &root);
            let text = std::fs::read_to_string(&file)
                .map_err(|e| vec![format!("error: cannot read `{}`: {e}", file.display())])?;
            match read::parse(&shown, &text) {
                Ok(mut s) => sources.append(&mut s),
                Err(mut e) => errors.append(&mut e),
            }
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
                    match read::parse(&origin, &crd) {
                        Ok(mut s) => {
                            for src in &mut s {
                                src.origin = origin.clone();
                            }
                            sources.append(&mut s);
                        }
                        Err(mut e) => errors.append(&mut e),
                    }
                }
            }
            Err(e) => errors.push(e),
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
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut kinds = Vec::new();
    for s in &sources {
        let versions = s
            .crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for v in &versions {
            kinds.push(emit::kind_version(&emit::VersionInput {
                crd: &s.crd,
                version: v,
                versions: versions.len(),
                origin: &s.origin,
            }));
        }
    }
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
    let groups: BTreeSet<String> = kinds.iter().map(|k| k.group.clone()).collect();
    let modules = emit::group_modules(&groups);
    let mut files = Vec::new();
    for k in &kinds {
        let path = emit::kind_path(&modules, k);
        let contents = format!("{header}{}", k.text);
        check_rust(&path, &contents)?;
        files.push(OutputFile { path, contents });
    }
    for (path, text) in emit::mod_files(&kinds, &modules, root_is_ours) {
        files.push(OutputFile {
            path,
            contents: format!("{header}{text}"),
        });
    }
    let mut notes = Vec::new();
    if !root_is_ours {
        let text = std::fs::read_to_string(&root_mod).unwrap_or_default();
        for module in modules.values() {
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
            .map_err(|e| vec![e])?;
    let mut summary = String::new();
    for k in &kinds {
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
        summary.push_str(&n);
        summary.push('\n');
    }
    summary.push_str(&format!(
        "kube-codegen: imported {} kind version(s) from {} CRD(s)\n{written}",
        kinds.len(),
        sources.len()
    ));
    Ok(summary)
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
