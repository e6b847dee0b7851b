//! `kube-codegen init DIR --group G --version V --kind K`: a new operator crate that builds
//! and passes its own checks at once. The hand-written files come from `template/` with the
//! names filled in; what kube-codegen generates (the typed clients, the CRD, the RBAC) is
//! written by the same code as `generate`, `crds` and `rbac`, so `hack/verify-codegen.sh`
//! agrees from the first run.
//!
//! All or nothing: the directory must be new or empty, and on any failure what was written
//! into it is removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use heck::ToSnakeCase;
use kube_codegen_core::naming;

mod versions;

/// Arguments of `kube-codegen init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The new crate's directory: created, or empty. Its name is the crate's name.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The API group of the first kind (a DNS subdomain with a dot: `batch.example.com`).
    #[arg(long)]
    pub group: String,
    /// Its version (`v1`, `v1alpha1`, `v2beta1`).
    #[arg(long)]
    pub version: String,
    /// The kind (`Backup`).
    #[arg(long)]
    pub kind: String,
    /// The kind is cluster-scoped (default: namespaced).
    #[arg(long)]
    pub cluster: bool,
    /// A kube-codegen checkout to depend on by path. Default: the checkout this binary was
    /// built from, when it is still there; otherwise the crates by version.
    #[arg(long, value_name = "CHECKOUT")]
    pub kube_codegen_path: Option<PathBuf>,
}

/// The names a template is filled in with.
struct Names {
    krate: String,
    group: String,
    group_mod: String,
    version: String,
    kind: String,
    kind_snake: String,
    plural: String,
    cluster: bool,
    /// The checkout the crate depends on by path, if any.
    checkout: Option<PathBuf>,
}

/// Why `init` refuses its arguments, each in the words a user needs to fix them.
fn check(args: &InitArgs) -> Result<Names, String> {
    let dir = crate::paths::absolute(&args.dir);
    let krate = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let crate_ok = krate.starts_with(|c: char| c.is_ascii_lowercase())
        && krate
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !crate_ok {
        return Err(format!(
            "error: `{}` cannot name a crate: the directory's name must start with a lowercase letter and hold only lowercase letters, digits, `-` and `_`",
            args.dir.display()
        ));
    }
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(format!(
            "error: `{}` exists and is not an empty directory; init writes a new crate only",
            args.dir.display()
        ));
    }
    let checkout = match &args.kube_codegen_path {
        Some(path) => {
            let path = crate::paths::absolute(path);
            if !path.join("codegen-runtime/Cargo.toml").is_file() {
                return Err(format!(
                    "error: `--kube-codegen-path {}` is not a kube-codegen checkout (no codegen-runtime/Cargo.toml)",
                    path.display()
                ));
            }
            Some(path)
        }
        // The checkout this binary was built from, when it is still there.
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .filter(|p| p.join("codegen-runtime/Cargo.toml").is_file())
            .map(Path::to_path_buf),
    };
    kind_names(krate, &args.kind_args(), checkout)
}

/// The group, version, kind and scope of one kind, as `init` and `create` take them.
struct KindArgs<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    cluster: bool,
}

impl InitArgs {
    fn kind_args(&self) -> KindArgs<'_> {
        KindArgs {
            group: &self.group,
            version: &self.version,
            kind: &self.kind,
            cluster: self.cluster,
        }
    }
}

/// The names of a kind in crate `krate`, or why its group, version or kind are refused.
fn kind_names(
    krate: String,
    args: &KindArgs<'_>,
    checkout: Option<PathBuf>,
) -> Result<Names, String> {
    if !naming::is_dns_subdomain(args.group) || !args.group.contains('.') {
        return Err(format!(
            "error: `--group {}` must be a DNS subdomain with at least one dot (`{}.example.com`): kube-apiserver refuses a CRD of any other group",
            args.group,
            args.group.split('.').next().unwrap_or("batch")
        ));
    }
    if !naming::is_kube_version(args.version) {
        return Err(format!(
            "error: `--version {}` must look like `v1`, `v1alpha1` or `v2beta1`",
            args.version
        ));
    }
    let kind_ok = args.kind.starts_with(|c: char| c.is_ascii_uppercase())
        && args.kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !kind_ok {
        return Err(format!(
            "error: `--kind {}` must be UpperCamelCase letters and digits (`Backup`, `DatabaseCluster`)",
            args.kind
        ));
    }
    Ok(Names {
        krate,
        group: args.group.to_owned(),
        group_mod: naming::group_module(&naming::group_go_name(args.group)),
        version: args.version.to_owned(),
        kind: args.kind.to_owned(),
        plural: naming::plural_of(&args.kind.to_ascii_lowercase()),
        kind_snake: args.kind.to_snake_case(),
        cluster: args.cluster,
        checkout,
    })
}

