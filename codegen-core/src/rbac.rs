//! RBAC from `+kubebuilder:rbac:groups=…,resources=…,verbs=…[,namespace=…]` markers.
//!
//! Markers are read from every comment line (`//`, `///`, `//!`) of the controller's
//! sources, as controller-gen reads Go comments. Rules are merged per (namespace, group,
//! resource), then resources with the same verbs are grouped; everything is sorted, so the
//! YAML is the same whatever the order of the markers. Without `namespace=` a rule goes to
//! the ClusterRole; with it, to a Role in that namespace. A ServiceAccount and the bindings
//! come with them. As with controller-gen, `groups=core` is the core group (`""`), and
//! `urls=/healthz;/metrics` gives `nonResourceURLs` rules (cluster-wide only).

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::did_you_mean;
use crate::source::SourceFile;

const KEYS: &[&str] = &[
    "groups",
    "resources",
    "verbs",
    "namespace",
    "resourceNames",
    "urls",
];
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

/// What a rule grants access to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// A resource of a group, optionally only some names.
    Resource {
        /// API group (`""` for core).
        group: String,
        /// Resource (`deployments`, `foos/status`).
        resource: String,
        /// `resourceNames`, sorted; empty for all.
        names: Vec<String>,
    },
    /// A non-resource URL (`/healthz`).
    Url(String),
}

/// (namespace or "" for cluster-wide, target) -> verbs.
type Grants = BTreeMap<(String, Target), BTreeSet<String>>;

/// The RBAC markers of `sources` (read with [`crate::source::load`]), or
/// `file:line:col: error: ...` lines.
pub fn collect(sources: &[SourceFile]) -> Result<Grants, Vec<String>> {
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
            let start = at + "+kubebuilder:rbac:".len();
            let body = line[start..].trim_end();
            // Columns count characters, as `generate`'s do.
            let here = |offset: usize, msg: String| {
                let col = line[..start + offset].chars().count() + 1;
                format!("{}:{}:{col}: error: {msg}", source.path.display(), n + 1)
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
            let urls = fields.get("urls").cloned().unwrap_or_default();
            let needed: &[&str] = if urls.is_empty() {
                &["groups", "resources", "verbs"]
            } else {
                &["verbs"]
            };
            for key in needed {
                if !fields.contains_key(key) {
                    errors.push(here(0, format!("`+kubebuilder:rbac` needs `{key}=`")));
                }
            }
            let namespace = fields
                .get("namespace")
                .and_then(|n| n.first().cloned())
                .unwrap_or_default();
            if !urls.is_empty() && !namespace.is_empty() {
                errors.push(here(
                    0,
                    "`urls=` gives non-resource URLs, which only a ClusterRole grants; remove `namespace=`".to_owned(),
                ));
            }
            let verbs: Vec<String> = fields.get("verbs").cloned().unwrap_or_default();
            let mut names = fields.get("resourceNames").cloned().unwrap_or_default();
            names.sort();
            for url in urls {
                grants
                    .entry((namespace.clone(), Target::Url(url)))
                    .or_default()
                    .extend(verbs.iter().cloned());
            }
            for group in fields.get("groups").into_iter().flatten() {
                // controller-gen's spelling of the core group.
                let group = if group == "core" { "" } else { group.as_str() };
                for resource in fields.get("resources").into_iter().flatten() {
                    let target = Target::Resource {
                        group: group.to_owned(),
                        resource: resource.clone(),
                        names: names.clone(),
                    };
                    grants
                        .entry((namespace.clone(), target))
                        .or_default()
                        .extend(verbs.iter().cloned());
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

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

fn rules(grants: &Grants, namespace: &str) -> String {
    // (group, verbs, names) -> resources, and verbs -> URLs.
    let mut grouped: BTreeMap<(String, Vec<String>, Vec<String>), Vec<String>> = BTreeMap::new();
    let mut urls: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for ((ns, target), verbs) in grants {
        if ns != namespace {
            continue;
        }
        let verbs: Vec<String> = if verbs.contains("*") {
            vec!["*".to_owned()]
        } else {
            verbs.iter().cloned().collect()
        };
        match target {
            Target::Resource {
                group,
                resource,
                names,
            } => grouped
                .entry((group.clone(), verbs, names.clone()))
                .or_default()
                .push(resource.clone()),
            Target::Url(url) => urls.entry(verbs).or_default().push(url.clone()),
        }
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
    for (verbs, urls) in urls {
        out.push_str(&format!("- nonResourceURLs: {}\n", list(&urls)));
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
        .map(|(ns, _)| ns)
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

    fn source(text: &str) -> Vec<SourceFile> {
        vec![SourceFile {
            path: "src/controller.rs".into(),
            relative: "controller.rs".into(),
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

    #[test]
    fn core_group_urls_and_columns_in_characters() {
        let yaml = render(
            &collect(&source(
                "// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get\n\
                 // +kubebuilder:rbac:urls=/healthz;/metrics,verbs=get\n",
            ))
            .unwrap(),
            "c",
            "default",
            "",
        );
        assert!(
            yaml.contains("- apiGroups: [\"\"]\n  resources: [\"configmaps\"]\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("- nonResourceURLs: [\"/healthz\", \"/metrics\"]\n  verbs: [\"get\"]\n"),
            "{yaml}"
        );
        let errors = collect(&source(
            "// é résumé: +kubebuilder:rbac:groups=apps,resources=deployments,verbs=gte\n",
        ))
        .unwrap_err();
        // 65 characters before `verbs` (68 bytes).
        assert!(
            errors[0].starts_with("src/controller.rs:1:66: error: unknown verb"),
            "{errors:?}"
        );
        let errors = collect(&source(
            "// +kubebuilder:rbac:urls=/healthz,verbs=get,namespace=ops\n",
        ))
        .unwrap_err();
        assert!(
            errors[0].contains("only a ClusterRole grants"),
            "{errors:?}"
        );
    }
}
