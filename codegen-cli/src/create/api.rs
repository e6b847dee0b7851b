//! `create api` for a new kind: its type, controller (wired into `src/controllers/mod.rs`
//! above the lines marked for it), test and sample, and the module lines of its group and
//! version.

use std::path::Path;

use super::versions;
use crate::error::Error;
use crate::scaffold::Names;
use crate::scaffold::files::{ensure_line, refuse_existing, write, write_files};

/// The marker lines of `src/controllers/mod.rs` that `create api` writes above.
const MODULES_MARKER: &str = "// kube-codegen create api: new controller modules above this line.";
const RUN_MARKER: &str = "    // kube-codegen create api: new controllers above this line.";

/// The edits and files of `create api`, before regenerating: a new kind, or a new version
/// of a kind the crate has.
pub(super) fn add_kind(dir: &Path, names: &Names) -> Result<(), Error> {
    let others = versions::other_versions(dir, names);
    if !others.is_empty() {
        return versions::add_version(dir, names, &others);
    }
    let controllers = dir.join("src/controllers/mod.rs");
    let text = std::fs::read_to_string(&controllers).unwrap_or_default();
    if !text.contains(MODULES_MARKER) || !text.contains(RUN_MARKER) {
        return Err(Error::Refused(format!(
            "`{}` lacks the lines create api writes above:\n  {MODULES_MARKER}\n  {}\nput them back (as `kube-codegen init` wrote them), or add the kind by hand",
            controllers.display(),
            RUN_MARKER.trim()
        )));
    }
    refuse_existing(
        dir,
        &names.kind_files(),
        "create api adds new kinds only and never overwrites your code",
    )?;
    let with_modules = text
        .replacen(
            MODULES_MARKER,
            &format!("pub mod {};\n{MODULES_MARKER}", names.kind_snake),
            1,
        )
        .replacen(
            RUN_MARKER,
            &format!(
                "    {}::add(manager, client, options);\n{RUN_MARKER}",
                names.kind_snake
            ),
            1,
        );
    let files = names.kind_files();
    let kind_text = files
        .iter()
        .find(|f| f.path == names.kind_file_in(&names.version))
        .map(|f| f.text.clone())
        .unwrap_or_default();
    add_modules(dir, names, &kind_text)?;
    write(&controllers, &with_modules)?;
    write_files(dir, &files)
}

/// The `pub use` line of a kind's module in its version's `mod.rs`: the kind (which
/// `#[derive(CustomResource)]` makes from its spec) and the public types its file declares,
/// read from `kind_text` as the user left it, never assumed from the template.
fn reexport(names: &Names, kind_text: &str) -> String {
    let mut types = vec![names.kind.clone()];
    if let Ok(file) = syn::parse_file(kind_text) {
        for item in file.items {
            let (vis, ident) = match &item {
                syn::Item::Struct(s) => (&s.vis, &s.ident),
                syn::Item::Enum(e) => (&e.vis, &e.ident),
                syn::Item::Type(t) => (&t.vis, &t.ident),
                _ => continue,
            };
            let name = ident.to_string();
            if matches!(vis, syn::Visibility::Public(_))
                && name.starts_with(&names.kind)
                && !types.contains(&name)
            {
                types.push(name);
            }
        }
    }
    types.sort();
    format!("pub use {}::{{{}}};", names.kind_snake, types.join(", "))
}

/// The module lines of a kind's version: `src/apis/mod.rs`, the group's and the version's
/// `mod.rs` (written when new), after checking that the version's directory is this group's.
pub(super) fn add_modules(dir: &Path, names: &Names, kind_text: &str) -> Result<(), Error> {
    let version_mod = dir.join(names.version_dir()).join("mod.rs");
    if let Ok(existing) = std::fs::read_to_string(&version_mod) {
        let group = existing
            .lines()
            .find_map(|l| {
                l.trim_start_matches("//!")
                    .trim()
                    .strip_prefix("+groupName=")
            })
            .unwrap_or("");
        if group != names.group {
            return Err(Error::Refused(format!(
                "`{}` is version {} of group `{group}`, not `{}`; the group's first DNS label names its directory, so two groups that share it cannot live in one tree",
                version_mod.display(),
                names.version,
                names.group
            )));
        }
    }
    ensure_line(
        &dir.join("src/apis/mod.rs"),
        &format!("pub mod {};", names.group_mod),
    )?;
    let [group_mod, version_file] = names.module_files();
    if dir.join(&group_mod.path).exists() {
        ensure_line(
            &dir.join(&group_mod.path),
            &format!("pub mod {};", names.version),
        )?;
    } else {
        write_files(dir, std::slice::from_ref(&group_mod))?;
    }
    let reexport = reexport(names, kind_text);
    if version_mod.exists() {
        ensure_line(&version_mod, &format!("pub mod {};", names.kind_snake))?;
        ensure_line(&version_mod, &reexport)
    } else {
        let template_line = format!(
            "pub use {}::{{{k}, {k}Spec, {k}Status}};",
            names.kind_snake,
            k = names.kind
        );
        let mut version_file = version_file;
        version_file.text = version_file.text.replace(&template_line, &reexport);
        write_files(dir, std::slice::from_ref(&version_file))
    }
}