impl Names {
    /// `template` with every `__NAME__` filled in.
    fn fill(&self, template: &str) -> String {
        let (runtime, fake, codegen, path_note) = match &self.checkout {
            Some(root) => (
                format!(
                    "kube-codegen-runtime = {{ path = {:?} }}",
                    root.join("codegen-runtime")
                ),
                format!(
                    "fake-apiserver = {{ path = {:?} }}",
                    root.join("fake-apiserver")
                ),
                format!(
                    "cargo run --quiet --manifest-path {} -p kube-codegen --",
                    root.join("Cargo.toml").display()
                ),
                format!(
                    "\nThe kube-codegen crates are dependencies by path, on the checkout at `{}`; the image\nbuild needs them in its context (or depend on them by version once they are published).\n",
                    root.display()
                ),
            ),
            None => (
                "kube-codegen-runtime = \"0.1\"".to_owned(),
                "fake-apiserver = \"0.1\"".to_owned(),
                "kube-codegen".to_owned(),
                String::new(),
            ),
        };
        let plural_ident = self.plural.to_snake_case();
        let (scope_attr, lister, client, apply, api) = if self.cluster {
            (
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                "Api::all(client.clone())".to_owned(),
            )
        } else {
            (
                "\n    namespaced,".to_owned(),
                format!(".{plural_ident}(&obj.namespace().unwrap_or_default())"),
                "&current.namespace().unwrap_or_default()".to_owned(),
                ", &current.namespace().unwrap_or_default()".to_owned(),
                "Api::default_namespaced(client.clone())".to_owned(),
            )
        };
        template
            .replace("__RUNTIME_DEP__", &runtime)
            .replace("__FAKE_DEP__", &fake)
            .replace("__CODEGEN_DEFAULT__", &codegen)
            .replace("__PATH_NOTE__", &path_note)
            .replace("__SCOPE_ATTR__", &scope_attr)
            .replace("__LISTER_SCOPE__", &lister)
            .replace("__CLIENT_SCOPE__", &client)
            .replace("__APPLY_SCOPE__", &apply)
            .replace("__EMBEDDED_API__", &api)
            .replace("__CRATE_IDENT__", &self.krate.replace('-', "_"))
            .replace("__CRATE__", &self.krate)
            .replace("__GROUP_MOD__", &self.group_mod)
            .replace("__GROUP_DASHES__", &self.group.replace('.', "-"))
            .replace("__KIND_LOWER__", &self.kind.to_ascii_lowercase())
            .replace("__GROUP__", &self.group)
            .replace("__VERSION__", &self.version)
            .replace("__KIND_SNAKE__", &self.kind_snake)
            .replace("__KIND__", &self.kind)
            .replace("__PLURAL_IDENT__", &plural_ident)
            .replace("__PLURAL__", &self.plural)
    }

    /// The directory of the kind's version, in the crate.
    fn version_dir(&self) -> PathBuf {
        PathBuf::from("src/apis")
            .join(&self.group_mod)
            .join(&self.version)
    }

