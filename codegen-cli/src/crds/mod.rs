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

mod kustomize;
mod runner;

use std::path::PathBuf;

use clap::Args;
use kube_codegen_core::diag::Diagnostic;
use kube_codegen_core::emit::files::OutputFile;
use kube_codegen_core::source::SourceFile;
use kube_codegen_core::tree::{ApiTree, TreeResource};
use serde_json::Value;

use crate::error::{Error, Outcome, plural};
use crate::generate::API_MODULE;
use crate::{json, output, paths};
use kustomize::ConversionPatch;

/// Arguments of `kube-codegen crds`.
#[derive(Debug, Args)]
pub struct CrdsArgs {
    /// Directory of API types: `<group>/<version>/*.rs` (for example `src/apis`).
    #[arg(long, value_name = "DIR")]
    input: PathBuf,
    /// Directory to write `<group>_<plural>.yaml` files to (for example `config/crd`).
    ///
    /// YAML files there that start with the kube-codegen header and are no longer generated
    /// are removed; other files are never touched.
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// The Rust module path of the input directory inside its crate; it must be public from
    /// the crate's library (`pub mod apis;`).
    #[arg(long, value_name = "PATH", default_value = API_MODULE)]
    api_module: String,
    /// The crate's `Cargo.toml` (default: the nearest one above `--input`).
    #[arg(long, value_name = "FILE")]
    manifest_path: Option<PathBuf>,
    /// Features of the crate to enable (comma- or space-separated, as with cargo).
    #[arg(long, value_name = "FEATURES")]
    features: Vec<String>,
    /// Enable every feature of the crate.
    #[arg(long)]
    all_features: bool,
    /// Do not enable the crate's default features.
    #[arg(long)]
    no_default_features: bool,
    /// Compare with the files on disk instead of writing; exit 1 and list what drifted.
    #[arg(long)]
    verify: bool,
    /// The Service of the conversion webhook, `NAMESPACE/NAME[:PORT]`: a kind served in
    /// versions whose schemas differ gets `spec.conversion` with `strategy: Webhook`, this
    /// Service and the path `/convert-<group>-<kind>` (the runtime's
    /// `webhook::conversion::path`).
    #[arg(long, value_name = "NAMESPACE/NAME[:PORT]")]
    conversion_service: Option<String>,
    /// Adds cert-manager's `cert-manager.io/inject-ca-from: <NAMESPACE>/<CERTIFICATE>` to the
    /// CRDs that convert through the webhook, so cert-manager fills in their `caBundle`.
    #[arg(
        long,
        value_name = "NAMESPACE/CERTIFICATE",
        requires = "conversion_service"
    )]
    cert_manager_certificate: Option<String>,
    /// Also writes kustomize bases: `<output>/Kustomization` listing the CRD files, and
    /// `DIR/Kustomization`, those CRDs with the conversion of `--conversion-service` (and
    /// `--cert-manager-certificate`) patched in. The CRD files then name no Service, so
    /// `kubectl apply -f <output>/` never points a CRD at a webhook that is not deployed;
    /// `DIR` is deployed with the Service (`kubectl apply -k`, or from `config/default`).
    #[arg(long, value_name = "DIR")]
    kustomize: Option<PathBuf>,
}

impl CrdsArgs {
    /// What the arguments ask for.
    pub fn options(self) -> Options {
        Options {
            input: self.input,
            output: self.output,
            api_module: self.api_module,
            manifest_path: self.manifest_path,
            features: self.features,
            all_features: self.all_features,
            no_default_features: self.no_default_features,
            verify: self.verify,
            conversion_service: self.conversion_service,
            cert_manager_certificate: self.cert_manager_certificate,
            kustomize: self.kustomize,
        }
    }
}

