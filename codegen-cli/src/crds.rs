//! `kube-codegen crds`: the CRD manifests of a crate's API tree, one `<group>_<plural>.yaml`
//! per kind.
//!
//! The schemas come from the compiled types (kube's `crd()` through schemars), so the command
//! builds a small runner against the user's crate: a binary crate under
//! `<target-dir>/kube-codegen/crds/<package>/` that depends on it by path, with the user's
//! `Cargo.lock`, profiles and features, and whose `main` builds every CRD with the markers
//! this command read from the sources. The runner checks each CRD as kube-apiserver would
//! and prints the results as JSON; problems are shown at the marker that caused them.
//! Nothing is written unless every CRD is good.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::Args;
use kube_codegen_core::diag::Diagnostic;
use kube_codegen_core::emit::files::OutputFile;
use kube_codegen_core::source::SourceFile;
use kube_codegen_core::tree::{ApiTree, TreeResource};
use serde_json::Value;

use crate::output;

#[derive(Debug, Args)]
pub struct CrdsArgs {
    /// Directory of API types: `<group>/<version>/*.rs` (for example `src/apis`).
    #[arg(long, value_name = "DIR")]
    pub input: PathBuf,
    /// Directory to write `<group>_<plural>.yaml` files to (for example `config/crd`).
    ///
    /// YAML files there that start with the kube-codegen header and are no longer generated
    /// are removed; other files are never touched.
    #[arg(long, value_name = "DIR")]
    pub output: PathBuf,
    /// The Rust module path of the input directory inside its crate; it must be public from
    /// the crate's library (`pub mod apis;`).
    #[arg(long, value_name = "PATH", default_value = "crate::apis")]
    pub api_module: String,
    /// The crate's `Cargo.toml` (default: the nearest one above `--input`).
    #[arg(long, value_name = "FILE")]
    pub manifest_path: Option<PathBuf>,
    /// Features of the crate to enable (comma- or space-separated, as with cargo).
    #[arg(long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Enable every feature of the crate.
    #[arg(long)]
    pub all_features: bool,
    /// Do not enable the crate's default features.
    #[arg(long)]
    pub no_default_features: bool,
    /// Compare with the files on disk instead of writing; exit 1 and list what drifted.
    #[arg(long)]
    pub verify: bool,
    /// The Service of the conversion webhook, `NAMESPACE/NAME[:PORT]`: a kind served in
    /// versions whose schemas differ gets `spec.conversion` with `strategy: Webhook`, this
    /// Service and the path `/convert-<group>-<kind>` (the runtime's
    /// `webhook::conversion::path`).
    #[arg(long, value_name = "NAMESPACE/NAME[:PORT]")]
    pub conversion_service: Option<String>,
    /// Adds cert-manager's `cert-manager.io/inject-ca-from: <NAMESPACE>/<CERTIFICATE>` to the
    /// CRDs that convert through the webhook, so cert-manager fills in their `caBundle`.
    #[arg(
        long,
        value_name = "NAMESPACE/CERTIFICATE",
        requires = "conversion_service"
    )]
    pub cert_manager_certificate: Option<String>,
}

impl CrdsArgs {
    fn reproduce_command(&self) -> String {
        let root = crate::paths::root(&self.output);
        let mut cmd = format!(
            "kube-codegen crds --input {} --output {}",
            crate::paths::shown(&self.input, &root),
            crate::paths::shown(&self.output, &root)
        );
        if self.api_module != "crate::apis" {
            cmd.push_str(&format!(" --api-module {}", self.api_module));
        }
        if let Some(service) = &self.conversion_service {
            cmd.push_str(&format!(" --conversion-service {service}"));
        }
        if let Some(certificate) = &self.cert_manager_certificate {
            cmd.push_str(&format!(" --cert-manager-certificate {certificate}"));
        }
        cmd
    }
}

/// `NAMESPACE/NAME[:PORT]`.
struct Service {
    namespace: String,
    name: String,
    port: Option<u16>,
}

fn service(text: &str) -> Result<Service, String> {
    let bad = || format!("error: `--conversion-service {text}` is `NAMESPACE/NAME[:PORT]`");
    let (namespace, rest) = text.split_once('/').ok_or_else(bad)?;
    let (name, port) = match rest.split_once(':') {
        Some((name, port)) => (name, Some(port.parse::<u16>().map_err(|_| bad())?)),
        None => (rest, None),
    };
    if namespace.is_empty() || name.is_empty() || name.contains('/') {
        return Err(bad());
    }
    Ok(Service {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        port,
    })
}