    /// The files of one kind: its type, controller, test and sample.
    fn kind_files(&self) -> Vec<(PathBuf, String, bool)> {
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
                PathBuf::from("config/samples").join(format!(
                    "{}_{}_{}.yaml",
                    self.group_mod, self.version, self.kind_snake
                )),
                include_str!("template/sample.yaml.tmpl"),
            ),
        ]
        .into_iter()
        .map(|(path, text)| (path, self.fill(text), false))
        .collect()
    }

    /// `src/apis/<group>/mod.rs` and `src/apis/<group>/<version>/mod.rs` for this kind alone.
    fn module_files(&self) -> Vec<(PathBuf, String, bool)> {
        vec![
            (
                PathBuf::from("src/apis")
                    .join(&self.group_mod)
                    .join("mod.rs"),
                self.fill(include_str!("template/group_mod.rs.tmpl")),
                false,
            ),
            (
                self.version_dir().join("mod.rs"),
                self.fill(include_str!("template/version_mod.rs.tmpl")),
                false,
            ),
        ]
    }

    /// Every file of a new crate: the crate's own, then the first kind's.
    fn files(&self) -> Vec<(PathBuf, String, bool)> {
        let mut files = [
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
            ("src/lib.rs", include_str!("template/lib.rs.tmpl"), false),
            ("src/main.rs", include_str!("template/main.rs.tmpl"), false),
            (
                "src/health.rs",
                include_str!("template/health.rs.tmpl"),
                false,
            ),
            (
                "src/leader.rs",
                include_str!("template/leader.rs.tmpl"),
                false,
            ),
            (
                "src/metrics.rs",
                include_str!("template/metrics.rs.tmpl"),
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
        ]
        .into_iter()
        .map(|(path, text, exec)| (PathBuf::from(path), self.fill(text), exec))
        .collect::<Vec<_>>();
        files.extend(self.module_files());
        files.extend(self.kind_files());
        if let Some(root) = &self.checkout
            && let Ok(lock) = std::fs::read_to_string(root.join("Cargo.lock"))
        {
            // The versions the checkout is tested with (cargo drops what the crate does not use).
            files.push(("Cargo.lock".into(), lock, false));
        }
        files
    }
}

/// Refuses to go on when any of `files` exists under `dir`, saying `why`.
fn refuse_existing(dir: &Path, files: &[(PathBuf, String, bool)], why: &str) -> Result<(), String> {
    match files.iter().find(|(path, _, _)| dir.join(path).exists()) {
        Some((path, _, _)) => Err(format!("error: `{}` exists: {why}", path.display())),
        None => Ok(()),
    }
}

/// Writes `files` under `dir`.
fn write_files(dir: &Path, files: &[(PathBuf, String, bool)]) -> Result<(), String> {
    for (path, text, exec) in files {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("error: cannot create `{}`: {e}", parent.display()))?;
        }
        std::fs::write(&full, text)
            .map_err(|e| format!("error: cannot write `{}`: {e}", full.display()))?;
        if *exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("error: cannot make `{}` executable: {e}", full.display()))?;
        }
    }
    Ok(())
}

/// Runs one of kube-codegen's own commands on the new crate; its failure is init's.
fn step(what: &str, code: ExitCode) -> Result<(), String> {
    if code == ExitCode::SUCCESS {
        Ok(())
    } else {
        Err(format!("error: stopped: {what} failed (above)"))
    }
}

/// Everything but the checks: the files, then kube-codegen's commands on them.
fn write_crate(dir: &Path, names: &Names) -> Result<(), String> {
    write_files(dir, &names.files())?;
    regenerate(dir, names)
}

/// What `hack/update-codegen.sh` does, in process: the typed clients, the RBAC, the CRDs.
fn regenerate(dir: &Path, names: &Names) -> Result<(), String> {
    step(
        "generating the typed clients",
        crate::generate_tree(&crate::GenerateArgs {
            input: dir.join("src/apis"),
            output: dir.join("src/generated"),
            api_module: "crate::apis".into(),
            verify: false,
        }),
    )?;
    step(
        "writing the RBAC",
        crate::rbac(&crate::RbacArgs {
            input: dir.join("src"),
            output: dir.join("config/rbac/role.yaml"),
            name: names.krate.clone(),
            namespace: format!("{}-system", names.krate),
            verify: false,
        }),
    )?;
    if dir.join("src/webhooks").is_dir() {
        step(
            "writing the webhook configurations",
            crate::webhooks::run(&crate::webhooks::WebhooksArgs {
                input: dir.join("src"),
                output: dir.join("config/webhook"),
                cert_manager_certificate: None,
                verify: false,
            }),
        )?;
    }
    step(
        "building the CRD",
        crate::crds::run(&crate::crds::CrdsArgs {
            input: dir.join("src/apis"),
            output: dir.join("config/crd"),
            api_module: "crate::apis".into(),
            manifest_path: None,
            features: Vec::new(),
            all_features: false,
            no_default_features: false,
            verify: false,
            conversion_service: versions::conversion_service(dir, names),
            cert_manager_certificate: None,
        }),
    )
}

