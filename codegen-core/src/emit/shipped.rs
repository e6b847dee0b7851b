//! The built-in apply configurations the runtime ships once, for every built-in kind of
//! the built-in table (`builtin.rs`): the files of `codegen-runtime/src/applyconfigurations`
//! (one module per API group and version) and the runtime's cargo features that enable
//! them (one per group). `hack/update-codegen.sh` writes both; `hack/verify-codegen.sh`
//! fails when either differs from what this module writes now.
//!
//! ```text
//! mod.rs               one module per group, each behind its feature
//! <group>/mod.rs       pub mod <version>;
//! <group>/<version>.rs the apply configurations of the group and version's types
//! ```

use std::collections::BTreeSet;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use super::files::{HEADER_LINE, OutputFile};
use crate::apply_model::builtin::{self, Module, Shipped};

/// The first line of the runtime's `[features]` lines that enable the shipped modules.
pub const FEATURES_BEGIN: &str =
    "# Built-in apply configurations (`applyconfigurations::<group>`): one feature per API";

/// The last line of those features.
pub const FEATURES_END: &str = "# End of the built-in apply configurations.";

/// The feature that enables every group's apply configurations.
pub const ALL: &str = "ac-all";

/// What the runtime ships for the built-in kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedFiles {
    /// The files of `codegen-runtime/src/applyconfigurations`, by path relative to it.
    pub files: Vec<OutputFile>,
    /// The runtime's features that enable them: lines from [`FEATURES_BEGIN`] to
    /// [`FEATURES_END`], both included.
    pub features: String,
}

/// The shipped apply configurations of every built-in kind of the table; an error names a
/// kind whose shape the table of the Kubernetes API lacks, or emitted code that does not
/// parse (a bug).
pub fn shipped_files() -> Result<ShippedFiles, String> {
    let kinds = crate::builtin::known_kinds();
    let shipped = builtin::shipped(&kinds)?;
    let header = format!("{HEADER_LINE}\n// Regenerate with: hack/update-codegen.sh\n\n");
    let mut planned: Vec<(PathBuf, TokenStream)> =
        vec![(PathBuf::from("mod.rs"), root_file(&shipped))];
    let groups: BTreeSet<&str> = shipped.modules.keys().map(|m| m.group.as_str()).collect();
    for group in groups {
        let versions: Vec<&Module> = shipped
            .modules
            .keys()
            .filter(|m| m.group == group)
            .collect();
        planned.push((
            PathBuf::from(group).join("mod.rs"),
            group_file(group, &versions, &shipped),
        ));
        for m in versions {
            let path = PathBuf::from(group).join(format!("{}.rs", m.version));
            planned.push((path, version_file(m, &shipped)));
        }
    }
    let mut files = planned
        .into_iter()
        .map(
            |(path, tokens)| match super::format_tokens(&header, tokens) {
                Ok(contents) => Ok(OutputFile { path, contents }),
                Err(e) => Err(format!(
                    "generated {} does not parse (a bug): {e}",
                    path.display()
                )),
            },
        )
        .collect::<Result<Vec<_>, String>>()?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ShippedFiles {
        files,
        features: features(&shipped),
    })
}

/// `cargo_toml` (the runtime's manifest) with its lines from [`FEATURES_BEGIN`] to
/// [`FEATURES_END`] replaced by `features`; an error when it lacks them.
pub fn with_features(cargo_toml: &str, features: &str) -> Result<String, String> {
    let begin = cargo_toml.find(FEATURES_BEGIN);
    let end = cargo_toml
        .find(FEATURES_END)
        .map(|at| at + FEATURES_END.len());
    match (begin, end) {
        (Some(begin), Some(end)) if begin < end => Ok(format!(
            "{}{}{}",
            &cargo_toml[..begin],
            features.trim_end_matches('\n'),
            &cargo_toml[end..]
        )),
        _ => Err(format!(
            "the runtime's Cargo.toml has no lines from `{FEATURES_BEGIN}` to `{FEATURES_END}` in its [features]; put them there once (any lines between), then regenerate"
        )),
    }
}

