//! The layout of an imported tree: a module per group (its first DNS label, or more where
//! groups share it), a directory per version, a file per kind, and the `mod.rs` files that
//! declare and re-export them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use super::emit::KindVersion;
use super::names;

/// The module of each group: its first DNS label, or more labels where two groups share it.
pub fn group_modules(groups: &BTreeSet<String>) -> BTreeMap<String, String> {
    let clean = |labels: &[&str]| -> String {
        let joined = labels.join("_");
        let s: String = joined
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_ascii_lowercase();
        if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
            format!("g{s}")
        } else {
            s
        }
    };
    let mut out = BTreeMap::new();
    for g in groups {
        let labels: Vec<&str> = g.split('.').collect();
        let mut n = 1;
        loop {
            let name = clean(&labels[..n.min(labels.len())]);
            let clash = groups.iter().any(|other| {
                other != g && {
                    let ol: Vec<&str> = other.split('.').collect();
                    clean(&ol[..n.min(ol.len())]) == name
                }
            });
            if !clash || n >= labels.len() {
                out.insert(g.clone(), name);
                break;
            }
            n += 1;
        }
    }
    out
}

/// The `mod.rs` files of the tree: `(path, text below the header)`; each version's says
/// `+kubebuilder:ac:generate=<apply_configurations>`.
pub fn mod_files(
    kinds: &[KindVersion],
    modules: &BTreeMap<String, String>,
    with_root: bool,
    apply_configurations: bool,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let module = |name: &str| kube_codegen_core::naming::ident(name).to_string();
    if with_root {
        let mut text = String::from(
            "//! API types imported from CustomResourceDefinitions by `kube-codegen import`.\n\n",
        );
        for group_module in modules.values() {
            let _ = writeln!(text, "pub mod {};", module(group_module));
        }
        out.push((PathBuf::from("mod.rs"), text));
    }
    for (g, group_module) in modules {
        let dir = PathBuf::from(group_module);
        let versions: BTreeSet<&str> = kinds
            .iter()
            .filter(|k| &k.group == g)
            .map(|k| k.version.as_str())
            .collect();
        let mut text = format!("//! API group `{g}`.\n\n");
        for v in &versions {
            let _ = writeln!(text, "pub mod {};", module(v));
        }
        out.push((dir.join("mod.rs"), text));
        for v in &versions {
            // The clientset accessor comes from the group's first label, unless that is
            // not a Rust name (`cert-manager`) or another group shares it: then from the
            // module's name, as Go's `+groupGoName` does.
            let go_name = names::upper_camel(group_module);
            let go_name_marker = if kube_codegen_core::naming::group_go_name(g) == go_name {
                String::new()
            } else {
                format!("//! +groupGoName={go_name}\n")
            };
            let mut text = format!(
                "//! Version `{v}` of `{g}`.\n//!\n//! +groupName={g}\n{go_name_marker}//! +kubebuilder:ac:generate={apply_configurations}\n\n"
            );
            let in_version: Vec<&KindVersion> = kinds
                .iter()
                .filter(|k| &k.group == g && k.version == *v)
                .collect();
            for k in &in_version {
                let _ = writeln!(text, "pub mod {};", module(&k.module));
            }
            text.push('\n');
            for k in &in_version {
                let mut names = vec![k.kind.clone()];
                names.extend(k.top.iter().cloned());
                if k.has_status {
                    names.push(format!("{}Status", k.kind));
                }
                let _ = writeln!(
                    text,
                    "pub use {}::{{{}}};",
                    module(&k.module),
                    names.join(", ")
                );
            }
            out.push((dir.join(v).join("mod.rs"), text));
        }
    }
    out
}

/// The path of a kind's file, below its group's module (see [`group_modules`]).
pub fn kind_path(modules: &BTreeMap<String, String>, k: &KindVersion) -> PathBuf {
    PathBuf::from(&modules[&k.group])
        .join(&k.version)
        .join(format!("{}.rs", k.module))
}
