//! Golden cases: `golden/<case>/input` (annotated API types) must generate exactly
//! `golden/<case>/expected`. Refresh with `UPDATE_GOLDEN=1 cargo test -p codegen-tests --test golden`
//! and review the diff. The same cases check that the derive expands the very code the CLI writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kube_codegen_core::emit::files::OutputFile;
use kube_codegen_core::source;

const CASES: &[&str] = &[
    "all_verbs",
    "apply",
    "builtins",
    "conversion",
    "filters",
    "groups",
    "markers",
    "methods",
];

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(case)
}

fn generate(case: &str) -> Vec<OutputFile> {
    let command = format!(
        "kube-codegen generate --input tests/golden/{case}/input --output tests/golden/{case}/expected --api-module crate::{case}_apis"
    );
    let sources = source::load(&case_dir(case).join("input")).unwrap();
    kube_codegen_core::generate(
        &sources,
        &format!("crate::{case}_apis"),
        &command,
        Some(kube_codegen_core::Freshness {
            input_from_output: "../input",
            regenerate: &command,
        }),
    )
    .map(|(files, _)| files)
    .unwrap_or_else(|e| panic!("golden case `{case}` does not generate:\n{e}"))
}

fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for file in source::load(dir).unwrap_or_default() {
        out.insert(file.relative, file.text);
    }
    out
}

#[test]
fn generated_trees_match_the_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for case in CASES {
        let expected_dir = case_dir(case).join("expected");
        let files = generate(case);
        if update {
            let _ = fs::remove_dir_all(&expected_dir);
            for f in &files {
                let path = expected_dir.join(&f.path);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, &f.contents).unwrap();
            }
            continue;
        }
        let mut on_disk = read_tree(&expected_dir);
        for f in &files {
            match on_disk.remove(&f.path) {
                None => failures.push(format!("{case}: missing {}", f.path.display())),
                Some(text) if text != f.contents => {
                    failures.push(format!("{case}: differs {}", f.path.display()))
                }
                Some(_) => {}
            }
        }
        failures.extend(
            on_disk
                .keys()
                .map(|p| format!("{case}: not generated any more {}", p.display())),
        );
    }
    assert!(
        failures.is_empty(),
        "golden files differ:\n  {}\nrefresh with UPDATE_GOLDEN=1 cargo test -p codegen-tests --test golden, then review the diff",
        failures.join("\n  ")
    );
}

#[test]
fn every_case_covers_something() {
    // Guards the list above against a case whose input silently generates nothing.
    for case in CASES {
        let files = generate(case);
        let clients = files
            .iter()
            .filter(|f| f.contents.contains("Client<S"))
            .count();
        let reexports = files
            .iter()
            .filter(|f| f.contents.contains("pub use crate::"))
            .count();
        assert!(clients + reexports > 0, "case `{case}` generates no client");
    }
}

/// The body of a CLI resource file: everything after the header, module doc and imports.
fn cli_body(contents: &str) -> &str {
    let last_use = contents
        .rfind("\nuse ")
        .expect("a resource file imports its type");
    let after = &contents[last_use + 1..];
    let end_of_use = after.find(";\n").unwrap() + 2;
    after[end_of_use..].trim_start_matches('\n')
}