/// A CRD whose served versions' schemas differ converts through a webhook: `spec.conversion`
/// when `service` is given; a warning when it is not (with `strategy: None` kube-apiserver
/// only rewrites `apiVersion`, so an object read in another version keeps the stored shape).
fn conversion(
    crd: &mut Value,
    service: Option<&Service>,
    certificate: Option<&str>,
) -> Option<String> {
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array)?;
    let schemas: Vec<&Value> = versions
        .iter()
        .filter_map(|v| v.pointer("/schema/openAPIV3Schema"))
        .collect();
    if schemas.len() < 2 || schemas.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let kind = crd
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(service) = service else {
        return Some(format!(
            "the versions of {kind} have different schemas, but without a conversion webhook kube-apiserver only rewrites `apiVersion`; give `--conversion-service NAMESPACE/NAME` to convert through one"
        ));
    };
    let mut reference = serde_json::json!({
        "namespace": service.namespace,
        "name": service.name,
        "path": format!("/convert-{}-{}", group.replace('.', "-"), kind.to_ascii_lowercase()),
    });
    if let Some(port) = service.port {
        reference["port"] = Value::from(port);
    }
    crd["spec"]["conversion"] = serde_json::json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"service": reference},
        },
    });
    if let Some(certificate) = certificate {
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] = Value::from(certificate);
    }
    None
}

