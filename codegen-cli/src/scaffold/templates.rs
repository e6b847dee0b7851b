//! The templates of `template/`, and which files of a crate each becomes: the crate's own
//! (`init`), a kind's (`init`, `create api`), its modules, and the webhook and conversion
//! files `create webhook` writes. `__NAME__`s are filled in by [`Names::fill`];
//! `// @section` ... `// @end` blocks are kept or dropped by [`sections`].

use std::path::PathBuf;

use super::Names;
use super::files::NewFile;

/// `src/webhooks/<kind>.rs`: a kind's admission webhooks (sections `defaulting`, `validation`).
pub const WEBHOOK_KIND: &str = include_str!("template/webhook_kind.rs.tmpl");
/// `tests/<kind>_webhook.rs` (sections `defaulting`, `validation`).
pub const TEST_WEBHOOK: &str = include_str!("template/test_webhook.rs.tmpl");
/// `src/webhooks/mod.rs`: the webhook server.
pub const WEBHOOKS_MOD: &str = include_str!("template/webhooks_mod.rs.tmpl");
/// `src/apis/<group>/<version>/<kind>_conversion.rs`: a version's conversions to the hub.
pub const CONVERSION: &str = include_str!("template/conversion.rs.tmpl");
/// `tests/<kind>_conversion.rs`.
pub const TEST_CONVERSION: &str = include_str!("template/test_conversion.rs.tmpl");

/// The files of a new crate besides its first kind's: path, template, executable.
const CRATE_FILES: [(&str, &str, bool); 14] = [
    (
        "Cargo.toml",
        include_str!("template/Cargo.toml.tmpl"),
        false,
    ),
    ("README.md", include_str!("template/README.md.tmpl"), false),
    (
        "Dockerfile",
        include_str!("template/Dockerfile.tmpl"),
        false,
    ),
    (".gitignore", include_str!("template/gitignore.tmpl"), false),
    (".ci/run", include_str!("template/ci.sh.tmpl"), true),
    (
        "hack/update-codegen.sh",
        include_str!("template/update-codegen.sh.tmpl"),
        true,
    ),
    (
        "hack/verify-codegen.sh",
        include_str!("template/verify-codegen.sh.tmpl"),
        true,
    ),
    (
        "hack/verify-compat.sh",
        include_str!("template/verify-compat.sh.tmpl"),
        true,
    ),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl"), false),
    ("src/main.rs", include_str!("template/main.rs.tmpl"), false),
    (
        "config/grafana/controller-runtime-metrics.json",
        include_str!("template/grafana_dashboard.json.tmpl"),
        false,
    ),
    (
        "src/apis/mod.rs",
        include_str!("template/apis_mod.rs.tmpl"),
        false,
    ),
    (
        "src/controllers/mod.rs",
        include_str!("template/controllers_mod.rs.tmpl"),
        false,
    ),
    (
        "config/manager/deployment.yaml",
        include_str!("template/deployment.yaml.tmpl"),
        false,
    ),
];

impl Names {
    /// `config/samples/<group>_<version>_<kind>.yaml`: the kind's sample in this version.
    pub fn sample_file(&self) -> PathBuf {
        PathBuf::from("config/samples").join(format!(
            "{}_{}_{}.yaml",
            self.group_mod, self.version, self.kind_snake
        ))
    }

    /// The files of one kind: its type, controller, test and sample.
    pub fn kind_files(&self) -> Vec<NewFile> {
        [
            (
                self.version_dir().join(format!("{}.rs", self.kind_snake)),
                include_str!("template/kind.rs.tmpl"),
            ),
            (
                PathBuf::from("src/controllers").join(format!("{}.rs", self.kind_snake)),
                include_str!("template/controller_kind.rs.tmpl"),
            ),
            (
                PathBuf::from("tests").join(format!("{}.rs", self.kind_snake)),
                include_str!("template/test_controller.rs.tmpl"),
            ),
            (
                self.sample_file(),
                include_str!("template/sample.yaml.tmpl"),
            ),
        ]
        .into_iter()
        .map(|(path, text)| NewFile::new(path, self.fill(text)))
        .collect()
    }

    /// `src/apis/<group>/mod.rs` and `src/apis/<group>/<version>/mod.rs` for this kind alone.
    pub fn module_files(&self) -> [NewFile; 2] {
        [
            NewFile::new(
                PathBuf::from("src/apis")
                    .join(&self.group_mod)
                    .join("mod.rs"),
                self.fill(include_str!("template/group_mod.rs.tmpl")),
            ),
            NewFile::new(
                self.version_dir().join("mod.rs"),
                self.fill(include_str!("template/version_mod.rs.tmpl")),
            ),
        ]
    }

    /// Every file of a new crate: the crate's own, then the first kind's.
    pub fn crate_files(&self) -> Vec<NewFile> {
        let mut files: Vec<NewFile> = CRATE_FILES
            .into_iter()
            .map(|(path, text, executable)| NewFile {
                path: PathBuf::from(path),
                text: self.fill(text),
                executable,
            })
            .collect();
        files.extend(super::deploy::init_files(self));
        files.extend(self.module_files());
        files.extend(self.kind_files());
        if let Some(root) = &self.checkout
            && let Ok(lock) = std::fs::read_to_string(root.join("Cargo.lock"))
        {
            // The versions the checkout is tested with (cargo drops what the crate does not use).
            files.push(NewFile::new("Cargo.lock", lock));
        }
        files
    }
}

/// `template` with the `// @<name>` ... `// @end` sections not in `keep` left out, and the
/// section lines themselves dropped.
pub fn sections(template: &str, keep: &[&str]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut skipping = false;
    for line in template.lines() {
        let marker = line.trim();
        if let Some(name) = marker.strip_prefix("// @") {
            if name == "end" {
                skipping = false;
            } else {
                skipping = !keep.contains(&name);
            }
            continue;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