/// `kube-codegen init`.
pub fn run(args: &InitArgs) -> ExitCode {
    let names = match check(args) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let dir = crate::paths::absolute(&args.dir);
    let created = !dir.exists();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create `{}`: {e}", args.dir.display());
        return ExitCode::FAILURE;
    }
    match write_crate(&dir, &names) {
        Ok(()) => {
            eprintln!(
                "kube-codegen: a new operator crate `{}` in {}\n  next: cd {} && cargo test && cargo run -- --embedded",
                names.krate,
                args.dir.display(),
                args.dir.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Nothing half-written stays: the directory as it was (absent, or empty).
            if created {
                let _ = std::fs::remove_dir_all(&dir);
            } else if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Arguments of `kube-codegen create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(subcommand)]
    what: Create,
}

#[derive(Debug, clap::Subcommand)]
enum Create {
    /// Add a kind to a crate `init` wrote: its type, controller (wired into
    /// `src/controllers/mod.rs`), test and sample; then regenerate the clients, CRDs and RBAC.
    /// For a kind the crate has in another version: the new version's type and sample (the
    /// version there stays the storage version, marked so).
    Api(ApiArgs),
    /// Add a kind's admission webhooks (defaulting and validation examples) to a crate `init`
    /// wrote: `src/webhooks/<kind>.rs` with its markers, wired into `src/webhooks/mod.rs`
    /// and the binary (`WEBHOOK_ADDR`), a test, and the configurations in `config/webhook`.
    /// With `--conversion`, the conversion webhook between the kind's versions.
    Webhook(WebhookArgs),
}

/// Arguments of `kube-codegen create webhook`.
#[derive(Debug, Args)]
pub struct WebhookArgs {
    #[command(flatten)]
    kind: ApiArgs,
    /// A defaulting (mutating) webhook; with neither flag, both.
    #[arg(long)]
    defaulting: bool,
    /// A validating webhook; with neither flag, both.
    #[arg(long)]
    validation: bool,
    /// A conversion webhook between the kind's versions, through `--version` (the storage
    /// version, the hub): marks it `+kube-codegen:conversion` and writes each other version's
    /// conversions, a test, and the Service into `config/crd`. Alone, no admission webhooks.
    #[arg(long)]
    conversion: bool,
}

impl WebhookArgs {
    /// The template sections to keep: `defaulting`, `validation`; none with `--conversion`
    /// alone.
    fn sections(&self) -> Vec<&'static str> {
        let both = !self.defaulting && !self.validation && !self.conversion;
        [
            ("defaulting", self.defaulting),
            ("validation", self.validation),
        ]
        .into_iter()
        .filter(|(_, on)| *on || both)
        .map(|(name, _)| name)
        .collect()
    }
}

/// `template` with the `// @<name>` ... `// @end` sections not in `keep` left out, and the
/// section lines themselves dropped.
fn sections(template: &str, keep: &[&str]) -> String {
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

/// Arguments of `kube-codegen create api`.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The API group (a DNS subdomain with a dot).
    #[arg(long)]
    group: String,
    /// The version (`v1`, `v1alpha1`).
    #[arg(long)]
    version: String,
    /// The kind (`Restore`).
    #[arg(long)]
    kind: String,
    /// The kind is cluster-scoped (default: namespaced).
    #[arg(long)]
    cluster: bool,
    /// The crate's directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
}

/// The marker lines of `src/controllers/mod.rs` that `create api` writes above.
const MODULES_MARKER: &str = "// kube-codegen create api: new controller modules above this line.";
const RUN_MARKER: &str = "        // kube-codegen create api: new controllers above this line.";

/// Every file of the crate but `target/` and `.git/`, with its bytes: what a failed
/// `create api` puts back.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if d == dir && (name == "target" || name == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

/// Puts the crate back as `before` had it: files restored, files and directories it did not
/// have removed.
fn restore(dir: &Path, before: &[(PathBuf, Vec<u8>)]) {
    for (path, _) in snapshot(dir) {
        if !before.iter().any(|(p, _)| *p == path) {
            let _ = std::fs::remove_file(&path);
        }
    }
    for (path, bytes) in before {
        if std::fs::read(path).ok().as_deref() != Some(bytes.as_slice()) {
            let _ = std::fs::write(path, bytes);
        }
    }
    // Directories left empty by the removals (deepest first).
    let mut dirs = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir()
                && !(d == dir && (entry.file_name() == "target" || entry.file_name() == ".git"))
            {
                stack.push(p.clone());
                dirs.push(p);
            }
        }
    }
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// The crate's package name, from its `Cargo.toml`.
fn package_name(dir: &Path) -> Result<String, String> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).map_err(|e| {
        format!(
            "error: `{}` has no readable Cargo.toml ({e}); run create api in a crate `kube-codegen init` wrote",
            dir.display()
        )
    })?;
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[package]")
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "name").then(|| value.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| format!("error: `{}/Cargo.toml` names no package", dir.display()))
}

