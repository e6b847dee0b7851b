//! Reading CRD manifests: files and directories of YAML or JSON, multi-document streams and
//! `List` objects. Every CRD is checked as kube-apiserver checks a new one (names, versions,
//! structural schemas, ...), so what the import reads is something a cluster accepts; each
//! problem names the document and the JSON path.
//!
//! The limits are kube-apiserver's, per document: a CRD is refused when its JSON (the body
//! a client sends for it, each item of a `List` on its own) is over the server's request
//! limit of 3 MiB, with the server's 413 message; documents nest up to the 10,000 levels its
//! JSON and YAML decoders read; there is no count of values beyond what that size implies.

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

/// The CRDs of an object read from a cluster (`shown` names it): checked as a file's are, but
/// for the request limit, which the object as the server returns it (with its status and
/// managed fields) may be over although the server took it.
pub fn parse_served(shown: &str, text: &str) -> Result<Vec<Source>, Vec<String>> {
    parse_docs(shown, text, Others::Refuse, SizeLimit::Any)
}

/// kube-apiserver's limit on a request body (`--max-request-body-bytes`, 3 MiB): a larger
/// one is a 413 before it is decoded.
pub const MAX_REQUEST_BYTES: usize = 3 * 1024 * 1024;

/// How deep kube-apiserver's decoders read: Go's JSON scanner and go-yaml (under
/// `sigs.k8s.io/yaml`) both stop past 10,000 nested arrays and objects.
pub const MAX_DEPTH: usize = 10_000;

/// Whether documents are held to [`MAX_REQUEST_BYTES`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum SizeLimit {
    /// Each object as a request body (files).
    Request,
    /// Any size (objects the server already holds).
    Any,
}

fn parse_with(shown: &str, text: &str, others: Others) -> Result<Vec<Source>, Vec<String>> {
    parse_docs(shown, text, others, SizeLimit::Request)
}

/// The reader's limits for `text`: kube-apiserver's depth ([`MAX_DEPTH`], flow collections
/// as deep as block ones, since JSON is all flow; the parser's own flow limit one further,
/// so that the depth is what stops a document), counted per document; nodes, events and
/// scalar bytes no more than the text could hold (each needs a byte of it), so that only
/// the size of a document limits it, as on the server.
fn options(text: &str) -> serde_saphyr::Options {
    let room = text.len().saturating_mul(2).max(1 << 16);
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH + 1;
    budget.max_nodes = room;
    budget.max_events = room;
    budget.max_total_scalar_bytes = room;
    budget.max_reader_input_bytes = None;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// What a YAML error says: the depth limit in kube-apiserver's words, anything else as the
/// reader says it.
fn yaml_error(shown: &str, document: usize, e: &serde_saphyr::Error) -> String {
    if let serde_saphyr::Error::Budget {
        breach: serde_saphyr::budget::BudgetBreach::Depth { .. },
        location,
    } = e
    {
        return format!(
            "error: {shown}, document {document}: nested more than {MAX_DEPTH} levels deep at line {}, column {}, more than kube-apiserver's decoders read (`yaml: exceeded max depth of {MAX_DEPTH}`)",
            location.line(),
            location.column()
        );
    }
    format!("error: {shown}: not valid YAML: {e}")
}

/// The size of `v` as the request body a Go client sends for it: compact JSON, with `<`,
/// `>` and `&` escaped as `\u003c` and U+2028 and U+2029 as `\u2028` (Go's `encoding/json`).
pub fn request_bytes(v: &Value) -> usize {
    let json = serde_json::to_string(v).unwrap_or_default();
    let escaped: usize = json
        .chars()
        .map(|c| match c {
            '<' | '>' | '&' => 5,
            '\u{2028}' | '\u{2029}' => 3,
            _ => 0,
        })
        .sum();
    json.len() + escaped
}

/// The 413 kube-apiserver answers for an object over [`MAX_REQUEST_BYTES`], or `None`.
fn too_large(origin: &str, doc: &Value, sized: SizeLimit) -> Option<String> {
    if sized == SizeLimit::Any {
        return None;
    }
    let bytes = request_bytes(doc);
    (bytes > MAX_REQUEST_BYTES).then(|| {
        let name = doc
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .map_or_else(String::new, |n| format!(" (`{n}`)"));
        format!(
            "error: {origin}{name}: Request entity too large: limit is {MAX_REQUEST_BYTES}: the object is {bytes} bytes as the JSON a client sends; kube-apiserver refuses it"
        )
    })
}

fn parse_docs(
    shown: &str,
    text: &str,
    others: Others,
    sized: SizeLimit,
) -> Result<Vec<Source>, Vec<String>> {
    let mut reader = text.as_bytes();
    let mut docs: Vec<Value> = Vec::new();
    for doc in serde_saphyr::read_with_options::<_, Value>(&mut reader, options(text)) {
        match doc {
            Ok(doc) => docs.push(doc),
            Err(e) => return Err(vec![yaml_error(shown, docs.len() + 1, &e)]),
        }
    }
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
                // A client sends each item of a `List` on its own.
                if let Some(e) = too_large(&origin, item, sized) {
                    errors.push(e);
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
        if let Some(e) = too_large(&origin, &doc, sized) {
            errors.push(e);
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
