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

/// The marker of a shell block nothing here runs: the line before its fence.
const NEEDS_A_CLUSTER: &str = "<!-- needs a cluster -->";

/// The marker of a shell block outside the tutorial run in the tutorial's crate once the
/// tutorial is done.
const IN_THE_TUTORIAL_CRATE: &str = "<!-- runs in the tutorial's crate -->";

/// A step of a page in reading order: a shell block's commands, or a file the reader writes.
enum Step {
    /// The commands of a shell block (comments dropped, continued lines joined), and the
    /// line before its fence.
    Shell {
        commands: Vec<String>,
        before: String,
    },
    /// A `file=PATH` block: the path and its new contents.
    File(String, String),
    /// An `edit=PATH` block: its first line is a line of the file as `init` wrote it, the
    /// others go after each occurrence of it.
    Edit(String, String),
}

/// The steps of `markdown`, in order.
fn steps(markdown: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut before = String::new();
    let mut open: Option<(String, String)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => open = Some((info.trim().to_owned(), String::new())),
            (Some(_), Some(_)) => {
                let (info, body) = open.take().unwrap();
                let before = std::mem::take(&mut before);
                let mut parts = info.split(',').map(str::trim);
                let language = parts.next().unwrap_or_default();
                let path = |key: &str| parts.clone().find_map(|a| a.strip_prefix(key));
                if let Some(path) = path("file=") {
                    out.push(Step::File(path.to_owned(), body));
                } else if let Some(path) = path("edit=") {
                    out.push(Step::Edit(path.to_owned(), body));
                } else if matches!(language, "sh" | "bash" | "console" | "shell") {
                    let commands = commands(&body);
                    out.push(Step::Shell { commands, before });
                }
            }
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) if !line.trim().is_empty() => before = line.trim().to_owned(),
            (None, None) => {}
        }
    }
    out
}

/// The commands of a shell block: `\` continuations joined, comments and blank lines
/// dropped, a heredoc's body kept with its command.
fn commands(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut heredoc: Option<String> = None;
    let mut continued = false;
    for line in body.lines() {
        if let Some(end) = &heredoc {
            let last = out.last_mut().unwrap();
            last.push('\n');
            last.push_str(line);
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        let code = match line.find(" #") {
            Some(at) => &line[..at],
            None if line.trim_start().starts_with('#') => "",
            None => line,
        };
        let code = code.trim();
        if code.is_empty() && !continued {
            continue;
        }
        let (code, more) = match code.strip_suffix('\\') {
            Some(code) => (code.trim_end(), true),
            None => (code, false),
        };
        if continued {
            let last = out.last_mut().unwrap();
            last.push(' ');
            last.push_str(code);
        } else {
            out.push(code.to_owned());
        }
        continued = more;
        if let Some((_, tag)) = code.split_once("<<") {
            heredoc = Some(tag.trim().trim_matches('\'').trim_matches('"').to_owned());
        }
    }
    out
}

/// Where the tutorial's commands run: the checkout `init` runs from, the crate it writes.
struct Reader {
    checkout: PathBuf,
    dir: PathBuf,
    /// The crate exists: `init` ran.
    initialized: bool,
}

impl Reader {
    /// Runs one command of the book as the reader would, in the directory the reader is in;
    /// an error names a command nothing here knows how to run.
    fn run(&mut self, command: &str) -> Result<(), String> {
        let words: Vec<&str> = command.split_whitespace().collect();
        let cwd = if self.initialized {
            &self.dir
        } else {
            &self.checkout
        }
        .clone();
        let mut cmd = match words.as_slice() {
            ["cd", "../backup-operator"] => {
                assert!(self.initialized, "`cd ../backup-operator` before init");
                return Ok(());
            }
            [
                "cargo",
                "run",
                "-p",
                "kube-codegen",
                "--",
                "init",
                "../backup-operator",
                args @ ..,
            ] => {
                assert!(!self.initialized, "init twice");
                self.initialized = true;
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_kube-codegen"));
                cmd.arg("init").arg("../backup-operator").args(args);
                cmd.arg("--kube-codegen-path").arg(repo());
                cmd
            }
            // The operator runs until stopped: its flags are checked, its binary built.
            ["cargo", "run", "--", args @ ..] => {
                let mut cmd = Command::new("cargo");
                cmd.args(["run", "--quiet", "--"]).args(args).arg("--help");
                cmd
            }
            ["cargo", "test"] => {
                let mut cmd = Command::new("cargo");
                cmd.args(["test", "--quiet"]);
                cmd
            }
            ["kube-codegen", args @ ..] => {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_kube-codegen"));
                cmd.args(args);
                cmd
            }
            [script] if script.starts_with("hack/") && script.ends_with(".sh") => {
                Command::new(self.dir.join(script))
            }
            _ => return Err(command.to_owned()),
        };
        let out = cmd
            .current_dir(cwd)
            .env("CARGO_TARGET_DIR", target_dir())
            .env("KUBE_CODEGEN", env!("CARGO_BIN_EXE_kube-codegen"))
            .output()
            .unwrap();
        assert!(out.status.success(), "`{command}`:\n{}", stderr(&out));
        Ok(())
    }

    /// Writes a file the reader changes.
    fn write(&mut self, path: &str, text: &str) {
        assert!(self.dir.join(path).is_file(), "{path}: a file init wrote");
        fs::write(self.dir.join(path), text).unwrap();
    }

    /// Runs `steps` in order; a command that comes again later runs only there (the crate
    /// as the tutorial leaves it; `tests/init.rs` runs them on the crate as init writes it).
    /// The commands nothing runs, in blocks not marked as needing a cluster.
    fn run_steps(&mut self, steps: &[Step]) -> Vec<String> {
        let mut last = std::collections::HashMap::new();
        for (i, step) in steps.iter().enumerate() {
            if let Step::Shell { commands, .. } = step {
                for command in commands {
                    last.insert(command.as_str(), i);
                }
            }
        }
        let mut unrun = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            match step {
                Step::File(path, text) => self.write(path, text),
                Step::Edit(path, text) => {
                    let file = fs::read_to_string(self.dir.join(path)).unwrap();
                    let (anchor, added) = text.split_once('\n').unwrap();
                    let anchor = format!("{anchor}\n");
                    assert!(file.contains(&anchor), "{path} has no line {anchor}");
                    self.write(path, &file.replace(&anchor, &format!("{anchor}{added}")));
                }
                Step::Shell { commands, before } if before != NEEDS_A_CLUSTER => {
                    for command in commands.iter().filter(|c| last[c.as_str()] == i) {
                        if let Err(command) = self.run(command) {
                            unrun.push(command);
                        }
                    }
                }
                Step::Shell { .. } => {}
            }
        }
        unrun
    }
}