/// Appends `line` to the file at `path` unless it has it.
fn ensure_line(path: &Path, line: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))?;
    if text.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    let sep = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    std::fs::write(path, format!("{text}{sep}{line}\n"))
        .map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))
}

/// The edits and files of `create api`, before regenerating: a new kind, or a new version
/// of a kind the crate has.
fn add_kind(dir: &Path, names: &Names) -> Result<(), String> {
    let others = versions::other_versions(dir, names);
    if !others.is_empty() {
        return versions::add_version(dir, names, &others);
    }
    let controllers = dir.join("src/controllers/mod.rs");
    let text = std::fs::read_to_string(&controllers).unwrap_or_default();
    if !text.contains(MODULES_MARKER) || !text.contains(RUN_MARKER) {
        return Err(format!(
            "error: `{}` lacks the lines create api writes above:\n  {MODULES_MARKER}\n  {}\nput them back (as `kube-codegen init` wrote them), or add the kind by hand",
            controllers.display(),
            RUN_MARKER.trim()
        ));
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
                "        {}::run(client.clone(), shutdown.clone()).boxed(),\n{RUN_MARKER}",
                names.kind_snake
            ),
            1,
        );
    add_modules(dir, names)?;
    std::fs::write(&controllers, with_modules)
        .map_err(|e| format!("error: cannot write `{}`: {e}", controllers.display()))?;
    write_files(dir, &names.kind_files())
}

/// The module lines of a kind's version: `src/apis/mod.rs`, the group's and the version's
/// `mod.rs` (written when new), after checking that the version's directory is this group's.
fn add_modules(dir: &Path, names: &Names) -> Result<(), String> {
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
            return Err(format!(
                "error: `{}` is version {} of group `{group}`, not `{}`; the group's first DNS label names its directory, so two groups that share it cannot live in one tree",
                version_mod.display(),
                names.version,
                names.group
            ));
        }
    }
    ensure_line(
        &dir.join("src/apis/mod.rs"),
        &format!("pub mod {};", names.group_mod),
    )?;
    let modules = names.module_files();
    let (group_mod, version_file) = (&modules[0], &modules[1]);
    if dir.join(&group_mod.0).exists() {
        ensure_line(
            &dir.join(&group_mod.0),
            &format!("pub mod {};", names.version),
        )?;
    } else {
        write_files(dir, std::slice::from_ref(group_mod))?;
    }
    if version_mod.exists() {
        ensure_line(&version_mod, &format!("pub mod {};", names.kind_snake))?;
        let k = &names.kind;
        ensure_line(
            &version_mod,
            &format!(
                "pub use {}::{{{k}, {k}Condition, {k}Spec, {k}Status}};",
                names.kind_snake
            ),
        )
    } else {
        write_files(dir, std::slice::from_ref(version_file))
    }
}

/// The marker lines `create webhook` writes above, and the one of `main.rs` it replaces.
const WEBHOOK_MODULES_MARKER: &str =
    "// kube-codegen create webhook: new webhook modules above this line.";
const WEBHOOK_SERVER_MARKER: &str =
    "    // kube-codegen create webhook: new webhooks above this line.";
const MAIN_MARKER: &str = "    // kube-codegen create webhook: serving the webhooks goes here.";

/// What `main.rs` serves the webhooks with, in place of [`MAIN_MARKER`].
const MAIN_WEBHOOKS: &str = r#"    // The admission webhooks on WEBHOOK_ADDR, with the certificate in WEBHOOK_CERT_DIR (a
    // mounted Secret); INSTALL_WEBHOOKS=1 makes one and installs the configurations
    // (development). Shutting down then waits for them to stop and remove what they installed.
    let shutdown = match std::env::var("WEBHOOK_ADDR") {
        Err(_) => shutdown,
        Ok(addr) => {
            let options = __CRATE_IDENT__::webhooks::Options {
                addr: addr.parse().map_err(|e| format!("WEBHOOK_ADDR {addr}: {e}"))?,
                cert_dir: std::env::var("WEBHOOK_CERT_DIR")
                    .unwrap_or_else(|_| "/tmp/k8s-webhook-server/serving-certs".into())
                    .into(),
                install: std::env::var("INSTALL_WEBHOOKS").is_ok_and(|v| v == "1"),
            };
            let serving = tokio::spawn(__CRATE_IDENT__::webhooks::serve(
                client.clone(),
                options,
                shutdown.clone(),
            ));
            async move {
                match serving.await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::error!(error = %e, "the webhooks stopped"),
                    Err(e) => tracing::error!(error = %e, "the webhooks stopped"),
                }
            }
            .boxed()
            .shared()
        }
    };"#;

