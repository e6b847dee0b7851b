//! The book's generated references (`docs/src/reference/`) are what the code says now: the
//! markers from codegen-core's marker tables, the CLI from `--help` of every command and
//! subcommand, the fake's fidelity table from the contract suite's cases.
//!
//! Each test compares and writes nothing; with `UPDATE_GOLDEN=1` it writes the page instead
//! (`hack/update-docs.sh` does that, `hack/verify-codegen.sh` runs the comparison).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Compares `docs/src/reference/<page>` with `text`, or writes it with `UPDATE_GOLDEN=1`.
fn check(page: &str, text: &str) {
    let path = repo().join("docs/src/reference").join(page);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        if fs::read_to_string(&path).ok().as_deref() != Some(text) {
            fs::write(&path, text).unwrap();
        }
        return;
    }
    let on_disk = fs::read_to_string(&path).unwrap_or_default();
    if on_disk != text {
        let line = on_disk
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| on_disk.lines().count().min(text.lines().count()));
        panic!(
            "{} is stale (first difference at line {}); run hack/update-docs.sh",
            path.display(),
            line + 1
        );
    }
}

#[test]
fn the_marker_reference_is_up_to_date() {
    let text = kube_codegen_core::marker_reference().unwrap_or_else(|e| panic!("{e}"));
    check("markers.md", &text);
}

/// `kube-codegen <path> --help`.
fn help(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(path)
        .arg("--help")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{path:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:`, without `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command's help, depth first, each under a heading of its full name.
fn walk(path: &mut Vec<String>, out: &mut String) {
    let text = help(path);
    let name = std::iter::once("kube-codegen".to_owned())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let level = "#".repeat(path.len().min(2) + 1);
    let _ = write!(
        out,
        "\n{level} `{name}`\n\n```text\n{}\n```\n",
        text.trim_end()
    );
    for sub in subcommands(&text) {
        path.push(sub);
        walk(path, out);
        path.pop();
    }
}

#[test]
fn the_cli_reference_is_up_to_date() {
    let mut out = String::from(
        "# CLI reference\n\n<!-- Generated from `kube-codegen --help` and the help of every \
         subcommand by codegen-cli/tests/reference.rs (hack/update-docs.sh); do not edit. -->\n\n\
         Each section is the command's `--help`, as printed. Exit codes: 0 when the command did \
         what it was asked (with `--verify`: everything up to date); 1 on any error, or out of \
         date with `--verify`; 2 when the arguments do not parse (or `compat` cannot read what \
         it compares).\n",
    );
    walk(&mut Vec::new(), &mut out);
    // `# kube-codegen` would be a second title: the root command is a section too.
    let out = out.replacen("\n# `kube-codegen`\n", "\n## `kube-codegen`\n", 1);
    check("cli.md", &out);
}

/// The leading `//!` paragraph of a file, as one line.
fn module_doc(text: &str) -> String {
    text.lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cases of a contract file: the functions marked as tests, in file order.
fn cases(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut marked = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "#[tokio::test]" || line == "#[test]" || line.starts_with("#[tokio::test(") {
            marked = true;
        } else if marked && let Some(rest) = line.split("fn ").nth(1) {
            out.push(rest.split('(').next().unwrap().to_owned());
            marked = false;
        }
    }
    out
}

#[test]
fn the_fidelity_table_is_up_to_date() {
    let dir = repo().join("fake-apiserver/tests/contract");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut out = String::from(
        "# Fidelity: the contract suite\n\n<!-- Generated from fake-apiserver/tests/contract/ by \
         codegen-cli/tests/reference.rs (hack/update-docs.sh); do not edit. -->\n\n\
         What the fake API server promises, area by area: each case below asserts code, reason, \
         message and fields through `kube::Client`, and runs unchanged against kube-apiserver \
         with `KUBE_CONTRACT_KUBECONFIG=<kubeconfig>`, or on etcd and kube-apiserver started \
         from `KUBEBUILDER_ASSETS=<dir>` (see [How the fake is checked]\
         (../explanations/fidelity.md)). Cases named `fake_only_*` use the fake's test controls \
         and run on the fake only.\n\n| area | what it checks | cases |\n|---|---|---|\n",
    );
    let (mut total, mut areas) = (0, 0);
    for path in &files {
        let text = fs::read_to_string(path).unwrap();
        let cases = cases(&text);
        if cases.is_empty() {
            continue;
        }
        total += cases.len();
        areas += 1;
        let file = path.file_name().unwrap().to_string_lossy();
        let names: Vec<String> = cases.iter().map(|c| format!("`{c}`")).collect();
        let _ = writeln!(
            out,
            "| `{file}` | {} | {} |",
            module_doc(&text).replace('|', "\\|"),
            names.join("<br>")
        );
    }
    let _ = writeln!(
        out,
        "\n{total} cases in {areas} files of `fake-apiserver/tests/contract/`."
    );
    check("fidelity.md", &out);
}
