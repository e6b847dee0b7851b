//! The built-in apply configurations in `src/applyconfigurations`, and the features of
//! `Cargo.toml` that enable them, are what kube-codegen writes for its table of built-in
//! kinds now. `hack/update-codegen.sh` refreshes them
//! (`UPDATE_GOLDEN=1 cargo test -p kube-codegen-runtime --test shipped_applyconfigurations`);
//! `hack/verify-codegen.sh` and `cargo test` fail on drift, without writing.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kube_codegen_core::emit::shipped;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files under `dir`, by path relative to it.
fn read_tree(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_tree(&path, base, out);
        } else if let (Ok(text), Ok(relative)) =
            (fs::read_to_string(&path), path.strip_prefix(base))
        {
            out.insert(relative.to_owned(), text);
        }
    }
}

#[test]
fn shipped_apply_configurations_are_current() {
    let wanted = shipped::shipped_files().unwrap_or_else(|e| panic!("{e}"));
    let dir = crate_dir().join("src/applyconfigurations");
    let manifest = crate_dir().join("Cargo.toml");
    let cargo = fs::read_to_string(&manifest).unwrap();
    let cargo_wanted =
        shipped::with_features(&cargo, &wanted.features).unwrap_or_else(|e| panic!("{e}"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = fs::remove_dir_all(&dir);
        for f in &wanted.files {
            let path = dir.join(&f.path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, &f.contents).unwrap();
        }
        if cargo_wanted != cargo {
            fs::write(&manifest, cargo_wanted).unwrap();
        }
        return;
    }
    let mut failures = Vec::new();
    let mut on_disk = BTreeMap::new();
    read_tree(&dir, &dir, &mut on_disk);
    for f in &wanted.files {
        match on_disk.remove(&f.path) {
            None => failures.push(format!("missing {}", f.path.display())),
            Some(text) if text != f.contents => {
                failures.push(format!("differs {}", f.path.display()))
            }
            Some(_) => {}
        }
    }
    failures.extend(on_disk.keys().map(|p| format!("stale {}", p.display())));
    if cargo_wanted != cargo {
        failures
            .push("differs Cargo.toml (the features of the built-in apply configurations)".into());
    }
    assert!(
        failures.is_empty(),
        "codegen-runtime's built-in apply configurations are not what kube-codegen writes:\n  {}\nto fix, run: hack/update-codegen.sh",
        failures.join("\n  ")
    );
}