/// `text` with `line` inserted above `marker`.
fn above(text: &str, marker: &str, line: &str) -> String {
    text.replacen(marker, &format!("{line}\n{marker}"), 1)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))
}

/// The first webhook of a crate: `src/webhooks/mod.rs`, the runtime's `webhook` feature and
/// a YAML reader in `Cargo.toml`, and the serving in `main.rs`.
fn add_webhooks_module(dir: &Path, names: &Names) -> Result<(), String> {
    let main = dir.join("src/main.rs");
    let main_text = read(&main)?;
    if !main_text.contains(MAIN_MARKER) {
        return Err(format!(
            "error: `{}` lacks the line create webhook replaces:\n{}\nput it back where the webhooks should start (after `shutdown` is made), or wire `webhooks::serve` by hand",
            main.display(),
            MAIN_MARKER.trim()
        ));
    }
    let manifest = dir.join("Cargo.toml");
    let cargo = read(&manifest)?;
    let Some(line) = cargo
        .lines()
        .find(|l| l.starts_with("kube-codegen-runtime = {") && l.ends_with('}'))
    else {
        return Err(format!(
            "error: `{}` has no one-line `kube-codegen-runtime = {{ ... }}` dependency to add the `webhook` feature to; add `features = [\"webhook\"]` and `serde-saphyr = \"2\"` by hand",
            manifest.display()
        ));
    };
    let with_feature = format!(
        "{}, features = [\"webhook\"] }}\n# The webhook configurations are read from YAML in development mode.\nserde-saphyr = \"2\"",
        line.trim_end_matches('}').trim_end()
    );
    write(&manifest, &cargo.replacen(line, &with_feature, 1))?;
    write(
        &main,
        &main_text.replacen(MAIN_MARKER, &names.fill(MAIN_WEBHOOKS), 1),
    )?;
    ensure_line(&dir.join("src/lib.rs"), "pub mod webhooks;")?;
    write_files(
        dir,
        &[(
            PathBuf::from("src/webhooks/mod.rs"),
            names.fill(include_str!("template/webhooks_mod.rs.tmpl")),
            false,
        )],
    )
}

/// Whether the kind in `text` (a kind file) is namespaced, by its `#[kube(...)]`.
fn is_namespaced(text: &str) -> Option<bool> {
    let file = syn::parse_file(text).ok()?;
    file.items.iter().find_map(|item| {
        let syn::Item::Struct(s) = item else {
            return None;
        };
        let kube = s.attrs.iter().find(|a| a.path().is_ident("kube"))?;
        let syn::Meta::List(list) = &kube.meta else {
            return Some(false);
        };
        Some(
            list.tokens
                .clone()
                .into_iter()
                .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "namespaced")),
        )
    })
}

