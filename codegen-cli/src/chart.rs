//! `kube-codegen chart`: a Helm chart rendered from the same objects as a kustomize overlay
//! (`kubectl kustomize config/default`), as kubebuilder's helm plugin does: `Chart.yaml`,
//! `values.yaml` and one template per object, with only plain value substitutions (the
//! namespace becomes `.Release.Namespace`; the manager's image and replicas come from the
//! values; the overlay's Namespace object is left to `helm install --create-namespace`).
//! With `--verify` it writes nothing and fails when the chart on disk differs.

use std::path::PathBuf;
use std::process::Command;

use clap::Args;
use kube_codegen_core::emit::files::OutputFile;
use serde_json::Value;

use crate::error::{Error, Outcome};
use crate::output;

/// The arguments of `chart`.
#[derive(Debug, Args)]
pub struct ChartArgs {
    /// The kustomize overlay the chart is rendered from (`kubectl kustomize DIR`).
    #[arg(long, value_name = "DIR", default_value = "config/default")]
    config: PathBuf,
    /// The chart's directory (`charts/<name>`).
    #[arg(long, value_name = "DIR")]
    output: PathBuf,
    /// The chart's name, and the manager Deployment's.
    #[arg(long)]
    name: String,
    /// The namespace the overlay installs into; in the chart, the release's.
    #[arg(long)]
    namespace: String,
    /// Only check that the chart on disk is what would be written.
    #[arg(long)]
    verify: bool,
}

impl ChartArgs {
    /// The options these arguments give.
    pub fn options(self) -> Options {
        Options {
            config: self.config,
            output: self.output,
            name: self.name,
            namespace: self.namespace,
            verify: self.verify,
        }
    }
}

/// What `chart` renders, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kustomize overlay.
    pub config: PathBuf,
    /// The chart's directory.
    pub output: PathBuf,
    /// The chart's (and the manager's) name.
    pub name: String,
    /// The overlay's namespace.
    pub namespace: String,
    /// Only check.
    pub verify: bool,
}

/// The expression each placeholder of the rendered objects becomes.
const RELEASE_NAMESPACE: &str = "{{ .Release.Namespace }}";
const IMAGE: &str = "{{ .Values.image.repository }}:{{ .Values.image.tag }}";
const PULL_POLICY: &str = "{{ .Values.image.pullPolicy }}";
/// An integer cannot hold an expression until the text is written: this stands in for it.
const REPLICAS_SENTINEL: &str = "__KUBE_CODEGEN_REPLICAS__";
const REPLICAS: &str = "{{ .Values.replicas }}";

/// Renders the overlay with kubectl and writes (or verifies) the chart.
pub fn run(options: &Options) -> Result<Outcome, Error> {
    let objects = kustomize(options)?;
    let files = files(options, objects)?;
    let command = format!(
        "kube-codegen chart --config {} --output {} --name {} --namespace {}",
        options.config.display(),
        options.output.display(),
        options.name,
        options.namespace
    );
    let summary = output::write_or_verify(
        &options.output,
        &files,
        output::YAML,
        options.verify,
        &command,
    )?;
    Ok(Outcome::new(summary))
}