/// `#[cfg(...)]` of a module that any of `features` enables.
fn cfg(features: &BTreeSet<String>) -> TokenStream {
    match features.iter().collect::<Vec<_>>().as_slice() {
        [one] => quote!(#[cfg(feature = #one)]),
        all => quote!(#[cfg(any(#(feature = #all),*))]),
    }
}

/// The features of which any one enables the modules of `group`.
fn group_cfg(group: &str, shipped: &Shipped<'_>) -> BTreeSet<String> {
    shipped
        .enabled_by
        .iter()
        .filter(|(m, _)| m.group == group)
        .flat_map(|(_, fs)| fs.iter().cloned())
        .collect()
}

/// The kinds of a module, sorted.
fn kinds_of(m: &Module, shipped: &Shipped<'_>) -> Vec<String> {
    let mut kinds: Vec<String> = shipped.modules[m]
        .iter()
        .filter_map(|(_, k)| k.as_ref().map(|k| k.resource.kind.clone()))
        .collect();
    kinds.sort();
    kinds
}

/// `mod.rs`: one module per group, behind its feature, and what each feature gives.
fn root_file(shipped: &Shipped<'_>) -> TokenStream {
    let mut lines = vec![
        " Apply configurations of the built-in kinds, shipped once as client-go ships its"
            .to_owned(),
        " `applyconfigurations`: one module per API group and version, behind one cargo feature"
            .to_owned(),
        " per group, which enables the groups its types use. Generated trees re-export their"
            .to_owned(),
        " built-in kinds' from here, so a crate enables the features of the groups it applies:"
            .to_owned(),
        String::new(),
    ];
    for (feature, needs) in &shipped.features {
        let modules: Vec<&Module> = shipped
            .enabled_by
            .iter()
            .filter(|(_, fs)| fs.contains(feature))
            .map(|(m, _)| m)
            .collect();
        let kinds: Vec<String> = modules.iter().flat_map(|m| kinds_of(m, shipped)).collect();
        let names: Vec<String> = modules
            .iter()
            .map(|m| format!("`{}::{}`", m.group, m.version))
            .collect();
        let mut line = format!(" - `{feature}`: {}", names.join(", "));
        if !kinds.is_empty() {
            line.push_str(&format!(" ({})", kinds.join(", ")));
        }
        if !needs.is_empty() {
            let needs: Vec<String> = needs.iter().map(|n| format!("`{n}`")).collect();
            line.push_str(&format!("; enables {}", needs.join(", ")));
        }
        lines.push(line);
    }
    lines.push(format!(" - `{ALL}`: every group's."));
    let groups: BTreeSet<&str> = shipped.modules.keys().map(|m| m.group.as_str()).collect();
    let modules = groups.into_iter().map(|group| {
        let cfg = cfg(&group_cfg(group, shipped));
        let ident = crate::naming::ident(group);
        quote! {
            #cfg
            pub mod #ident;
        }
    });
    quote! {
        #(#![doc = #lines])*
        #(#modules)*
    }
}

/// `<group>/mod.rs`: the group's versions (each behind the features that use it, for a
/// group without kinds of its own).
fn group_file(group: &str, versions: &[&Module], shipped: &Shipped<'_>) -> TokenStream {
    let doc = format!(" Built-in apply configurations of `{group}`, by version.");
    let whole = group_cfg(group, shipped);
    let modules = versions.iter().map(|m| {
        let own = &shipped.enabled_by[*m];
        let cfg = (own != &whole).then(|| cfg(own));
        let ident = crate::naming::ident(&m.version);
        quote! {
            #cfg
            pub mod #ident;
        }
    });
    quote! {
        #![doc = #doc]
        #(#modules)*
    }
}

/// `<group>/<version>.rs`: the module's apply configurations.
fn version_file(m: &Module, shipped: &Shipped<'_>) -> TokenStream {
    let types = &shipped.modules[m];
    let kinds = kinds_of(m, shipped);
    let api_version = types
        .iter()
        .find_map(|(_, k)| k.as_ref())
        .map(|k| {
            let r = k.resource;
            if r.group.is_empty() {
                r.version.clone()
            } else {
                format!("{}/{}", r.group, r.version)
            }
        })
        .unwrap_or_else(|| format!("{}/{}", m.group, m.version));
    let doc = if kinds.is_empty() {
        format!(" Apply configurations of the types of `{api_version}` that built-in kinds use.")
    } else {
        format!(
            " Apply configurations of `{api_version}`: {}, and the types they reach.",
            kinds.join(", ")
        )
    };
    super::apply::builtin_module(&doc, types)
}

/// The runtime's features that enable the modules: one per group, with the groups it uses.
fn features(shipped: &Shipped<'_>) -> String {
    let mut out = format!(
        "{FEATURES_BEGIN}\n# group, enabling the groups its types use. Written by hack/update-codegen.sh from\n# codegen-core's table of built-in kinds; do not edit.\n"
    );
    for (feature, needs) in &shipped.features {
        let needs: Vec<String> = needs.iter().map(|n| format!("{n:?}")).collect();
        out.push_str(&format!("{feature} = [{}]\n", needs.join(", ")));
    }
    let every: Vec<String> = shipped.features.keys().map(|f| format!("{f:?}")).collect();
    out.push_str(&format!(
        "# Every group's.\n{ALL} = [{}]\n",
        every.join(", ")
    ));
    out.push_str(FEATURES_END);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_the_table_is_shipped_in_its_group_and_version() {
        let shipped = shipped_files().unwrap();
        for r in crate::builtin::known_kinds() {
            let module = builtin::module_of_kind(&r).unwrap();
            let path = PathBuf::from(&module.group).join(format!("{}.rs", module.version));
            let file = shipped.files.iter().find(|f| f.path == path).unwrap();
            let snake = heck::ToSnakeCase::to_snake_case(r.kind.as_str());
            for wanted in [
                format!("pub struct {}ApplyConfiguration {{", r.kind),
                format!("pub fn extract_{snake}("),
            ] {
                assert!(
                    file.contents.contains(&wanted),
                    "{}: {wanted}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn a_group_enables_the_groups_its_types_use() {
        let features = shipped_files().unwrap().features;
        assert!(
            features.contains("\nac-apps = [\"ac-core\"]\n"),
            "{features}"
        );
        assert!(features.contains("\nac-rbac = []\n"), "{features}");
        assert!(features.starts_with(FEATURES_BEGIN), "{features}");
        assert!(
            features.ends_with(&format!("{FEATURES_END}\n")),
            "{features}"
        );
    }

    #[test]
    fn features_replace_only_their_own_lines() {
        let toml = format!(
            "[features]\nwebhook = []\n{FEATURES_BEGIN}\nold = []\n{FEATURES_END}\n\n[lints]\n"
        );
        let new = format!("{FEATURES_BEGIN}\nac-core = []\n{FEATURES_END}\n");
        assert_eq!(
            with_features(&toml, &new).unwrap(),
            format!("[features]\nwebhook = []\n{new}\n[lints]\n")
        );
        assert!(with_features("[features]\n", &new).is_err());
    }
}
