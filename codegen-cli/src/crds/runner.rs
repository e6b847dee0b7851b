//! The runner crate of `kube-codegen crds`: where the user's crate is (`cargo metadata`),
//! a small binary crate under `<target-dir>/kube-codegen/crds/<package>/` that depends on it
//! by path with the user's `Cargo.lock`, profiles and features, and running it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::Options;
use crate::error::{Error, Op};
use crate::json;

/// The crate the API tree belongs to, as `cargo metadata` describes it.
pub(super) struct Crate {
    /// Package name.
    pub(super) name: String,
    /// The library's name in Rust paths.
    pub(super) lib: String,
    manifest_dir: PathBuf,
    workspace_root: PathBuf,
    target_dir: PathBuf,
    /// `kube-codegen-runtime` as a dependency line for the runner.
    runtime: String,
    /// `k8s-openapi` with a version feature, when the crate does not pick one.
    k8s_openapi: Option<String>,
    /// Every feature the crate declares (for `--all-features`).
    all_features: Vec<String>,
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn cannot_run_cargo(source: std::io::Error) -> Error {
    Error::Spawn {
        program: "cargo",
        source,
    }
}

/// The nearest `Cargo.toml` with a `[package]` at or above `dir`.
fn find_manifest(dir: &Path) -> Option<PathBuf> {
    let start = dir.canonicalize().ok()?;
    start.ancestors().find_map(|d| {
        let manifest = d.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        text.lines()
            .any(|l| l.trim() == "[package]")
            .then_some(manifest)
    })
}

/// What `cargo metadata` says of the package of `manifest` and its workspace (cargo's own
/// errors go to stderr).
fn metadata(manifest: &Path) -> Result<Value, Error> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(manifest)
        .stderr(Stdio::inherit())
        .output()
        .map_err(cannot_run_cargo)?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "`cargo metadata` failed for `{}` (see above)",
            manifest.display()
        )));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Failed(format!("cannot read `cargo metadata` output: {e}")))
}