/// The crate the API tree belongs to, as `cargo metadata` describes it.
struct Crate {
    /// Package name.
    name: String,
    /// The library's name in Rust paths.
    lib: String,
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

pub fn run(args: &CrdsArgs) -> ExitCode {
    output::report(crds(args))
}

fn crds(args: &CrdsArgs) -> Result<String, String> {
    let files = kube_codegen_core::source::load(&args.input).map_err(|e| format!("error: {e}"))?;
    let Some(rest) = args.api_module.strip_prefix("crate::") else {
        return Err(format!(
            "error: `--api-module {}` must start with `crate::`",
            args.api_module
        ));
    };
    let krate = locate(args)?;
    let module = format!("{}::{rest}", krate.lib);
    let (tree, main_rs) =
        kube_codegen_core::crd_runner(&files, &module).map_err(|e| e.to_string())?;
    let kinds = kinds(&tree);
    let results = if kinds.is_empty() {
        Vec::new()
    } else {
        let runner = write_runner(&krate, args, &main_rs)?;
        run_runner(&krate, &runner, &module)?
    };
    if results.len() != kinds.len() {
        return Err(format!(
            "error: the CRD runner reported {} CRDs for {} kinds (a bug in kube-codegen)",
            results.len(),
            kinds.len()
        ));
    }
    let command = args.reproduce_command();
    let conversion_service = args
        .conversion_service
        .as_deref()
        .map(service)
        .transpose()?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (resources, mut result) in kinds.iter().zip(results) {
        if let Some(crd) = result.get_mut("crd")
            && let Some(warning) = conversion(
                crd,
                conversion_service.as_ref(),
                args.cert_manager_certificate.as_deref(),
            )
        {
            let name = crd
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            eprintln!("warning: {name}: {warning}");
        }
        match crd_file(&result, &command) {
            Ok((file, warnings)) => {
                for w in warnings {
                    eprintln!("warning: {}: {w}", file.path.display());
                }
                out.push(file);
            }
            Err(problems) => {
                errors.extend(
                    problems
                        .iter()
                        .map(|p| locate_problem(&files, resources, p)),
                );
            }
        }
    }
    if !errors.is_empty() {
        let n = errors.len();
        return Err(format!(
            "{}error: no CRD written: {n} error{}",
            errors.concat(),
            if n == 1 { "" } else { "s" }
        ));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    let summary = output::write_or_verify(&args.output, &out, output::YAML, args.verify, &command)?;
    Ok(if kinds.is_empty() {
        format!(
            "kube-codegen: `{}` defines no CRDs ({summary})",
            args.input.display()
        )
    } else {
        summary
    })
}

/// The resources of each CRD, in the runner's order (by group, then kind).
fn kinds(tree: &ApiTree) -> Vec<Vec<&TreeResource>> {
    let mut by_kind: std::collections::BTreeMap<(&str, &str), Vec<&TreeResource>> =
        Default::default();
    for c in &tree.crds {
        by_kind
            .entry((c.group.as_str(), c.resource.resource.kind.as_str()))
            .or_default()
            .push(&c.resource);
    }
    by_kind.into_values().collect()
}

/// What the runner said of one CRD: the file to write and its warnings, or the problems.
type Problems = Vec<(Vec<String>, Option<String>, String)>;

fn crd_file(result: &Value, command: &str) -> Result<(OutputFile, Vec<String>), Problems> {
    if let Some(crd) = result.get("crd") {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("");
        let yaml = serde_saphyr::to_string(&sorted(crd))
            .map_err(|e| vec![(Vec::new(), None, format!("cannot write YAML: {e}"))])?;
        let header = format!(
            "{}\n# Regenerate with: {command}\n",
            output::YAML_HEADER_LINE
        );
        let warnings = result
            .get("warnings")
            .and_then(Value::as_array)
            .map(|w| {
                w.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        return Ok((
            OutputFile {
                path: PathBuf::from(format!("{group}_{plural}.yaml")),
                contents: format!("{header}{yaml}"),
            },
            warnings,
        ));
    }
    if let Some(problems) = result.get("problems").and_then(Value::as_array) {
        let name = result.get("name").and_then(Value::as_str).unwrap_or("");
        return Err(problems
            .iter()
            .map(|p| {
                let path = p
                    .get("path")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let key = p.get("key").and_then(Value::as_str).map(str::to_owned);
                let message = p.get("message").and_then(Value::as_str).unwrap_or("");
                (path, key, format!("CRD {name}: {message}"))
            })
            .collect());
    }
    let message = result.get("error").and_then(Value::as_str).unwrap_or("");
    Err(vec![(Vec::new(), None, message.to_owned())])
}

/// A problem shown at the marker behind it, or at the kind when no marker is.
fn locate_problem(
    files: &[SourceFile],
    resources: &[&TreeResource],
    (path, key, message): &(Vec<String>, Option<String>, String),
) -> String {
    let origin = resources.iter().find_map(|tr| {
        let exact = tr
            .origins
            .iter()
            .find(|o| &o.path == path && key.is_some() && &o.key == key);
        let same_path = || {
            tr.origins
                .iter()
                .find(|o| !path.is_empty() && &o.path == path)
        };
        exact.or_else(same_path).map(|o| (tr.file, o.loc.clone()))
    });
    let (file, span, doc_range) = match (origin, resources.first()) {
        (Some((file, loc)), _) => (file, loc.span, loc.doc_range),
        (None, Some(tr)) => (tr.file, tr.resource.span, None),
        (None, None) => return format!("error: {message}\n"),
    };
    let diagnostic = Diagnostic {
        span,
        doc_range,
        message: message.clone(),
    };
    match files.get(file) {
        Some(f) => kube_codegen_core::render::render(f, &diagnostic),
        None => format!("error: {message}\n"),
    }
}

/// The same JSON with every object's keys in sorted order, so the YAML does not depend on
/// how `serde_json` was built.
pub(crate) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
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

fn locate(args: &CrdsArgs) -> Result<Crate, String> {
    let manifest = match &args.manifest_path {
        Some(m) => m.clone(),
        None => find_manifest(&args.input).ok_or_else(|| {
            format!(
                "error: no Cargo.toml with a [package] above `{}`; pass --manifest-path",
                args.input.display()
            )
        })?,
    };
    let manifest = manifest
        .canonicalize()
        .map_err(|e| format!("error: cannot read `{}`: {e}", manifest.display()))?;
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("error: cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "error: `cargo metadata` failed for `{}` (see above)",
            manifest.display()
        ));
    }
    let meta: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("error: cannot read `cargo metadata` output: {e}"))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let package = packages
        .iter()
        .find(|p| Path::new(&text(p, "manifest_path")) == manifest)
        .ok_or_else(|| format!("error: `{}` is not a package manifest", manifest.display()))?;
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
        .ok_or_else(|| format!("error: `kube-codegen crds` builds against the library of `{name}`, which has none; move the API types into a library (`src/lib.rs` with `pub mod apis;`)"))?;
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
    let runtime = dep("kube-codegen-runtime")
        .map(|p| dependency_line(&p, ", features = [\"cel\"]"))
        .ok_or_else(|| format!("error: `{name}` does not depend on kube-codegen-runtime, which the CRDs are built with; add it to its [dependencies]"))?;
    let declared = package["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| text(d, "name") == "k8s-openapi");
    let picks_version = declared.is_some_and(|d| {
        d["features"].as_array().is_some_and(|f| {
            f.iter()
                .filter_map(Value::as_str)
                .any(|f| f.starts_with("v1_") || f == "latest" || f == "earliest")
        })
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
fn write_runner(krate: &Crate, args: &CrdsArgs, main_rs: &str) -> Result<PathBuf, String> {
    let dir = krate
        .target_dir
        .join("kube-codegen")
        .join("crds")
        .join(&krate.name);
    let mut features: Vec<String> = if args.all_features {
        krate.all_features.clone()
    } else {
        args.features
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
        default = !args.no_default_features,
        features = features.join(", "),
        runtime = krate.runtime,
    );
    if let Some(k8s) = &krate.k8s_openapi {
        manifest.push_str(&format!("k8s-openapi = {k8s}\n"));
    }
    manifest.push_str("\n# A workspace of its own, whatever directory it is in.\n[workspace]\n\n");
    manifest.push_str(&profiles(&root));
    let write = |path: PathBuf, text: &str| -> Result<(), String> {
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(());
        }
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))
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
fn run_runner(krate: &Crate, manifest: &Path, module: &str) -> Result<Vec<Value>, String> {
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
        .map_err(|e| format!("error: cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "error: could not build or run the CRDs of `{}` (cargo's errors above): its library must build, and `{module}` must be reachable from outside it (`pub mod`)",
            krate.name,
        ));
    }
    let value: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("error: cannot read the CRD runner's output: {e}"))?;
    value
        .as_array()
        .cloned()
        .ok_or_else(|| "error: the CRD runner's output is not a list".to_owned())
}
