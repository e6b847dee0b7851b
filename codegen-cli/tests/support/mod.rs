//! What the CLI test binaries share: a scratch directory, files in it, and running the
//! binary there. Each test binary uses a part of it.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A directory under the system's temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `kube-codegen-<test binary>-<name>-<pid>`, empty.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "kube-codegen-{}-{name}-{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Writes `root/rel`, creating its directories.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Runs `kube-codegen args` in `cwd`.
pub fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap()
}

/// The command's standard error.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// This repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The target directory the tests were built in (`<target>/debug/kube-codegen`), which
/// crates built by a test share so that only they are compiled.
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// A new library crate `name` outside this workspace, its `src/lib.rs` declaring `apis`: the
/// runtime of this repository by path, and this workspace's dependency features, lock file
/// and dev profile, so the shared target directory already holds its dependencies.
pub fn api_crate(name: &str) -> TempDir {
    let krate = TempDir::new(name);
    write(&krate.0, "Cargo.toml", &manifest(name, &[]));
    fs::copy(repo().join("Cargo.lock"), krate.0.join("Cargo.lock")).unwrap();
    write(
        &krate.0,
        "src/lib.rs",
        "//! A user's API crate.\npub mod apis;\n",
    );
    krate
}

/// The manifest of a crate `name` built by a test: this repository's runtime by path, this
/// workspace's dependency features (k8s-openapi's plus `k8s_features`) and dev profile, so
/// the shared target directory already holds its dependencies.
pub fn manifest(name: &str, k8s_features: &[&str]) -> String {
    let runtime = repo().join("codegen-runtime");
    let k8s_features: String = k8s_features.iter().map(|f| format!(", {f:?}")).collect();
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[dependencies]
kube = {{ version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "derive", "runtime", "unstable-runtime"] }}
k8s-openapi = {{ version = "0.29.0", default-features = false, features = ["std", "latest"{k8s_features}] }}
kube-codegen-runtime = {{ path = {runtime:?} }}
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[workspace]

[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
"#
    )
}
