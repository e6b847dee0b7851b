//! The layers of `src/`, checked by reading the source: a module may name (through
//! `crate::`, `super::`, `self::`, a `use`d module or a child module) only modules of its own
//! layer and of the layers it stands on, and no two files name each other in a cycle.
//!
//! The layers, from the top (each may use those listed after it):
//!
//! | layer        | modules                                       | may use                                              |
//! |--------------|-----------------------------------------------|------------------------------------------------------|
//! | root         | `lib.rs`, `server.rs`, `test_env.rs`, `envtest/` | everything                                        |
//! | http         | `http/`                                       | registry, admission, conversion, store, foundation   |
//! | registry     | `registry/`                                   | admission, conversion, controllers, store, foundation |
//! | admission    | `admission/`                                  | conversion, store, foundation                        |
//! | conversion   | `conversion/`                                 | store, foundation                                    |
//! | controllers  | `controllers/`                                | store, foundation                                    |
//! | store        | `store/`                                      | foundation                                           |
//! | foundation   | `meta`, `error`, `resource`, `config`, `webhook_client` | nothing of the crate                       |
//!
//! `crate::rules` is the `apiserver-rules` crate, re-exported: any layer may use it. A new
//! top-level module must be given a layer here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A layer of the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Root,
    Http,
    Registry,
    Admission,
    Conversion,
    Controllers,
    Store,
    Foundation,
}

/// The layer of a top-level module (`""` for `lib.rs`).
fn layer_of(top: &str) -> Option<Layer> {
    Some(match top {
        "" | "server" | "test_env" | "envtest" => Layer::Root,
        "http" => Layer::Http,
        "registry" => Layer::Registry,
        "admission" => Layer::Admission,
        "conversion" => Layer::Conversion,
        "controllers" => Layer::Controllers,
        "store" => Layer::Store,
        "meta" | "error" | "resource" | "config" | "webhook_client" => Layer::Foundation,
        _ => return None,
    })
}

/// The layers a layer may use, besides its own top-level module.
fn may_use(layer: Layer) -> &'static [Layer] {
    use Layer::*;
    match layer {
        Root => &[
            Http,
            Registry,
            Admission,
            Conversion,
            Controllers,
            Store,
            Foundation,
        ],
        Http => &[Registry, Admission, Conversion, Store, Foundation],
        Registry => &[Admission, Conversion, Controllers, Store, Foundation],
        Admission => &[Conversion, Store, Foundation],
        Conversion => &[Store, Foundation],
        Controllers => &[Store, Foundation],
        Store => &[Foundation],
        Foundation => &[],
    }
}

/// Names at the crate root that stand for other crates.
const EXTERNAL: &[&str] = &["rules"];

/// One source file: its module path (`["store", "objects"]`) and its text.
struct Source {
    module: Vec<String>,
    text: String,
}