/// The objects of `kubectl kustomize <config>` (`KUBECTL` names kubectl).
fn kustomize(options: &Options) -> Result<Vec<Value>, Error> {
    let kubectl = std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let out = Command::new(kubectl)
        .arg("kustomize")
        .arg(&options.config)
        .output()
        .map_err(|source| Error::Spawn {
            program: "kubectl",
            source,
        })?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "`kubectl kustomize {}` failed: {}",
            options.config.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .map_err(|e| Error::Failed(format!("kubectl kustomize wrote YAML we cannot read: {e}")))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// The chart's files: `Chart.yaml`, `values.yaml` and a template per object.
fn files(options: &Options, objects: Vec<Value>) -> Result<Vec<OutputFile>, Error> {
    // The same wherever the crate is: no paths.
    let header = format!(
        "{}\n# Rendered from the kustomize overlay by `kube-codegen chart` (hack/update-codegen.sh).\n",
        output::YAML_HEADER_LINE
    );
    let mut image = (
        options.name.clone(),
        "latest".to_owned(),
        "IfNotPresent".to_owned(),
    );
    let mut replicas = 1;
    let mut out = Vec::new();
    for mut object in objects {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if kind == "Namespace" && name == options.namespace {
            continue;
        }
        substitute(&mut object, &options.namespace)?;
        if kind == "Deployment" && name == options.name {
            manager_values(&mut object, &mut image, &mut replicas);
        }
        let yaml = serde_saphyr::to_string(&object)
            .map_err(|e| Error::Failed(format!("cannot write {kind} {name} as YAML: {e}")))?;
        let yaml = [
            format!("'{REPLICAS_SENTINEL}'"),
            format!("\"{REPLICAS_SENTINEL}\""),
            REPLICAS_SENTINEL.to_owned(),
        ]
        .iter()
        .fold(yaml, |yaml, sentinel| yaml.replace(sentinel, REPLICAS));
        out.push(OutputFile {
            path: PathBuf::from("templates").join(format!(
                "{}-{}.yaml",
                kind.to_ascii_lowercase(),
                name
            )),
            contents: format!("{header}{yaml}"),
        });
    }
    let (repository, tag, pull_policy) = image;
    out.push(OutputFile {
        path: PathBuf::from("Chart.yaml"),
        contents: format!(
            "{header}apiVersion: v2\nname: {name}\ndescription: The {name} operator, from its kustomize configuration\ntype: application\nversion: 0.1.0\nappVersion: \"{tag}\"\n",
            name = options.name
        ),
    });
    out.push(OutputFile {
        path: PathBuf::from("values.yaml"),
        contents: format!(
            "{header}# Install: helm install {name} charts/{name} --namespace {ns} --create-namespace\nimage:\n  repository: {repository}\n  tag: {tag}\n  pullPolicy: {pull_policy}\nreplicas: {replicas}\n",
            name = options.name,
            ns = options.namespace
        ),
    });
    Ok(out)
}

/// The manager Deployment's image, pull policy and replicas become values: their defaults
/// are what the overlay has, and the object gets the expressions.
fn manager_values(
    deployment: &mut Value,
    image: &mut (String, String, String),
    replicas: &mut i64,
) {
    if let Some(n) = deployment["spec"]["replicas"].as_i64() {
        *replicas = n;
    }
    deployment["spec"]["replicas"] = Value::from(REPLICAS_SENTINEL);
    let Some(containers) = deployment["spec"]["template"]["spec"]["containers"].as_array_mut()
    else {
        return;
    };
    let Some(manager) = containers.iter_mut().find(|c| c["name"] == "manager") else {
        return;
    };
    if let Some(reference) = manager["image"].as_str() {
        match reference
            .rsplit_once(':')
            .filter(|(_, tag)| !tag.contains('/'))
        {
            Some((repository, tag)) => {
                image.0 = repository.to_owned();
                image.1 = tag.to_owned();
            }
            None => image.0 = reference.to_owned(),
        }
    }
    if let Some(policy) = manager["imagePullPolicy"].as_str() {
        image.2 = policy.to_owned();
    }
    manager["image"] = Value::from(IMAGE);
    manager["imagePullPolicy"] = Value::from(PULL_POLICY);
}

/// Every mention of `namespace` in the object's strings (the value itself, `ns/name`,
/// `svc.ns.svc`) becomes the release's namespace. A string that would read as a template
/// expression is refused: the chart keeps to plain substitutions.
fn substitute(value: &mut Value, namespace: &str) -> Result<(), Error> {
    match value {
        Value::String(s) => {
            if s.contains("{{") {
                return Err(Error::Refused(format!(
                    "the configuration has a string Helm would read as a template, `{s}`: the chart is not written"
                )));
            }
            *s = replace_word(s, namespace, RELEASE_NAMESPACE);
        }
        Value::Array(items) => {
            for item in items {
                substitute(item, namespace)?;
            }
        }
        Value::Object(map) => {
            for item in map.values_mut() {
                substitute(item, namespace)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `text` with each `word` that is not part of a longer name (letters, digits and `-` on
/// neither side) replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let in_name = |c: char| c.is_ascii_alphanumeric() || c == '-';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back().or(out.chars().next_back());
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(in_name) || after.is_some_and(in_name) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::replace_word;

    #[test]
    fn only_whole_names_are_replaced() {
        let ns = "op-system";
        assert_eq!(replace_word("op-system", ns, "N"), "N");
        assert_eq!(replace_word("op-system/op-cert", ns, "N"), "N/op-cert");
        assert_eq!(
            replace_word("op-webhook.op-system.svc", ns, "N"),
            "op-webhook.N.svc"
        );
        assert_eq!(replace_word("my-op-system", ns, "N"), "my-op-system");
        assert_eq!(replace_word("op-system-2", ns, "N"), "op-system-2");
    }
}
