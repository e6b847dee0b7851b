//! The house rules of the workspace's library crates, checked so that they hold: no source
//! file over 800 lines and no function over 120 lines, outside tests, generated code and the
//! data tables named below (each with the reason it is one table).

use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

/// The crates the rules cover.
const CRATES: &[&str] = &[
    "codegen-core",
    "codegen-cli",
    "codegen-runtime",
    "fake-apiserver",
    "apiserver-rules",
];

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 120;

/// Functions that are one table of data rather than logic: `(file suffix, function name)`.
/// Empty: tables are `const`s.
const DATA_TABLES: &[(&str, &str)] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            // Generated trees are checked by `hack/verify-codegen.sh`, not by size.
            if name != "generated" && name != "tests" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream_string().contains("test"))
}

trait MetaText {
    fn to_token_stream_string(&self) -> String;
}

impl MetaText for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

/// Lines of a span, first to last inclusive.
fn lines(span: proc_macro2::Span) -> usize {
    span.end().line + 1 - span.start().line
}

#[derive(Default)]
struct Measure {
    /// Lines inside `#[cfg(test)]` items, which the file limit does not count.
    test_lines: usize,
    /// `(name, first line, lines)` of every function outside tests.
    functions: Vec<(String, usize, usize)>,
}

impl Measure {
    fn function(&mut self, name: &syn::Ident, span: proc_macro2::Span) {
        self.functions
            .push((name.to_string(), span.start().line, lines(span)));
    }

    /// The functions of `items`, inside modules, impls and traits; `#[cfg(test)]` items
    /// are counted as test lines instead.
    fn items(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Mod(m) if is_cfg_test(&m.attrs) => self.test_lines += lines(m.span()),
                syn::Item::Fn(f) if is_cfg_test(&f.attrs) => self.test_lines += lines(f.span()),
                syn::Item::Mod(m) => {
                    if let Some((_, content)) = &m.content {
                        self.items(content);
                    }
                }
                syn::Item::Fn(f) => self.function(&f.sig.ident, f.span()),
                syn::Item::Impl(i) => {
                    for item in &i.items {
                        if let syn::ImplItem::Fn(f) = item {
                            self.function(&f.sig.ident, f.span());
                        }
                    }
                }
                syn::Item::Trait(t) => {
                    for item in &t.items {
                        if let syn::TraitItem::Fn(f) = item
                            && f.default.is_some()
                        {
                            self.function(&f.sig.ident, f.span());
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn no_file_over_800_lines_and_no_function_over_120() {
    let root = workspace();
    let mut findings = Vec::new();
    let mut files = 0;
    for krate in CRATES {
        let mut paths = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut paths);
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).expect("a source file reads");
            // Generated files (the runtime's shipped apply configurations) are checked by
            // `hack/verify-codegen.sh`, not by size.
            if text.starts_with("// Code generated") {
                continue;
            }
            let shown = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let file =
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{shown} does not parse: {e}"));
            files += 1;
            let mut measure = Measure::default();
            measure.items(&file.items);
            let counted = text.lines().count().saturating_sub(measure.test_lines);
            if counted > MAX_FILE_LINES {
                findings.push(format!(
                    "{shown}: {counted} lines outside tests (at most {MAX_FILE_LINES})"
                ));
            }
            for (name, line, length) in measure.functions {
                let table = DATA_TABLES
                    .iter()
                    .any(|(suffix, f)| shown.ends_with(suffix) && *f == name);
                if length > MAX_FN_LINES && !table {
                    findings.push(format!(
                        "{shown}:{line}: fn `{name}` is {length} lines (at most {MAX_FN_LINES})"
                    ));
                }
            }
        }
    }
    assert!(files > 50, "only {files} files found: is the walk right?");
    assert!(
        findings.is_empty(),
        "split these by concern:\n{}",
        findings.join("\n")
    );
}

/// The check itself: a long function is found, a short one is not.
#[test]
fn the_measure_sees_a_long_function() {
    let body: String = (0..130)
        .map(|i| format!("    let _x{i} = {i};\n"))
        .collect();
    let text = format!(
        "fn short() {{}}\nfn long() {{\n{body}}}\n#[cfg(test)]\nmod tests {{\n    fn t() {{}}\n}}\n"
    );
    let file = syn::parse_file(&text).expect("parses");
    let mut measure = Measure::default();
    measure.items(&file.items);
    let long: Vec<_> = measure
        .functions
        .iter()
        .filter(|(_, _, n)| *n > MAX_FN_LINES)
        .map(|(name, _, _)| name.as_str())
        .collect();
    assert_eq!(long, ["long"]);
    assert_eq!(measure.test_lines, 4);
}