/// The crate of `options.input` (or `options.manifest_path`), with what the runner needs
/// of it.
pub(super) fn locate(options: &Options) -> Result<Crate, Error> {
    let manifest = match &options.manifest_path {
        Some(m) => m.clone(),
        None => find_manifest(&options.input).ok_or_else(|| {
            Error::Refused(format!(
                "no Cargo.toml with a [package] above `{}`; pass --manifest-path",
                options.input.display()
            ))
        })?,
    };
    let manifest = manifest
        .canonicalize()
        .map_err(Error::at(Op::Read, &manifest))?;
    let meta = metadata(&manifest)?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let package = packages
        .iter()
        .find(|p| Path::new(&text(p, "manifest_path")) == manifest)
        .ok_or_else(|| {
            Error::Refused(format!(
                "`{}` is not a package manifest",
                manifest.display()
            ))
        })?;
    let name = text(package, "name");
    let lib = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "rlib"))
        })
        .map(|t| text(t, "name").replace('-', "_"))
        .ok_or_else(|| Error::Refused(format!("`kube-codegen crds` builds against the library of `{name}`, which has none; move the API types into a library (`src/lib.rs` with `pub mod apis;`)")))?;
    // The versions the crate resolved, so the runner builds against the same ones.
    let id = text(package, "id");
    let node = meta["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| text(n, "id") == id)
        .cloned()
        .unwrap_or(Value::Null);
    let dep = |dep_name: &str| {
        node["deps"].as_array().into_iter().flatten().find_map(|d| {
            let pkg = packages.iter().find(|p| text(p, "id") == text(d, "pkg"))?;
            (text(pkg, "name") == dep_name).then(|| pkg.clone())
        })
    };
    let dependency_line = |pkg: &Value, extra: &str| {
        if pkg["source"].is_null() {
            let dir = Path::new(&text(pkg, "manifest_path"))
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            format!(
                "{{ path = {}{extra} }}",
                toml_string(&dir.to_string_lossy())
            )
        } else {
            format!("{{ version = \"={}\"{extra} }}", text(pkg, "version"))
        }
    };
    // With `cel`, the runner reviews rules as the API server will: compile, types and cost.
    // Without the default `derive`: the runner calls no derive, and a crate that does turns
    // it on itself.
    let runtime = dep("kube-codegen-runtime")
        .map(|p| dependency_line(&p, ", default-features = false, features = [\"cel\"]"))
        .ok_or_else(|| Error::Refused(format!("`{name}` does not depend on kube-codegen-runtime, which the CRDs are built with; add it to its [dependencies]")))?;
    let declared = package["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| text(d, "name") == "k8s-openapi");
    let picks_version = declared.is_some_and(|d| {
        json::strings(d.get("features"))
            .any(|f| f.starts_with("v1_") || f == "latest" || f == "earliest")
    });
    let k8s_openapi = if picks_version {
        None
    } else {
        dep("k8s-openapi").map(|p| dependency_line(&p, ", features = [\"latest\"]"))
    };
    let all_features = package["features"]
        .as_object()
        .map(|f| f.keys().cloned().collect())
        .unwrap_or_default();
    Ok(Crate {
        name,
        lib,
        manifest_dir: manifest.parent().map(Path::to_path_buf).unwrap_or_default(),
        workspace_root: PathBuf::from(text(&meta, "workspace_root")),
        target_dir: PathBuf::from(text(&meta, "target_directory")),
        runtime,
        k8s_openapi,
        all_features,
    })
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `[profile...]` tables of the workspace's root manifest, so that the runner's build
/// reuses the artifacts of the user's own builds in the shared target directory.
fn profiles(root_manifest: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in root_manifest.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            keep = t.starts_with("[profile");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Writes the runner crate (only what changed, so reruns rebuild nothing) and returns its
/// manifest.
pub(super) fn write_runner(
    krate: &Crate,
    options: &Options,
    main_rs: &str,
) -> Result<PathBuf, Error> {
    let dir = krate
        .target_dir
        .join("kube-codegen")
        .join("crds")
        .join(&krate.name);
    let mut features: Vec<String> = if options.all_features {
        krate.all_features.clone()
    } else {
        options
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect()
    };
    features.sort();
    features.dedup();
    let features: Vec<String> = features.iter().map(|f| toml_string(f)).collect();
    let root = std::fs::read_to_string(krate.workspace_root.join("Cargo.toml")).unwrap_or_default();
    let mut manifest = format!(
        "# Written by kube-codegen crds: builds the CRDs of `{name}`. Rewritten on every run.\n\
         [package]\nname = \"kube-codegen-crds-runner\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{lib} = {{ package = {pkg}, path = {path}, default-features = {default}, features = [{features}] }}\n\
         kube-codegen-runtime = {runtime}\n",
        name = krate.name,
        lib = krate.lib,
        pkg = toml_string(&krate.name),
        path = toml_string(&krate.manifest_dir.to_string_lossy()),
        default = !options.no_default_features,
        features = features.join(", "),
        runtime = krate.runtime,
    );
    if let Some(k8s) = &krate.k8s_openapi {
        manifest.push_str(&format!("k8s-openapi = {k8s}\n"));
    }
    manifest.push_str("\n# A workspace of its own, whatever directory it is in.\n[workspace]\n\n");
    manifest.push_str(&profiles(&root));
    let write = |path: PathBuf, text: &str| -> Result<(), Error> {
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(());
        }
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(Error::at(Op::Write, &path))
    };
    write(dir.join("Cargo.toml"), &manifest)?;
    write(dir.join("src/main.rs"), main_rs)?;
    // Start from the user's lock file, so the runner resolves the versions they build with.
    if let Ok(lock) = std::fs::read_to_string(krate.workspace_root.join("Cargo.lock"))
        && std::fs::read_to_string(dir.join("Cargo.lock.source"))
            .ok()
            .as_deref()
            != Some(lock.as_str())
    {
        write(dir.join("Cargo.lock"), &lock)?;
        write(dir.join("Cargo.lock.source"), &lock)?;
    }
    Ok(dir.join("Cargo.toml"))
}

/// Builds and runs the runner; its stdout is one JSON array, one entry per CRD.
pub(super) fn run_runner(
    krate: &Crate,
    manifest: &Path,
    module: &str,
) -> Result<Vec<Value>, Error> {
    eprintln!(
        "kube-codegen: building the CRDs of `{}` (the first run compiles the crate and its dependencies)",
        krate.name
    );
    let out = cargo()
        .args(["run", "--quiet", "--manifest-path"])
        .arg(manifest)
        .arg("--target-dir")
        .arg(&krate.target_dir)
        .current_dir(&krate.workspace_root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(cannot_run_cargo)?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "could not build or run the CRDs of `{}` (cargo's errors above): its library must build, and `{module}` must be reachable from outside it (`pub mod`)",
            krate.name,
        )));
    }
    let value: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Failed(format!("cannot read the CRD runner's output: {e}")))?;
    value
        .as_array()
        .cloned()
        .ok_or_else(|| Error::Failed("the CRD runner's output is not a list".to_owned()))
}