/// The tutorial's pages in reading order, as its index lists them.
fn tutorial_pages() -> Vec<PathBuf> {
    let dir = book().join("tutorial");
    let index = fs::read_to_string(dir.join("index.md")).unwrap();
    let out: Vec<PathBuf> = links(&index)
        .into_iter()
        .filter(|l| !l.contains('/') && l.ends_with(".md"))
        .map(|l| dir.join(l))
        .collect();
    let mut all = Vec::new();
    pages(&dir, &mut all);
    all.retain(|p| !p.ends_with("index.md"));
    let listed: BTreeSet<_> = out.iter().cloned().collect();
    assert_eq!(
        listed,
        all.iter().cloned().collect(),
        "the tutorial's index links every page of the tutorial"
    );
    out
}

#[test]
fn the_tutorial_runs_in_a_crate_init_wrote() {
    let tmp = TempDir::new("tutorial");
    let mut reader = Reader {
        checkout: tmp.0.join("checkout"),
        dir: tmp.0.join("backup-operator"),
        initialized: false,
    };
    fs::create_dir_all(&reader.checkout).unwrap();
    let tutorial: Vec<String> = tutorial_pages()
        .iter()
        .map(|p| fs::read_to_string(p).unwrap())
        .collect();
    // Every shell block runs in order, each file the reader changes written first; a block
    // that needs a cluster says so. Then the how-to guides' blocks marked to run in the
    // tutorial's crate.
    let mut all: Vec<Step> = tutorial.iter().flat_map(|t| steps(t)).collect();
    let mut guides = Vec::new();
    pages(&book().join("how-to"), &mut guides);
    for guide in &guides {
        let text = fs::read_to_string(guide).unwrap();
        all.extend(steps(&text).into_iter().filter(
            |s| matches!(s, Step::Shell { before, .. } if before == IN_THE_TUTORIAL_CRATE),
        ));
    }
    let unrun = reader.run_steps(&all);
    assert!(
        unrun.is_empty(),
        "commands of the book nothing runs (run them in tests/book.rs, or mark their block \
         `{NEEDS_A_CLUSTER}`):\n{}",
        unrun.join("\n")
    );
    assert!(
        reader.initialized,
        "the tutorial starts with kube-codegen init"
    );
    let dir = &reader.dir;
    // Excerpts are the code init writes, as it writes it.
    for (path, text) in tutorial.iter().flat_map(|t| blocks(t, "excerpt")) {
        let file = fs::read_to_string(dir.join(&path)).unwrap();
        assert!(
            file.contains(&text),
            "the excerpt of {path} is not in it:\n{text}"
        );
    }
    // Code of this repository (the sample's, compiled and tested with it), as it is.
    let root = repo();
    for (path, text) in tutorial.iter().flat_map(|t| blocks(t, "repo-excerpt")) {
        let file = fs::read_to_string(root.join(&path)).unwrap();
        assert!(
            file.contains(&text),
            "the excerpt of {path} is not in it:\n{text}"
        );
    }
    // Every Rust block of the tutorial is code that CI builds: a file or an edit the reader
    // makes (built in the tutorial's crate), or an excerpt of code init or this repository
    // has.
    for page in &tutorial {
        for info in page
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("```rust"))
        {
            assert!(
                ["file=", "edit=", "excerpt=", "repo-excerpt="]
                    .iter()
                    .any(|k| info.split(',').any(|a| a.trim().starts_with(k))),
                "a Rust block of the tutorial nothing builds (give it file=, edit=, excerpt= or \
                 repo-excerpt=): ```rust{info}"
            );
        }
    }
    let files: Vec<_> = tutorial.iter().flat_map(|t| blocks(t, "file")).collect();
    assert!(!files.is_empty(), "the tutorial shows the files it changes");
    // `hack/update-codegen.sh` after the tutorial's type change rebuilt the CRD, which checks
    // every marker and CEL rule.
    let crd = fs::read_to_string(dir.join("config/crd/backup.example.com_backups.yaml")).unwrap();
    for shown in ["schedule", "x-kubernetes-validations"] {
        assert!(crd.contains(shown), "{shown} in the CRD:\n{crd}");
    }
    // The crate's API reference (docs/api, by `kube-codegen docs`) shows the new field's
    // description and pattern, and the rule's message, in Markdown and in HTML.
    let api = fs::read_to_string(dir.join("docs/api/backup.example.com_v1alpha1.md")).unwrap();
    for shown in [
        "| `schedule` | string | When to take a backup: a cron expression of five fields. |",
        "pattern `^(\\S+\\s+){4}\\S+$`",
        "rule `self.replicas <= 3 || has(self.schedule)`: \"more than 3 replicas need a schedule\"",
    ] {
        assert!(api.contains(shown), "{shown} in docs/api:\n{api}");
    }
    let html = fs::read_to_string(dir.join("docs/api/backup.example.com_v1alpha1.html")).unwrap();
    for shown in [
        "<tr><td><code>schedule</code></td><td>string</td><td>When to take a backup: a cron expression of five fields.</td>",
        "pattern <code>^(\\S+\\s+){4}\\S+$</code>",
        "rule <code>self.replicas &lt;= 3 || has(self.schedule)</code>: &quot;more than 3 replicas need a schedule&quot;",
        "<h3 id=\"backupspec\">Backup.spec</h3>",
    ] {
        assert!(html.contains(shown), "{shown} in docs/api:\n{html}");
    }
}

#[test]
fn shell_blocks_read_as_commands() {
    let page = "x\n\n<!-- needs a cluster -->\n```sh\ncargo run -- \\\n    --a b   # note\n# only a comment\nkubectl apply -f - <<'YAML'\nkind: X\n# not a comment\nYAML\necho done\n```\n\n```rust,ignore,file=src/a.rs\nfn a() {}\n```\n";
    let steps = steps(page);
    assert_eq!(steps.len(), 2);
    let Step::Shell { commands, before } = &steps[0] else {
        panic!("a shell block first")
    };
    assert_eq!(before, NEEDS_A_CLUSTER);
    assert_eq!(
        commands,
        &[
            "cargo run -- --a b",
            "kubectl apply -f - <<'YAML'\nkind: X\n# not a comment\nYAML",
            "echo done"
        ]
    );
    assert!(
        matches!(&steps[1], Step::File(path, body) if path == "src/a.rs" && body == "fn a() {}\n")
    );
}