/// What `crds` reads, builds with, writes and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory of API types.
    pub input: PathBuf,
    /// Directory of the CRD manifests.
    pub output: PathBuf,
    /// The Rust module path of `input` inside its crate.
    pub api_module: String,
    /// The crate's `Cargo.toml`; the nearest one above `input` when `None`.
    pub manifest_path: Option<PathBuf>,
    /// Features of the crate to enable.
    pub features: Vec<String>,
    /// Enable every feature of the crate.
    pub all_features: bool,
    /// Do not enable the crate's default features.
    pub no_default_features: bool,
    /// Compare instead of writing.
    pub verify: bool,
    /// `NAMESPACE/NAME[:PORT]` of the conversion webhook's Service, if any.
    pub conversion_service: Option<String>,
    /// `NAMESPACE/CERTIFICATE` of cert-manager's CA injection, if any.
    pub cert_manager_certificate: Option<String>,
    /// The directory of the kustomize base with the conversion patched in, if any; the CRD
    /// files then carry no conversion.
    pub kustomize: Option<PathBuf>,
}

impl Options {
    /// The CRDs of the API types in `input`, written to `output`, with the crate's defaults
    /// and no conversion webhook.
    pub fn new(input: PathBuf, output: PathBuf) -> Self {
        Self {
            input,
            output,
            api_module: API_MODULE.to_owned(),
            manifest_path: None,
            features: Vec::new(),
            all_features: false,
            no_default_features: false,
            verify: false,
            conversion_service: None,
            cert_manager_certificate: None,
            kustomize: None,
        }
    }

    fn reproduce_command(&self) -> String {
        let root = paths::root(&self.output);
        let mut cmd = format!(
            "kube-codegen crds --input {} --output {}",
            paths::shown(&self.input, &root),
            paths::shown(&self.output, &root)
        );
        if self.api_module != API_MODULE {
            cmd.push_str(&format!(" --api-module {}", self.api_module));
        }
        if let Some(service) = &self.conversion_service {
            cmd.push_str(&format!(" --conversion-service {service}"));
        }
        if let Some(certificate) = &self.cert_manager_certificate {
            cmd.push_str(&format!(" --cert-manager-certificate {certificate}"));
        }
        if let Some(dir) = &self.kustomize {
            cmd.push_str(&format!(" --kustomize {}", paths::shown(dir, &root)));
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

fn service(text: &str) -> Result<Service, Error> {
    let bad = || {
        Error::Refused(format!(
            "`--conversion-service {text}` is `NAMESPACE/NAME[:PORT]`"
        ))
    };
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

/// A CRD whose served versions' schemas differ converts through a webhook: its
/// `spec.conversion` (and cert-manager's annotation) when `service` is given; a warning when
/// it is not (with `strategy: None` kube-apiserver only rewrites `apiVersion`, so an object
/// read in another version keeps the stored shape).
fn conversion(
    crd: &Value,
    service: Option<&Service>,
    certificate: Option<&str>,
) -> Option<Result<ConversionPatch, String>> {
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array)?;
    let schemas: Vec<&Value> = versions
        .iter()
        .filter_map(|v| v.pointer("/schema/openAPIV3Schema"))
        .collect();
    if schemas.len() < 2 || schemas.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    let text = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or("");
    let (group, kind) = (text("/spec/group"), text("/spec/names/kind"));
    let Some(service) = service else {
        return Some(Err(format!(
            "the versions of {kind} have different schemas, but without a conversion webhook kube-apiserver only rewrites `apiVersion`; give `--conversion-service NAMESPACE/NAME` to convert through one"
        )));
    };
    let mut reference = serde_json::json!({
        "namespace": service.namespace,
        "name": service.name,
        "path": format!("/convert-{}-{}", group.replace('.', "-"), kind.to_ascii_lowercase()),
    });
    if let Some(port) = service.port {
        reference["port"] = Value::from(port);
    }
    Some(Ok(ConversionPatch {
        crd: text("/metadata/name").to_owned(),
        conversion: serde_json::json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": reference},
            },
        }),
        annotations: certificate.map(|c| serde_json::json!({"cert-manager.io/inject-ca-from": c})),
    }))
}

/// Writes `patch` into `crd` itself (no `--kustomize`).
fn patch_in(crd: &mut Value, patch: ConversionPatch) {
    crd["spec"]["conversion"] = patch.conversion;
    if let Some(Value::Object(annotations)) = patch.annotations {
        for (key, value) in annotations {
            crd["metadata"]["annotations"][key] = value;
        }
    }
}

