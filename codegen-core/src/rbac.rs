//! RBAC from `+kubebuilder:rbac:groups=…,resources=…,verbs=…[,namespace=…]` markers.
//!
//! Markers are read from every comment line (`//`, `///`, `//!`) of the controller's
//! sources, as controller-gen reads Go comments. Rules are merged per (namespace, group,
//! resource), then resources with the same verbs are grouped; everything is sorted, so the
//! YAML is the same whatever the order of the markers. Without `namespace=` a rule goes to
//! the ClusterRole; with it, to a Role in that namespace. A ServiceAccount and the bindings
//! come with them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::diag::did_you_mean;

const KEYS: &[&str] = &["groups", "resources", "verbs", "namespace", "resourceNames"];
const VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "*",
];

/// Where a marker was written, for `file:line:col` diagnostics.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file, as given.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// (namespace or "" for cluster-wide, group, resource, resource names) -> verbs.
type Grants = BTreeMap<(String, String, String, Vec<String>), BTreeSet<String>>;

/// The RBAC markers of `sources`, or `file:line:col: error: ...` lines.
pub fn collect(sources: &[Source]) -> Result<Grants, Vec<String>> {
    let mut grants = Grants::new();
    let mut errors = Vec::new();
    for source in sources {
        for (n, line) in source.text.lines().enumerate() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with("//") {
                continue;
            }
            let Some(at) = line.find("+kubebuilder:rbac:") else {
                continue;
            };
            let body = line[at + "+kubebuilder:rbac:".len()..].trim_end();
            let col = at + "+kubebuilder:rbac:".len() + 1;
            let here = |offset: usize, msg: String| {
                format!(
                    "{}:{}:{}: error: {msg}",
                    source.path.display(),
                    n + 1,
                    col + offset
                )
            };
            let mut fields: BTreeMap<&str, Vec<String>> = BTreeMap::new();
            let mut offset = 0;
            for part in body.split(',') {
                let Some((key, value)) = part.split_once('=') else {
                    errors.push(here(
                        offset,
                        format!("expected `key=value`, found `{part}`"),
                    ));
                    offset += part.len() + 1;
                    continue;
                };
                let key = key.trim();
                if !KEYS.contains(&key) {
                    errors.push(here(
                        offset,
                        format!(
                            "unknown key `{key}` in `+kubebuilder:rbac`{}",
                            did_you_mean(key, KEYS.iter().copied())
                        ),
                    ));
                }
                let values: Vec<String> = value
                    .split(';')
                    .map(|v| v.trim().trim_matches('"').to_owned())
                    .collect();
                if key == "verbs" {
                    for v in &values {
                        if !VERBS.contains(&v.as_str()) {
                            errors.push(here(
                                offset,
                                format!(
                                    "unknown verb `{v}`{}",
                                    did_you_mean(v, VERBS.iter().copied())
                                ),
                            ));
                        }
                    }
                }
                fields.entry(key).or_default().extend(values);
                offset += part.len() + 1;
            }
            for key in ["groups", "resources", "verbs"] {
                if !fields.contains_key(key) {
                    errors.push(here(0, format!("`+kubebuilder:rbac` needs `{key}=`")));
                }
            }
            let namespace = fields
                .get("namespace")
                .and_then(|n| n.first().cloned())
                .unwrap_or_default();
            let mut names = fields.get("resourceNames").cloned().unwrap_or_default();
            names.sort();
            for group in fields.get("groups").into_iter().flatten() {
                for resource in fields.get("resources").into_iter().flatten() {
                    grants
                        .entry((
                            namespace.clone(),
                            group.clone(),
                            resource.clone(),
                            names.clone(),
                        ))
                        .or_default()
                        .extend(fields.get("verbs").into_iter().flatten().cloned());
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(grants)
    } else {
        Err(errors)
    }
}

/// Reads every `.rs` file below `dir`, sorted by path.
pub fn load(dir: &Path) -> std::io::Result<Vec<Source>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)?;
                out.push(Source { path, text });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

fn rules(grants: &Grants, namespace: &str) -> String {
    // (group, verbs, names) -> resources
    let mut grouped: BTreeMap<(String, Vec<String>, Vec<String>), Vec<String>> = BTreeMap::new();
    for ((ns, group, resource, names), verbs) in grants {
        if ns != namespace {
            continue;
        }
        let verbs: Vec<String> = if verbs.contains("*") {
            vec!["*".to_owned()]
        } else {
            verbs.iter().cloned().collect()
        };
        grouped
            .entry((group.clone(), verbs, names.clone()))
            .or_default()
            .push(resource.clone());
    }
    let mut out = String::new();
    for ((group, verbs, names), resources) in grouped {
        out.push_str(&format!("- apiGroups: {}\n", list(&[group])));
        out.push_str(&format!("  resources: {}\n", list(&resources)));
        if !names.is_empty() {
            out.push_str(&format!("  resourceNames: {}\n", list(&names)));
        }
        out.push_str(&format!("  verbs: {}\n", list(&verbs)));
    }
    out
}

/// The manifests: ServiceAccount, ClusterRole and binding, and a Role and binding per
/// namespace that markers name. `header` starts the file.
pub fn render(grants: &Grants, name: &str, sa_namespace: &str, header: &str) -> String {
    let subject =
        format!("subjects:\n- kind: ServiceAccount\n  name: {name}\n  namespace: {sa_namespace}\n");
    let mut out = format!(
        "{header}apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {name}\n  namespace: {sa_namespace}\n"
    );
    let cluster = rules(grants, "");
    if !cluster.is_empty() {
        out.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules:\n{cluster}"
        ));
        out.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {name}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {name}\n{subject}"
        ));
    }
    let namespaces: BTreeSet<&String> = grants
        .keys()
        .map(|k| &k.0)
        .filter(|n| !n.is_empty())
        .collect();
    for ns in namespaces {
        out.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: {name}\n  namespace: {ns}\nrules:\n{}",
            rules(grants, ns)
        ));
        out.push_str(&format!(
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: {name}\n  namespace: {ns}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: {name}\n{subject}"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> Vec<Source> {
        vec![Source {
            path: "src/controller.rs".into(),
            text: text.to_owned(),
        }]
    }

    #[test]
    fn rules_are_merged_grouped_and_sorted() {
        let grants = collect(&source(
            "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch\n\
             /// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list\n\
             //! +kubebuilder:rbac:groups=\"\",resources=pods;services,verbs=get;list;watch\n\
             // +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get,namespace=ops\n\
             let s = \"+kubebuilder:rbac:groups=x,resources=y,verbs=get\";\n",
        ))
        .unwrap();
        let yaml = render(&grants, "ctl", "default", "");
        assert!(yaml.contains(
            "- apiGroups: [\"\"]\n  resources: [\"pods\", \"services\"]\n  verbs: [\"get\", \"list\", \"watch\"]\n"
        ), "{yaml}");
        assert!(yaml.contains("- apiGroups: [\"apps\"]\n  resources: [\"deployments\"]\n  verbs: [\"get\", \"list\", \"watch\"]\n"), "{yaml}");
        assert!(
            yaml.contains("kind: Role\nmetadata:\n  name: ctl\n  namespace: ops\n"),
            "{yaml}"
        );
        assert!(
            !yaml.contains("\"x\""),
            "a marker in a string literal is not a comment: {yaml}"
        );
        assert!(
            yaml.find("[\"\"]").unwrap() < yaml.find("[\"apps\"]").unwrap(),
            "sorted by group"
        );
    }

    #[test]
    fn mistakes_are_reported_with_file_line_and_column() {
        let errors = collect(&source(
            "\n    // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=gte\n",
        ))
        .unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with(
                "src/controller.rs:2:60: error: unknown verb `gte`; did you mean `get`?"
            ),
            "{errors:?}"
        );
    }
}
