//! What `init` and `create` share: the names of a kind as the templates use them, the
//! [`templates`], the [`files`] they write and edit, putting a crate back when a command
//! fails ([`undo`]), and the kube-codegen commands they run on the crate ([`steps`]).

pub mod deploy;
pub mod files;
pub mod steps;
pub mod templates;
pub mod undo;

use std::path::PathBuf;

use heck::ToSnakeCase;
use kube_codegen_core::naming;

use crate::error::Error;

/// The names a template is filled in with.
pub struct Names {
    /// The crate's package name.
    pub krate: String,
    /// The API group (`batch.example.com`).
    pub group: String,
    /// The group's module (`batch`).
    pub group_mod: String,
    /// The version (`v1alpha1`).
    pub version: String,
    /// The kind (`CronJob`).
    pub kind: String,
    /// The kind's module and file stem (`cron_job`).
    pub kind_snake: String,
    /// The resource's plural (`cronjobs`).
    pub plural: String,
    /// The kind is cluster-scoped.
    pub cluster: bool,
    /// The checkout the crate depends on by path, if any.
    pub checkout: Option<PathBuf>,
}

/// The group, version, kind and scope of one kind, as `init` and `create` take them.
pub struct KindArgs<'a> {
    /// The API group.
    pub group: &'a str,
    /// The version.
    pub version: &'a str,
    /// The kind.
    pub kind: &'a str,
    /// The kind is cluster-scoped.
    pub cluster: bool,
}

/// The names of a kind in crate `krate`, or why its group, version or kind are refused.
pub fn kind_names(
    krate: String,
    args: &KindArgs<'_>,
    checkout: Option<PathBuf>,
) -> Result<Names, Error> {
    if !naming::is_dns_subdomain(args.group) || !args.group.contains('.') {
        return Err(Error::Refused(format!(
            "`--group {}` must be a DNS subdomain with at least one dot (`{}.example.com`): kube-apiserver refuses a CRD of any other group",
            args.group,
            args.group.split('.').next().unwrap_or("batch")
        )));
    }
    if !naming::is_kube_version(args.version) {
        return Err(Error::Refused(format!(
            "`--version {}` must look like `v1`, `v1alpha1` or `v2beta1`",
            args.version
        )));
    }
    let kind_ok = args.kind.starts_with(|c: char| c.is_ascii_uppercase())
        && args.kind.chars().all(|c| c.is_ascii_alphanumeric());
    if !kind_ok {
        return Err(Error::Refused(format!(
            "`--kind {}` must be UpperCamelCase letters and digits (`Backup`, `DatabaseCluster`)",
            args.kind
        )));
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
    pub fn fill(&self, template: &str) -> String {
        let (runtime, fake, codegen, path_note) = match &self.checkout {
            Some(root) => (
                format!(
                    "kube-codegen-runtime = {{ path = {:?}, default-features = false }}",
                    root.join("codegen-runtime")
                ),
                format!(
                    "fake-apiserver = {{ path = {:?}, features = [\"test-env\"] }}",
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
                "kube-codegen-runtime = { version = \"0.1\", default-features = false }".to_owned(),
                "fake-apiserver = { version = \"0.1\", features = [\"test-env\"] }".to_owned(),
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
    pub fn version_dir(&self) -> PathBuf {
        PathBuf::from("src/apis")
            .join(&self.group_mod)
            .join(&self.version)
    }

    /// The Service of the crate's webhooks, `NAMESPACE/NAME` (`serviceNamespace` and
    /// `serviceName` of the markers `create webhook` writes), which conversion goes through.
    pub fn webhook_service(&self) -> String {
        format!("{0}-system/{0}-webhook", self.krate)
    }

    /// The kind's file in `version`, relative to the crate.
    pub fn kind_file_in(&self, version: &str) -> PathBuf {
        PathBuf::from("src/apis")
            .join(&self.group_mod)
            .join(version)
            .join(format!("{}.rs", self.kind_snake))
    }
}
