//! `kube-codegen create api|webhook`: adding to a crate `init` wrote. `create api` adds a
//! kind ([`api`]), or a version of a kind the crate has ([`versions`]); `create webhook`
//! adds a kind's admission webhooks ([`webhook`]) and, with `--conversion`, the conversion
//! between its versions ([`versions`]). Then the crate is regenerated; on any failure every
//! file is put back as it was.

mod api;
mod versions;
mod webhook;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::{Error, Outcome};
use crate::paths;
use crate::scaffold::{KindArgs, Names, kind_names, steps, undo};

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
    /// and the binary (`--webhook-addr`), a test, and the configurations in `config/webhook`.
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
    /// conversions, a test, and the Service into the CRDs of `config/crd-conversion` (deployed
    /// by `config/default`; `config/crd` names no Service). Alone, no admission webhooks.
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

/// `kube-codegen create api` and `create webhook`.
pub fn run(args: &CreateArgs) -> Result<Outcome, Error> {
    let (api, webhook) = match &args.what {
        Create::Api(api) => (api, None),
        Create::Webhook(w) => (&w.kind, Some(w)),
    };
    let command = if webhook.is_some() {
        "create webhook"
    } else {
        "create api"
    };
    let dir = paths::absolute(&api.dir);
    let kind = KindArgs {
        group: &api.group,
        version: &api.version,
        kind: &api.kind,
        cluster: api.cluster,
    };
    // The kind's files only: no dependency or script is written, so no checkout is needed.
    let mut names = kind_names(package_name(&dir)?, &kind, None)?;
    // A kind the crate has: its scope is what its `#[kube]` says, whatever the flag.
    let existing = existing_scope(&dir, &names);
    if let Some(namespaced) = existing {
        names.cluster = !namespaced;
    }
    let new_version = webhook.is_none() && existing.is_some();
    let before = undo::snapshot(&dir);
    let added = match webhook {
        Some(w) => add_webhooks(&dir, &names, w),
        None => api::add_kind(&dir, &names),
    };
    if let Err(err) = added.and_then(|()| steps::regenerate(&dir, &names, command)) {
        undo::restore(&dir, &before);
        return Err(Error::Restored(Box::new(err)));
    }
    Ok(Outcome::new(format!(
        "kube-codegen: added to `{}`: {}",
        names.krate,
        added_what(&names, webhook, new_version)
    )))
}

/// The edits and files of `create webhook`, before regenerating.
fn add_webhooks(dir: &Path, names: &Names, w: &WebhookArgs) -> Result<(), Error> {
    let keep = w.sections();
    if !keep.is_empty() {
        webhook::add_webhook(dir, names, &keep)?;
    }
    if w.conversion {
        versions::add_conversion(dir, names)?;
    }
    Ok(())
}

/// What the summary says was added.
fn added_what(names: &Names, webhook: Option<&WebhookArgs>, new_version: bool) -> String {
    let (k, snake) = (&names.kind, &names.kind_snake);
    match webhook {
        Some(w) if w.conversion && w.sections().is_empty() => format!(
            "the {k} conversion webhook through {} (src/apis/{}/<version>/{snake}_conversion.rs, tests/{snake}_conversion.rs), served with the webhooks on --webhook-addr (--install-webhooks in development; `kube-codegen dev restore` puts back what a run that died left), deployed with config/default",
            names.version, names.group_mod
        ),
        Some(w) => format!(
            "the {k} webhooks{} (src/webhooks/{snake}.rs, tests/{snake}_webhook.rs, config/webhook/manifests.yaml); serve them with --webhook-addr (--install-webhooks in development; `cargo run -- --embedded` on the in-memory API server; `kube-codegen dev restore` puts back what a run that died left); deploy with `kubectl apply --server-side -k config/default` (config/cert-manager: with cert-manager's certificate)",
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
    }
}

/// Whether the kind, when the crate has it in any version, is namespaced (by its
/// `#[kube(...)]`); `None` when the crate does not have it.
fn existing_scope(dir: &Path, names: &Names) -> Option<bool> {
    versions::other_versions(dir, names)
        .into_iter()
        .chain(std::iter::once(names.version.clone()))
        .filter_map(|v| {
            std::fs::read_to_string(dir.join(names.kind_file_in(&v)))
                .ok()
                .as_deref()
                .and_then(is_namespaced)
        })
        .next()
}

/// The crate's package name, from its `Cargo.toml`.
fn package_name(dir: &Path) -> Result<String, Error> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).map_err(|e| {
        Error::Refused(format!(
            "`{}` has no readable Cargo.toml ({e}); run create api in a crate `kube-codegen init` wrote",
            dir.display()
        ))
    })?;
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[package]")
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "name").then(|| value.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| Error::Refused(format!("`{}/Cargo.toml` names no package", dir.display())))
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