/// Builds the crate's CRDs, checks them, and writes (or verifies) one file per kind; the
/// runner's progress and the CRDs' warnings are printed as they come.
pub fn run(options: &Options) -> Result<Outcome, Error> {
    let conversion_service = options
        .conversion_service
        .as_deref()
        .map(service)
        .transpose()?;
    let files = kube_codegen_core::source::load(&options.input)
        .map_err(kube_codegen_core::GenerateError::Io)?;
    let Some(rest) = options.api_module.strip_prefix("crate::") else {
        return Err(Error::Refused(format!(
            "`--api-module {}` must start with `crate::`",
            options.api_module
        )));
    };
    let krate = runner::locate(options)?;
    let module = format!("{}::{rest}", krate.lib);
    let (tree, main_rs) = kube_codegen_core::crd_runner(&files, &module)?;
    let kinds = kinds(&tree);
    let results = if kinds.is_empty() {
        Vec::new()
    } else {
        let manifest = runner::write_runner(&krate, options, &main_rs)?;
        runner::run_runner(&krate, &manifest, &module)?
    };
    if results.len() != kinds.len() {
        return Err(Error::Failed(format!(
            "the CRD runner reported {} CRDs for {} kinds (a bug in kube-codegen)",
            results.len(),
            kinds.len()
        )));
    }
    let command = options.reproduce_command();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut patches = Vec::new();
    for (resources, mut result) in kinds.iter().zip(results) {
        if let Some(crd) = result.get_mut("crd") {
            match conversion(
                crd,
                conversion_service.as_ref(),
                options.cert_manager_certificate.as_deref(),
            ) {
                None => {}
                Some(Err(warning)) => {
                    let name = crd.pointer("/metadata/name").and_then(Value::as_str);
                    eprintln!("warning: {}: {warning}", name.unwrap_or(""));
                }
                Some(Ok(patch)) if options.kustomize.is_some() => patches.push(patch),
                Some(Ok(patch)) => patch_in(crd, patch),
            }
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
        return Err(Error::Diagnostics {
            rendered: errors,
            stopped: format!("no CRD written: {n} error{}", plural(n)),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(dir) = &options.kustomize {
        let based = kustomize::with_conversion(dir, &options.output, &patches, &command)?;
        let base = kustomize::base(&out, &command);
        out.push(base);
        output::write_or_verify(dir, &[based], output::YAML, options.verify, &command)?;
    }
    let summary = output::write_or_verify(
        &options.output,
        &out,
        output::YAML,
        options.verify,
        &command,
    )?;
    Ok(Outcome::new(if kinds.is_empty() {
        format!(
            "kube-codegen: `{}` defines no CRDs ({summary})",
            options.input.display()
        )
    } else {
        summary
    }))
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
        let yaml = serde_saphyr::to_string(&json::sorted(crd))
            .map_err(|e| vec![(Vec::new(), None, format!("cannot write YAML: {e}"))])?;
        let header = format!(
            "{}\n# Regenerate with: {command}\n",
            output::YAML_HEADER_LINE
        );
        let warnings = json::strings(result.get("warnings"))
            .map(str::to_owned)
            .collect();
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
                let path = json::strings(p.get("path")).map(str::to_owned).collect();
                let key = p.get("key").and_then(Value::as_str).map(str::to_owned);
                let message = p.get("message").and_then(Value::as_str).unwrap_or("");
                (path, key, format!("CRD {name}: {message}"))
            })
            .collect());
    }
    let message = result.get("error").and_then(Value::as_str).unwrap_or("");
    Err(vec![(Vec::new(), None, message.to_owned())])
}

/// A problem shown at the marker behind it, or at the kind when no marker is; without a
/// final newline.
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
        (None, None) => return format!("error: {message}"),
    };
    let diagnostic = Diagnostic {
        span,
        doc_range,
        message: message.clone(),
    };
    match files.get(file) {
        Some(f) => {
            let rendered = kube_codegen_core::render::render(f, &diagnostic);
            rendered.strip_suffix('\n').unwrap_or(&rendered).to_owned()
        }
        None => format!("error: {message}"),
    }
}