/// The module path of a file under `src/` (`store/mod.rs` is `store`).
fn module_of(relative: &str) -> Vec<String> {
    let without = relative.trim_end_matches(".rs");
    let mut parts: Vec<String> = without.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Every `.rs` file under `src/` but the binaries.
fn read_sources() -> Vec<Source> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<Source>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("src is readable")
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let relative = path
                .strip_prefix(root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                if relative != "bin" {
                    walk(&path, root, out);
                }
            } else if relative.ends_with(".rs") {
                out.push(Source {
                    module: module_of(&relative),
                    text: std::fs::read_to_string(&path).expect("a source file"),
                });
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// `text` with comments, strings and character literals blanked out (lines kept).
fn code_of(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && !ident_char(prev(&b, i)) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.extend(b[i..j.min(b.len())].iter().map(|&c| blank(c)));
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'); otherwise a lifetime.
            let end = if next == Some('\\') {
                (i + 2..b.len()).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev(b: &[char], i: usize) -> char {
    if i == 0 { ' ' } else { b[i - 1] }
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of code: identifiers, `::`, and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let b: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if ident_char(c) {
            let start = i;
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            out.push(b[start..i].iter().collect());
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// The paths a `use` tree names, flattened (`a::{b, c::d}` is `a::b`, `a::c::d`); a glob
/// or `self` names the module before it. The second item is the name it binds.
fn use_paths(tokens: &[String]) -> Vec<(Vec<String>, Option<String>)> {
    fn tree(
        t: &[String],
        i: &mut usize,
        prefix: &[String],
        out: &mut Vec<(Vec<String>, Option<String>)>,
    ) {
        let mut path = prefix.to_vec();
        loop {
            match t.get(*i).map(String::as_str) {
                Some("{") => {
                    *i += 1;
                    while t.get(*i).map(String::as_str) != Some("}") && *i < t.len() {
                        tree(t, i, &path, out);
                        if t.get(*i).map(String::as_str) == Some(",") {
                            *i += 1;
                        }
                    }
                    *i += 1;
                    return;
                }
                Some("*") => {
                    *i += 1;
                    out.push((path, None));
                    return;
                }
                Some("self") if !path.is_empty() => {
                    *i += 1;
                    let mut name = path.last().cloned();
                    if t.get(*i).map(String::as_str) == Some("as") {
                        name = t.get(*i + 1).cloned();
                        *i += 2;
                    }
                    out.push((path, name));
                    return;
                }
                Some(seg) if seg.chars().all(ident_char) => {
                    path.push(seg.to_owned());
                    *i += 1;
                    match t.get(*i).map(String::as_str) {
                        Some("::") => *i += 1,
                        Some("as") => {
                            let name = t.get(*i + 1).cloned();
                            *i += 2;
                            out.push((path, name));
                            return;
                        }
                        _ => {
                            let name = path.last().cloned();
                            out.push((path, name));
                            return;
                        }
                    }
                }
                _ => return,
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    // `use ::x` names another crate.
    if tokens.first().map(String::as_str) != Some("::") {
        tree(tokens, &mut i, &[], &mut out);
    }
    out
}

/// The path from the crate root that `path` stands for, in module `current`; `None` for a
/// path into another crate (or to an item only in scope).
fn absolute(
    modules: &BTreeSet<Vec<String>>,
    current: &[String],
    aliases: &BTreeMap<String, Vec<String>>,
    path: &[String],
) -> Option<Vec<String>> {
    let absolute: Vec<String> = match path.first()?.as_str() {
        "crate" => path[1..].to_vec(),
        "self" => current.iter().chain(&path[1..]).cloned().collect(),
        "super" => {
            let mut base = current.to_vec();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            base.into_iter().chain(rest.iter().cloned()).collect()
        }
        name => match aliases.get(name) {
            Some(module) => module.iter().chain(&path[1..]).cloned().collect(),
            // A child module, named from its parent.
            None if modules.contains(&[current, &path[..1]].concat()) => {
                current.iter().chain(path).cloned().collect()
            }
            None => return None,
        },
    };
    let external = absolute
        .first()
        .is_some_and(|top| EXTERNAL.contains(&top.as_str()));
    (!external).then_some(absolute)
}

/// The file (module) that a path from the crate root is in: its longest prefix that is one.
fn file_of(modules: &BTreeSet<Vec<String>>, absolute: &[String]) -> Vec<String> {
    (0..=absolute.len())
        .rev()
        .map(|n| absolute[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// The files each file names: module path to module paths.
fn imports(sources: &[Source]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut graph = BTreeMap::new();
    for source in sources {
        let code = code_of(&source.text);
        let t = tokens(&code);
        let mut edges = BTreeSet::new();
        let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // Inline modules (`mod tests { ... }`) and the brace depth each one closes at.
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0;
        let mut i = 0;
        while i < t.len() {
            let current: Vec<String> = source
                .module
                .iter()
                .cloned()
                .chain(inline.iter().map(|(m, _)| m.clone()))
                .collect();
            match t[i].as_str() {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                }
                "mod" if t.get(i + 2).map(String::as_str) == Some("{") => {
                    inline.push((t[i + 1].clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
                "use" => {
                    let end = (i..t.len()).find(|&k| t[k] == ";").unwrap_or(t.len());
                    for (path, name) in use_paths(&t[i + 1..end]) {
                        let Some(target) = absolute(&modules, &current, &aliases, &path) else {
                            continue;
                        };
                        if let Some(name) = name
                            && modules.contains(&target)
                        {
                            // A module brought into scope under `name`.
                            aliases.insert(name, target.clone());
                        }
                        edges.insert(file_of(&modules, &target));
                    }
                    i = end + 1;
                    continue;
                }
                word if word.chars().all(ident_char)
                    && t.get(i + 1).map(String::as_str) == Some("::")
                    && (i == 0 || t[i - 1] != "::") =>
                {
                    let mut path = vec![word.to_owned()];
                    let mut k = i + 1;
                    while t.get(k).map(String::as_str) == Some("::")
                        && t.get(k + 1).is_some_and(|s| s.chars().all(ident_char))
                    {
                        path.push(t[k + 1].clone());
                        k += 2;
                    }
                    if let Some(target) = absolute(&modules, &current, &aliases, &path) {
                        edges.insert(file_of(&modules, &target));
                    }
                    i = k;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        edges.remove(&source.module);
        graph.insert(source.module.clone(), edges);
    }
    graph
}

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// Every import that points up a layer (or into a module with no layer).
fn violations(sources: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    for (from, targets) in imports(sources) {
        let top = |m: &[String]| m.first().cloned().unwrap_or_default();
        let Some(from_layer) = layer_of(&top(&from)) else {
            out.push(format!("{} has no layer: add it to layer_of", show(&from)));
            continue;
        };
        for to in targets {
            if top(&from) == top(&to) && !to.is_empty() {
                continue;
            }
            match layer_of(&top(&to)) {
                Some(to_layer)
                    if from_layer == Layer::Root || may_use(from_layer).contains(&to_layer) => {}
                Some(to_layer) => out.push(format!(
                    "{} ({from_layer:?}) uses {} ({to_layer:?}), a layer it may not use",
                    show(&from),
                    show(&to)
                )),
                None => out.push(format!("{} has no layer: add it to layer_of", show(&to))),
            }
        }
    }
    out
}

/// An import cycle between files, if there is one.
fn cycle(sources: &[Source]) -> Option<Vec<Vec<String>>> {
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, bool>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let at = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut found = stack[at..].to_vec();
                found.push(node.clone());
                return Some(found);
            }
            None => {}
        }
        state.insert(node.clone(), false);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, state, stack) {
                return Some(found);
            }
        }
        stack.pop();
        state.insert(node.clone(), true);
        None
    }
    let graph = imports(sources);
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if let Some(found) = visit(node, &graph, &mut state, &mut Vec::new()) {
            return Some(found);
        }
    }
    None
}

#[test]
fn imports_point_down_the_layers() {
    let sources = read_sources();
    assert!(sources.len() > 20, "src/ was read");
    let found = violations(&sources);
    assert!(
        found.is_empty(),
        "imports that point up:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_cycle() {
    let sources = read_sources();
    if let Some(found) = cycle(&sources) {
        let names: Vec<String> = found.iter().map(|m| show(m)).collect();
        panic!("an import cycle: {}", names.join(" -> "));
    }
}

/// Sources for the checks' own tests.
fn fake(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(path, text)| Source {
            module: module_of(path),
            text: (*text).to_owned(),
        })
        .collect()
}

#[test]
fn the_check_finds_an_import_that_points_up() {
    let sources = fake(&[
        ("lib.rs", "mod registry; mod store; mod meta;"),
        ("registry/mod.rs", "use crate::store::State;\n"),
        (
            "store/mod.rs",
            "// crate::registry in a comment is fine\nfn f() { let _ = \"crate::registry\"; crate::registry::create(); }",
        ),
        ("meta.rs", "use super::store::State;"),
    ]);
    assert_eq!(
        violations(&sources),
        [
            "meta (Foundation) uses store (Store), a layer it may not use",
            "store (Store) uses registry (Registry), a layer it may not use",
        ]
    );
}

#[test]
fn the_check_follows_child_modules_and_aliases_to_a_cycle() {
    let sources = fake(&[
        ("lib.rs", "mod registry;"),
        (
            "registry/mod.rs",
            "pub mod create; pub mod update; fn f() { create::create(); }",
        ),
        (
            "registry/create.rs",
            "use super::update as u; fn f() { u::update(); }",
        ),
        (
            "registry/update.rs",
            "use crate::registry::create::{self}; fn f() { create::create(); }",
        ),
    ]);
    let names: Vec<String> = cycle(&sources)
        .expect("a cycle")
        .iter()
        .map(|m| show(m))
        .collect();
    assert_eq!(
        names,
        ["registry::create", "registry::update", "registry::create"]
    );
}
