//! The layout of an imported tree: a module per group (its first DNS label, or more where
//! groups share it or the label is not a name `generate` takes), a directory per version, a
//! file per kind, and the `mod.rs` files that declare and re-export them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use kube_codegen_core::naming;

use super::emit::KindVersion;
use super::names;

/// The names of one group in the tree: its directory's module and its Go name (the
/// clientset's and informers' name for it, `+groupGoName` when it is not the one `generate`
/// makes from the group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupNames {
    /// The module (and directory) below the tree's root, as written: `certmanager`.
    pub module: String,
    /// The Go name: `Certmanager`.
    pub go_name: String,
}

/// Module names `generate` writes beside the group modules at the root of its output, or
/// methods of the informer factory a group accessor would shadow (codegen-core's
/// `tree::checks::group_modules` refuses the latter).
const RESERVED_GROUP_MODULES: &[&str] = &[
    "clientset",
    "conversion",
    "crds",
    "informers",
    "new",
    "builder",
    "client",
    "informer",
    "for_resource",
    "dynamic",
    "start",
    "wait_for_cache_sync",
    "shutdown",
];

/// Whether a group module can be used as written: a Rust module name whose Go name
/// ([`names::upper_camel`]) `generate` takes (`+groupGoName` must be an identifier in snake
/// case too: `fn` gives `Fn`, whose accessor `fn` is not) and whose generated module is free.
fn usable(module: &str) -> bool {
    let go_name = names::upper_camel(module);
    naming::module_segment(module).is_ok()
        && naming::is_ident_like(&go_name)
        && !RESERVED_GROUP_MODULES.contains(&naming::group_module(&go_name).as_str())
}

/// The names of each group: its first DNS label, or more labels where two groups share it
/// or it is not a name `generate` takes ([`usable`]); `<all labels>_group` when no prefix
/// is. Two groups still sharing a module or a Go name's module are returned as an error.
pub fn group_modules(
    groups: &BTreeSet<String>,
) -> Result<BTreeMap<String, GroupNames>, Vec<(String, String)>> {
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
        let mut module = None;
        for n in 1..=labels.len() {
            let name = clean(&labels[..n]);
            let clash = groups.iter().any(|other| {
                other != g && {
                    let ol: Vec<&str> = other.split('.').collect();
                    clean(&ol[..n.min(ol.len())]) == name
                }
            });
            if !clash && usable(&name) {
                module = Some(name);
                break;
            }
        }
        let module = module.unwrap_or_else(|| format!("{}_group", clean(&labels)));
        let go_name = names::upper_camel(&module);
        out.insert(g.clone(), GroupNames { module, go_name });
    }
    let mut clashes = Vec::new();
    let all: Vec<(&String, &GroupNames)> = out.iter().collect();
    for (i, (a, an)) in all.iter().enumerate() {
        for (b, bn) in &all[i + 1..] {
            if an.module == bn.module
                || naming::group_module(&an.go_name) == naming::group_module(&bn.go_name)
            {
                clashes.push(((*a).clone(), (*b).clone()));
            }
        }
    }
    if clashes.is_empty() {
        Ok(out)
    } else {
        Err(clashes)
    }
}

/// The `mod.rs` files of the tree: `(path, text below the header)`; each version's says
/// `+kubebuilder:ac:generate=<apply_configurations>`.
pub fn mod_files(
    kinds: &[KindVersion],
    modules: &BTreeMap<String, GroupNames>,
    with_root: bool,
    apply_configurations: bool,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let module = |name: &str| naming::ident(name).to_string();
    if with_root {
        let mut text = String::from(
            "//! API types imported from CustomResourceDefinitions by `kube-codegen import`.\n\n",
        );
        for names in modules.values() {
            let _ = writeln!(text, "pub mod {};", module(&names.module));
        }
        out.push((PathBuf::from("mod.rs"), text));
    }
    for (g, group_names) in modules {
        let dir = PathBuf::from(&group_names.module);
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
            // not a name `generate` takes (`cert-manager`, `fn`) or another group shares
            // it: then from the module's name, as Go's `+groupGoName` does.
            let go_name = &group_names.go_name;
            let go_name_marker = if naming::group_go_name(g) == *go_name {
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
                let mut names = vec![k.rust_kind.clone()];
                names.extend(k.top.iter().cloned());
                names.extend(k.status.iter().cloned());
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
pub fn kind_path(modules: &BTreeMap<String, GroupNames>, k: &KindVersion) -> PathBuf {
    PathBuf::from(&modules[&k.group].module)
        .join(&k.version)
        .join(format!("{}.rs", k.module))
}