/// The `kind = "..."` of a struct's `#[kube(...)]`.
fn kind_of(s: &syn::ItemStruct) -> String {
    let kube = s
        .attrs
        .iter()
        .find(|a| a.path().is_ident("kube"))
        .map(|a| quote::ToTokens::to_token_stream(a).to_string())
        .unwrap_or_default();
    kube.split("kind = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned()
}

/// What only the derive writes: its warnings (`const _: () = { #[deprecated(note = ...)] ...
/// };`) and its checks of the types an apply configuration reaches (`struct Reached`), which
/// exist to report a missing `ApplyConfiguration` derive first.
fn is_derive_only(item: &syn::Item) -> bool {
    matches!(item, syn::Item::Const(c) if c.ident == "_" && {
        let expr = quote::ToTokens::to_token_stream(&c.expr).to_string();
        expr.contains("deprecated") || expr.contains("struct Reached")
    })
}

#[test]
fn derive_expands_the_same_client_the_cli_writes() {
    let mut compared = 0;
    for case in CASES {
        let files = generate(case);
        for source in source::load(&case_dir(case).join("input")).unwrap() {
            let ast = syn::parse_file(&source.text).unwrap();
            for item in ast.items {
                let syn::Item::Struct(s) = item else { continue };
                let marked = s.attrs.iter().any(|a| {
                    a.path().is_ident("doc")
                        && quote::ToTokens::to_token_stream(a)
                            .to_string()
                            .contains("+genclient")
                });
                if !marked {
                    continue;
                }
                let tokens = quote::ToTokens::to_token_stream(&s);
                let expanded = kube_codegen_core::derive_gen_client(tokens);
                // The derive's warnings and checks are not part of the client.
                let mut file: syn::File = syn::parse2(expanded).unwrap();
                file.items.retain(|item| !is_derive_only(item));
                let expanded = quote::ToTokens::to_token_stream(&file);
                let derived = kube_codegen_core::emit::format_items(expanded).unwrap();
                let kind = kind_of(&s);
                let file_name = format!("{}.rs", heck_snake(&kind));
                let version = source.relative.parent().and_then(Path::file_name).unwrap();
                let cli = files
                    .iter()
                    .find(|f| f.path.ends_with(Path::new(version).join(&file_name)))
                    .unwrap_or_else(|| panic!("{case}: no CLI file for {kind}"));
                // The CRD function differs by design when the status or nested structs carry
                // markers (the derive sees the spec alone); `crd_markers.rs` compares CRDs.
                let crd_fn = format!("impl {kind} {{\n    /// The CRD of this version");
                let client = |text: &str| text.split(&crd_fn).next().unwrap_or(text).to_owned();
                assert!(derived.contains(&crd_fn), "{case}/{kind}: no CRD function");
                assert_eq!(
                    client(&derived),
                    client(cli_body(&cli.contents)),
                    "{case}/{kind}: derive and CLI differ"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 10, "only {compared} resources compared");
}

fn heck_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The items of generated code that belong to apply configurations, each printed alone,
/// sorted: `XApplyConfiguration` structs and their impls, `impl Apply for X`, `extract_*`.
fn apply_items(tokens: proc_macro2::TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(tokens).expect("generated code parses");
    let mut items: Vec<String> = file
        .items
        .into_iter()
        .filter(|item| match item {
            syn::Item::Struct(s) => s.ident.to_string().ends_with("ApplyConfiguration"),
            syn::Item::Impl(i) => {
                let self_ty = quote::ToTokens::to_token_stream(&i.self_ty).to_string();
                let trait_ = i
                    .trait_
                    .as_ref()
                    .map(|t| quote::ToTokens::to_token_stream(&t.1).to_string())
                    .unwrap_or_default();
                self_ty.ends_with("ApplyConfiguration") || trait_.ends_with("Apply")
            }
            syn::Item::Fn(f) => f.sig.ident.to_string().starts_with("extract_"),
            _ => false,
        })
        .map(|item| {
            kube_codegen_core::emit::format_items(quote::ToTokens::to_token_stream(&item))
                .expect("an item formats")
        })
        .collect();
    items.sort();
    items
}

/// Whether the doc comments of `attrs` say `marker`.
fn says(attrs: &[syn::Attribute], marker: &str) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && quote::ToTokens::to_token_stream(a)
                .to_string()
                .contains(marker)
    })
}

#[test]
fn derive_expands_the_same_apply_configurations_the_cli_writes() {
    let mut compared = 0;
    for case in CASES {
        let files = generate(case);
        for source in source::load(&case_dir(case).join("input")).unwrap() {
            let stem = source
                .relative
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if stem == "mod" {
                continue;
            }
            let version = source.relative.parent().unwrap();
            let cli_path = version
                .join("applyconfigurations")
                .join(format!("{stem}.rs"));
            let Some(cli) = files.iter().find(|f| f.path == cli_path) else {
                continue;
            };
            // What the derives expand for the same source: the kind's from `GenClient` on
            // a spec marked `+kubebuilder:ac:generate=true`, every other struct's and enum's
            // from `ApplyConfiguration`.
            let ast = syn::parse_file(&source.text).unwrap();
            let mut derived = proc_macro2::TokenStream::new();
            for item in &ast.items {
                match item {
                    syn::Item::Struct(s) if says(&s.attrs, "+kubebuilder:ac:generate=true") => {
                        derived.extend(kube_codegen_core::derive_gen_client(
                            quote::ToTokens::to_token_stream(s),
                        ));
                    }
                    syn::Item::Struct(_) | syn::Item::Enum(_) => {
                        derived.extend(kube_codegen_core::derive_apply_configuration(
                            quote::ToTokens::to_token_stream(item),
                        ));
                    }
                    _ => {}
                }
            }
            let cli_items = apply_items(cli.contents.parse().unwrap());
            assert!(
                !cli_items.is_empty(),
                "{case}/{stem}: no apply configurations"
            );
            assert_eq!(
                apply_items(derived),
                cli_items,
                "{case}/{stem}: the derives and the CLI differ"
            );
            compared += 1;
        }
    }
    // The golden kinds in CLI form marked for apply configurations: Planter, and Shed
    // (`no_spec`).
    assert_eq!(compared, 2, "apply configurations compared");
}
