//! The book (`docs/`) as its readers meet it: every page is in the summary and every page of
//! the summary exists, every relative link of the book and the README reaches a file (and a
//! heading, for an anchor), and the tutorial's own code builds in a crate `init` wrote.
//!
//! `mdbook build docs` (run by `.ci/run`) checks that the book renders; it reports a broken
//! link only through a preprocessor, hence the link check here.

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use support::{TempDir, repo, stderr, target_dir};

fn book() -> PathBuf {
    repo().join("docs/src")
}

/// Every `.md` file under `dir`, sorted.
fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            pages(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// The text of `markdown` outside fenced code blocks and inline code spans.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans (`...`) hold no links.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links `[text](target)` of `markdown`'s prose.
fn links(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        out.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    out
}

/// The anchor mdBook gives a heading: lowercase letters, digits, `-` and `_` kept, spaces
/// as `-`, everything else dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings, numbered as mdBook numbers repeats (`x`, `x-1`, ...).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = anchor(line.trim_start_matches('#'));
        let mut id = base.clone();
        let mut n = 0;
        while out.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        out.insert(id);
    }
    out
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The broken links of the page at `page`, each as `page: target (why)`.
fn broken_links(page: &Path) -> Vec<String> {
    let text = fs::read_to_string(page).unwrap();
    let mut out = Vec::new();
    for target in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
        let resolved = if file.is_empty() {
            page.to_owned()
        } else {
            normalize(&page.parent().unwrap().join(file))
        };
        let why = if !resolved.exists() {
            Some("no such file")
        } else if !fragment.is_empty()
            && resolved.extension().is_some_and(|e| e == "md")
            && !anchors(&fs::read_to_string(&resolved).unwrap()).contains(fragment)
        {
            Some("no such heading")
        } else {
            None
        };
        if let Some(why) = why {
            out.push(format!("{}: {target} ({why})", page.display()));
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_book_and_the_readme_resolves() {
    let mut all = Vec::new();
    pages(&book(), &mut all);
    all.push(repo().join("README.md"));
    let broken: Vec<String> = all.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_summary_lists_every_page_and_only_pages_that_exist() {
    let summary = fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .iter()
        .map(|l| book().join(l.split('#').next().unwrap()))
        .collect();
    let mut all = Vec::new();
    pages(&book(), &mut all);
    let on_disk: BTreeSet<PathBuf> = all
        .into_iter()
        .filter(|p| !p.ends_with("SUMMARY.md"))
        .collect();
    let missing: Vec<_> = listed.difference(&on_disk).collect();
    let unlisted: Vec<_> = on_disk.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "in SUMMARY.md but missing: {missing:?}; pages not in SUMMARY.md: {unlisted:?}"
    );
}

/// The fenced blocks of `markdown` whose info string has `<key>=PATH`: (PATH, contents).
/// `file=PATH` shows a whole file as the reader changes it, `excerpt=PATH` a part of a file
/// `init` writes.
fn blocks(markdown: &str, key: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut current, fence) {
            (None, Some(info)) => {
                let path = info
                    .split(',')
                    .find_map(|a| a.trim().strip_prefix(key)?.strip_prefix('='));
                if let Some(path) = path {
                    current = Some((path.to_owned(), String::new()));
                }
            }
            (Some(_), Some(_)) => out.push(current.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// The arguments of the tutorial's `kube-codegen init` command, after `init`.
fn init_args(markdown: &str) -> Vec<String> {
    let line = markdown
        .lines()
        .find(|l| l.starts_with("cargo run -p kube-codegen -- init "))
        .expect("the tutorial starts with kube-codegen init");
    line.split('#').next().unwrap()["cargo run -p kube-codegen -- init ".len()..]
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_tutorial_builds_in_a_crate_init_wrote() {
    let init_page = fs::read_to_string(book().join("tutorial/init.md")).unwrap();
    let args = init_args(&init_page);
    assert_eq!(args[0], "../backup-operator", "the tutorial's crate");
    let tmp = TempDir::new("tutorial");
    let cwd = tmp.0.join("checkout");
    fs::create_dir_all(&cwd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(&cwd)
        .arg("init")
        .args(&args)
        .arg("--kube-codegen-path")
        .arg(repo())
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "init: {}", stderr(&out));
    let dir = tmp.0.join("backup-operator");

    let mut all = Vec::new();
    pages(&book().join("tutorial"), &mut all);
    let tutorial: Vec<String> = all.iter().map(|p| fs::read_to_string(p).unwrap()).collect();
    // Excerpts are the code init writes, as it writes it.
    for (path, text) in tutorial.iter().flat_map(|t| blocks(t, "excerpt")) {
        let file = fs::read_to_string(dir.join(&path)).unwrap();
        assert!(
            file.contains(&text),
            "the excerpt of {path} is not in it:\n{text}"
        );
    }
    let files: Vec<_> = tutorial.iter().flat_map(|t| blocks(t, "file")).collect();
    assert!(!files.is_empty(), "the tutorial shows the files it changes");
    for (path, text) in &files {
        assert!(dir.join(path).is_file(), "{path}: a file init wrote");
        fs::write(dir.join(path), text).unwrap();
    }
    // What the tutorial says to run next: the clients and the CRD regenerated, which builds
    // the crate (the CRD comes from the compiled types) and checks every marker and CEL rule.
    let update = Command::new("hack/update-codegen.sh")
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("KUBE_CODEGEN", env!("CARGO_BIN_EXE_kube-codegen"))
        .output()
        .unwrap();
    assert!(
        update.status.success(),
        "hack/update-codegen.sh after the tutorial's changes:\n{}",
        stderr(&update)
    );
    let crd = fs::read_to_string(dir.join("config/crd/backup.example.com_backups.yaml")).unwrap();
    for shown in ["schedule", "x-kubernetes-validations"] {
        assert!(crd.contains(shown), "{shown} in the CRD:\n{crd}");
    }
    // The crate's API reference (docs/api, by `kube-codegen docs`) shows the new field's
    // description and pattern, and the rule's message.
    let api = fs::read_to_string(dir.join("docs/api/backup.example.com_v1alpha1.md")).unwrap();
    for shown in [
        "| `schedule` | string | When to take a backup: a cron expression of five fields. |",
        "pattern `^(\\S+\\s+){4}\\S+$`",
        "rule `self.replicas <= 3 || has(self.schedule)`: \"more than 3 replicas need a schedule\"",
    ] {
        assert!(api.contains(shown), "{shown} in docs/api:\n{api}");
    }
}
