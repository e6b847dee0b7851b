//! The order of codegen-core's top-level modules: each one imports only modules of lower
//! layers, so there is no import cycle among them and a reader can take the crate bottom-up.
//!
//! Plain Rust over the crate's `src/`: every file is tokenized (comments and strings drop
//! out, code inside `quote!` is generated code and is skipped, and so are `#[cfg(test)]`
//! modules), and each `crate::<module>` path (or `super::` path reaching the crate root) is
//! an edge from the module the file belongs to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// The layers, lowest first. A module may import the modules of the layers below its own,
/// never one of its own layer or above.
const LAYERS: &[&[&str]] = &[
    // Foundations: diagnostics, names, input files, serde's view of the types.
    &["diag", "naming", "source", "ast"],
    // Readers over those: rendering, RBAC and webhook markers, CEL types of fields.
    &["render", "rbac", "webhook", "cel_type"],
    // The grammar of annotations and markers (it asks `webhook` to check webhook markers).
    &["attr"],
    // The validated resource.
    &["model"],
    // Built-in kinds, cross-checks, apply configurations.
    &["builtin", "check", "apply_model"],
    // CRD markers; the apply configurations of a tree.
    &["schema", "apply_tree"],
    // The whole API tree.
    &["tree"],
    // Emitters, which read everything above; the API-convention lint over a built tree.
    &["emit", "lint"],
];

/// Macros whose input is generated code, not this crate's.
const GENERATED: &[&str] = &[
    "quote",
    "quote_spanned",
    "parse_quote",
    "parse_quote_spanned",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, with its module depth below the crate root (`src/a.rs` and
/// `src/a/mod.rs`: 1, `src/a/b.rs`: 2).
fn rust_files(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, usize)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, depth + 1, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let is_mod = path.file_name().is_some_and(|n| n == "mod.rs");
            out.push((path, if is_mod { depth } else { depth + 1 }));
        }
    }
}

/// The top-level module each file belongs to: `src/<module>.rs` or `src/<module>/...`.
fn top_module(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// Whether `tokens[i..]` is `:` `:` (a path separator).
fn path_sep(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// The names a path continues with after `tokens[i]`'s `::`: one name, or the first name
/// of each entry of a `{...}` group.
fn names_after(tokens: &[TokenTree], i: usize, out: &mut BTreeSet<String>) {
    match tokens.get(i) {
        Some(TokenTree::Ident(name)) => {
            out.insert(name.to_string());
        }
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let mut at_start = true;
            for t in &inner {
                match t {
                    TokenTree::Ident(name) if at_start => {
                        out.insert(name.to_string());
                        at_start = false;
                    }
                    TokenTree::Punct(p) if p.as_char() == ',' => at_start = true,
                    _ => at_start = false,
                }
            }
        }
        _ => {}
    }
}

/// The crate-root names `tokens` refers to, in a file `depth` modules below the root.
fn crate_paths(tokens: TokenStream, depth: usize, out: &mut BTreeSet<String>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            // `quote! { ... }`: generated code.
            TokenTree::Ident(name)
                if GENERATED.contains(&name.to_string().as_str())
                    && matches!(tokens.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!') =>
            {
                i += 3;
                continue;
            }
            // `#[cfg(test)] mod tests { ... }`: tests may use any module.
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1)
                    && g.stream().to_string().replace(' ', "") == "cfg(test)"
                {
                    let body = tokens[i + 2..].iter().position(
                        |t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace),
                    );
                    i += 2 + body.map_or(0, |b| b + 1);
                    continue;
                }
            }
            TokenTree::Ident(name) if name == "crate" && path_sep(&tokens, i + 1) => {
                names_after(&tokens, i + 3, out);
            }
            // `super::super::x` from `depth` modules down reaches the root's `x`.
            TokenTree::Ident(name) if name == "super" => {
                let mut supers = 0;
                let mut j = i;
                while matches!(&tokens.get(j), Some(TokenTree::Ident(n)) if n == "super")
                    && path_sep(&tokens, j + 1)
                {
                    supers += 1;
                    j += 3;
                }
                if supers == depth {
                    names_after(&tokens, j, out);
                }
                i = j.max(i + 1);
                continue;
            }
            TokenTree::Group(g) => crate_paths(g.stream(), depth, out),
            _ => {}
        }
        i += 1;
    }
}

/// Module -> the other top-level modules it imports.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), 0, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|(p, _)| top_module(p))
        .filter(|m| m != "lib")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, depth) in files {
        let module = top_module(&path);
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let tokens = TokenStream::from_str(&text)
            .unwrap_or_else(|e| panic!("{} does not tokenize: {e}", path.display()));
        let mut names = BTreeSet::new();
        crate_paths(tokens, depth, &mut names);
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(
            names
                .into_iter()
                .filter(|n| modules.contains(n) && *n != module),
        );
    }
    graph
}

/// One import cycle of `graph`, as `a -> b -> a`, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_import_only_lower_layers() {
    let graph = imports();
    if let Some(c) = cycle(&graph) {
        panic!(
            "import cycle among codegen-core's modules: {}",
            c.join(" -> ")
        );
    }
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut problems = Vec::new();
    for module in graph.keys() {
        if !layer_of.contains_key(module.as_str()) {
            problems.push(format!(
                "`{module}` is in no layer; add it to LAYERS in tests/layers.rs"
            ));
        }
    }
    for (module, deps) in &graph {
        let Some(&own) = layer_of.get(module.as_str()) else {
            continue;
        };
        for dep in deps {
            if layer_of.get(dep.as_str()).is_some_and(|&l| l >= own) {
                problems.push(format!(
                    "`{module}` (layer {own}) imports `{dep}` (layer {}); a module imports only lower layers",
                    layer_of[dep.as_str()]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The reader finds imports in each form the crate writes them, and only those.
#[test]
fn paths_are_found_in_code_only() {
    let text = r#"
        //! [`crate::emit`] in a doc comment is no import.
        use crate::{diag::Ctxt, naming};
        use super::super::ast::Shape;
        fn f() { let _ = crate::model::Verb::Get; quote! { crate::tree::x }; "crate::schema"; }
        #[cfg(test)]
        mod tests { use crate::check; }
    "#;
    let mut names = BTreeSet::new();
    crate_paths(TokenStream::from_str(text).unwrap(), 2, &mut names);
    let expected: BTreeSet<String> = ["ast", "diag", "model", "naming"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(names, expected);
}