/// The edits and files of `create webhook`, before regenerating.
fn add_webhook(dir: &Path, names: &Names, keep: &[&str]) -> Result<(), String> {
    let kind_file = dir
        .join(names.version_dir())
        .join(format!("{}.rs", names.kind_snake));
    if !kind_file.is_file() {
        return Err(format!(
            "error: `{}` does not exist: add the kind first (`kube-codegen create api`)",
            kind_file.display()
        ));
    }
    let files = [
        (
            PathBuf::from("src/webhooks").join(format!("{}.rs", names.kind_snake)),
            names.fill(&sections(
                include_str!("template/webhook_kind.rs.tmpl"),
                keep,
            )),
            false,
        ),
        (
            PathBuf::from("tests").join(format!("{}_webhook.rs", names.kind_snake)),
            names.fill(&sections(
                include_str!("template/test_webhook.rs.tmpl"),
                keep,
            )),
            false,
        ),
    ];
    refuse_existing(dir, &files, "create webhook never overwrites your code")?;
    let module = dir.join("src/webhooks/mod.rs");
    if !module.exists() {
        add_webhooks_module(dir, names)?;
    }
    let text = read(&module)?;
    if !text.contains(WEBHOOK_MODULES_MARKER) || !text.contains(WEBHOOK_SERVER_MARKER) {
        return Err(format!(
            "error: `{}` lacks the lines create webhook writes above:\n  {WEBHOOK_MODULES_MARKER}\n  {}\nput them back, or add the webhook by hand",
            module.display(),
            WEBHOOK_SERVER_MARKER.trim()
        ));
    }
    let text = above(
        &text,
        WEBHOOK_MODULES_MARKER,
        &format!("pub mod {};", names.kind_snake),
    );
    let text = above(
        &text,
        WEBHOOK_SERVER_MARKER,
        &format!("    let server = {}::register(server);", names.kind_snake),
    );
    write(&module, &text)?;
    write_files(dir, &files)
}

/// `kube-codegen create api` and `create webhook`.
pub fn create(args: &CreateArgs) -> ExitCode {
    let (api, webhook) = match &args.what {
        Create::Api(api) => (api, None),
        Create::Webhook(w) => (&w.kind, Some(w)),
    };
    let dir = crate::paths::absolute(&api.dir);
    let kind = KindArgs {
        group: &api.group,
        version: &api.version,
        kind: &api.kind,
        cluster: api.cluster,
    };
    // The kind's files only: no dependency or script is written, so no checkout is needed.
    let names = package_name(&dir).and_then(|krate| kind_names(krate, &kind, None));
    let mut names = match names {
        Ok(n) => n,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // A kind the crate has: its scope is what its `#[kube]` says, whatever the flag.
    let existing = versions::other_versions(&dir, &names)
        .into_iter()
        .chain(std::iter::once(names.version.clone()))
        .filter_map(|v| {
            let file = dir
                .join("src/apis")
                .join(&names.group_mod)
                .join(v)
                .join(format!("{}.rs", names.kind_snake));
            std::fs::read_to_string(file)
                .ok()
                .as_deref()
                .and_then(is_namespaced)
        })
        .next();
    if let Some(namespaced) = existing {
        names.cluster = !namespaced;
    }
    let new_version = webhook.is_none() && existing.is_some();
    let before = snapshot(&dir);
    let added = match webhook {
        Some(w) => {
            let keep = w.sections();
            let admission = if keep.is_empty() {
                Ok(())
            } else {
                add_webhook(&dir, &names, &keep)
            };
            admission.and_then(|()| {
                if w.conversion {
                    versions::add_conversion(&dir, &names)
                } else {
                    Ok(())
                }
            })
        }
        None => add_kind(&dir, &names),
    };
    match added.and_then(|()| regenerate(&dir, &names)) {
        Ok(()) => {
            let (k, snake) = (&names.kind, &names.kind_snake);
            let what = match webhook {
                Some(w) if w.conversion && w.sections().is_empty() => format!(
                    "the {k} conversion webhook through {} (src/apis/{}/<version>/{snake}_conversion.rs, tests/{snake}_conversion.rs), served with the webhooks on WEBHOOK_ADDR (INSTALL_WEBHOOKS=1 in development)",
                    names.version, names.group_mod
                ),
                Some(w) => format!(
                    "the {k} webhooks{} (src/webhooks/{snake}.rs, tests/{snake}_webhook.rs, config/webhook/manifests.yaml); serve them with WEBHOOK_ADDR (INSTALL_WEBHOOKS=1 in development)",
                    if w.conversion { " and conversion" } else { "" }
                ),
                None if new_version => format!(
                    "{k} {}/{} (src/apis/{}/{}/{snake}.rs); its controller keeps watching the storage version, and `kube-codegen create webhook --conversion` converts between the versions",
                    names.group, names.version, names.group_mod, names.version
                ),
                None => format!(
                    "{k} {}/{} (src/controllers/{snake}.rs, tests/{snake}.rs)",
                    names.group, names.version
                ),
            };
            eprintln!("kube-codegen: added to `{}`: {what}", names.krate);
            ExitCode::SUCCESS
        }
        Err(e) => {
            restore(&dir, &before);
            eprintln!("{e}\nerror: nothing was changed");
            ExitCode::FAILURE
        }
    }
}
