//! Reading CRD manifests: files and directories of YAML or JSON, multi-document streams and
//! `List` objects. Every CRD is checked as kube-apiserver checks a new one (names, versions,
//! structural schemas, ...), so what the import reads is something a cluster accepts; each
//! problem names the document and the JSON path.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One CRD and where it came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// `crds/widgets.yaml, document 2` (and `, item 3` inside a `List`).
    pub origin: String,
    /// The manifest, as read.
    pub crd: Value,
}

/// The manifest files below `input` (itself when it is a file): `.yaml`, `.yml` and
/// `.json`, in path order.
pub fn files(input: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = fs::metadata(input)
        .map_err(|e| format!("error: cannot read `{}`: {e}", input.display()))?;
    if meta.is_file() {
        return Ok(vec![input.to_owned()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![input.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir)
            .map_err(|e| format!("error: cannot read `{}`: {e}", dir.display()))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| format!("error: cannot read `{}`: {e}", dir.display()))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            {
                out.push(path);
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(format!(
            "error: `{}` holds no `.yaml`, `.yml` or `.json` files",
            input.display()
        ));
    }
    Ok(out)
}

/// The CRDs of one file's text; `shown` is how the file is named in messages. Any other
/// object is an error: import reads only CRDs.
pub fn parse(shown: &str, text: &str) -> Result<Vec<Source>, Vec<String>> {
    parse_with(shown, text, Others::Refuse)
}

/// The CRDs of one file's text, passing over other objects (a `kustomization.yaml`, the
/// admission policies a CRD bundle ships beside its CRDs).
pub fn parse_crds(shown: &str, text: &str) -> Result<Vec<Source>, Vec<String>> {
    parse_with(shown, text, Others::Skip)
}

/// What to do with a document that is not a CRD.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Others {
    Refuse,
    Skip,
}

fn parse_with(shown: &str, text: &str, others: Others) -> Result<Vec<Source>, Vec<String>> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text)
        .map_err(|e| vec![format!("error: {shown}: not valid YAML: {e}")])?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        if doc.is_null() {
            continue;
        }
        let origin = format!("{shown}, document {}", i + 1);
        // `List`, `CustomResourceDefinitionList`, ...
        if doc
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
        {
            let Some(items) = doc.get("items").and_then(Value::as_array) else {
                errors.push(format!("error: {origin}: `items` of a List is not a list"));
                continue;
            };
            for (j, item) in items.iter().enumerate() {
                let origin = format!("{origin}, item {}", j + 1);
                if others == Others::Skip && !is_crd(item) {
                    continue;
                }
                match check(&origin, item) {
                    Ok(()) => out.push(Source {
                        origin,
                        crd: item.clone(),
                    }),
                    Err(mut e) => errors.append(&mut e),
                }
            }
            continue;
        }
        if others == Others::Skip && !is_crd(&doc) {
            continue;
        }
        match check(&origin, &doc) {
            Ok(()) => out.push(Source { origin, crd: doc }),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn is_crd(doc: &Value) -> bool {
    doc.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
}

/// Whether `doc` is a v1 CRD that kube-apiserver would accept.
fn check(origin: &str, doc: &Value) -> Result<(), Vec<String>> {
    let Some(obj) = doc.as_object() else {
        return Err(vec![format!(
            "error: {origin}: not a Kubernetes object (a YAML mapping with `apiVersion` and `kind`)"
        )]);
    };
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind != "CustomResourceDefinition" {
        let what = if kind.is_empty() {
            "an object without `kind`".to_owned()
        } else {
            format!("a `{kind}` ({api_version})")
        };
        return Err(vec![format!(
            "error: {origin}: `kind`: {what}, not a CustomResourceDefinition; import reads only CRDs"
        )]);
    }
    if api_version == "apiextensions.k8s.io/v1beta1" {
        return Err(vec![format!(
            "error: {origin}: `apiVersion`: apiextensions.k8s.io/v1beta1 CRDs were removed in Kubernetes 1.22; convert it to apiextensions.k8s.io/v1 (the schema moves to `spec.versions[*].schema`)"
        )]);
    }
    if api_version != "apiextensions.k8s.io/v1" {
        return Err(vec![format!(
            "error: {origin}: `apiVersion`: `{api_version}` is not apiextensions.k8s.io/v1"
        )]);
    }
    let name = doc
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let review = apiserver_rules::crd::review_create(doc);
    if review.errors.is_empty() {
        return Ok(());
    }
    Err(review
        .errors
        .iter()
        .map(|e| {
            format!(
                "error: {origin} (CustomResourceDefinition `{name}`): `{}`: {}; kube-apiserver rejects this CRD",
                e.field,
                e.body()
            )
        })
        .collect())
}
