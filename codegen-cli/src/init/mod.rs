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
    if !naming::is_dns_subdomain(&args.group) || !args.group.contains('.') {
        return Err(format!(
            "error: `--group {}` must be a DNS subdomain with at least one dot (`{}.example.com`): kube-apiserver refuses a CRD of any other group",
            args.group,
            args.group.split('.').next().unwrap_or("batch")
        ));
    }
    if !naming::is_kube_version(&args.version) {
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
    let kind_snake = args.kind.to_snake_case();
    Ok(Names {
        krate,
        group: args.group.clone(),
        group_mod: naming::group_module(&naming::group_go_name(&args.group)),
        version: args.version.clone(),
        kind: args.kind.clone(),
        plural: naming::plural_of(&args.kind.to_ascii_lowercase()),
        kind_snake,
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
            .replace("__GROUP__", &self.group)
            .replace("__VERSION__", &self.version)
            .replace("__KIND_SNAKE__", &self.kind_snake)
            .replace("__KIND__", &self.kind)
            .replace("__PLURAL_IDENT__", &plural_ident)
            .replace("__PLURAL__", &self.plural)
    }

    /// The hand-written files: path in the crate, contents, executable.
    fn files(&self) -> Vec<(PathBuf, String, bool)> {
        let api = PathBuf::from("src/apis")
            .join(&self.group_mod)
            .join(&self.version);
        let mut files = vec![
            (
                "Cargo.toml".into(),
                include_str!("template/Cargo.toml.tmpl"),
                false,
            ),
            (
                "README.md".into(),
                include_str!("template/README.md.tmpl"),
                false,
            ),
            (
                "Dockerfile".into(),
                include_str!("template/Dockerfile.tmpl"),
                false,
            ),
            (
                ".gitignore".into(),
                include_str!("template/gitignore.tmpl"),
                false,
            ),
            (".ci/run".into(), include_str!("template/ci.sh.tmpl"), true),
            (
                "hack/update-codegen.sh".into(),
                include_str!("template/update-codegen.sh.tmpl"),
                true,
            ),
            (
                "hack/verify-codegen.sh".into(),
                include_str!("template/verify-codegen.sh.tmpl"),
                true,
            ),
            (
                "src/lib.rs".into(),
                include_str!("template/lib.rs.tmpl"),
                false,
            ),
            (
                "src/main.rs".into(),
                include_str!("template/main.rs.tmpl"),
                false,
            ),
            (
                "src/controller.rs".into(),
                include_str!("template/controller.rs.tmpl"),
                false,
            ),
            (
                "src/apis/mod.rs".into(),
                include_str!("template/apis_mod.rs.tmpl"),
                false,
            ),
            (
                PathBuf::from("src/apis")
                    .join(&self.group_mod)
                    .join("mod.rs"),
                include_str!("template/group_mod.rs.tmpl"),
                false,
            ),
            (
                api.join("mod.rs"),
                include_str!("template/version_mod.rs.tmpl"),
                false,
            ),
            (
                api.join(format!("{}.rs", self.kind_snake)),
                include_str!("template/kind.rs.tmpl"),
                false,
            ),
            (
                "tests/controller.rs".into(),
                include_str!("template/test_controller.rs.tmpl"),
                false,
            ),
            (
                "config/manager/deployment.yaml".into(),
                include_str!("template/deployment.yaml.tmpl"),
                false,
            ),
            (
                PathBuf::from("config/samples").join(format!(
                    "{}_{}_{}.yaml",
                    self.group_mod, self.version, self.kind_snake
                )),
                include_str!("template/sample.yaml.tmpl"),
                false,
            ),
        ]
        .into_iter()
        .map(|(path, text, exec)| (path, self.fill(text), exec))
        .collect::<Vec<_>>();
        if let Some(root) = &self.checkout
            && let Ok(lock) = std::fs::read_to_string(root.join("Cargo.lock"))
        {
            // The versions the checkout is tested with (cargo drops what the crate does not use).
            files.push(("Cargo.lock".into(), lock, false));
        }
        files
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
        Err(format!("error: init stopped: {what} failed (above)"))
    }
}

/// Everything but the checks: the files, then kube-codegen's commands on them.
fn write_crate(dir: &Path, names: &Names) -> Result<(), String> {
    write_files(dir, &names.files())?;
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
            conversion_service: None,
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
