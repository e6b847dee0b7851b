//! Storage version migration: every stored object of a CRD rewritten through its current
//! storage version, then `status.storedVersions` trimmed to that version alone, so that
//! older versions can be removed from the CRD.
//!
//! kube-apiserver keeps each object in etcd in the version it was last written in; a CRD
//! lists those versions in `status.storedVersions` and refuses to drop a version from
//! `spec.versions` while it is listed there. An update that changes nothing still rewrites
//! the object in the current storage version (its bytes in etcd differ), which is how
//! kube-storage-version-migrator works too. [`migrate_storage`] does that page by page, at a
//! bounded rate, and records how far it got in an annotation on the CRD
//! ([`CHECKPOINT_ANNOTATION`]), so an interrupted run is resumed by the next one.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The annotation on the CRD that records a migration in progress: the storage version it
/// migrates to and the last object rewritten (JSON `{"to": "v2", "after": "ns/name",
/// "continue": "..."}`). It is removed when the migration completes.
pub const CHECKPOINT_ANNOTATION: &str = "kube-codegen.io/storage-migration";

/// How a migration runs.
#[derive(Debug, Clone)]
pub struct MigrateOptions {
    /// Objects per list page (500 by default).
    pub page_size: u32,
    /// At most this many rewrites a second (50 by default); the API server's own priority
    /// and fairness limits apply too.
    pub writes_per_second: f64,
    /// Stop after this many rewrites (none by default), leaving the checkpoint for the next
    /// run: for a run in bounded steps, and to test resumption.
    pub stop_after: Option<u64>,
}

impl Default for MigrateOptions {
    fn default() -> Self {
        Self {
            page_size: 500,
            writes_per_second: 50.0,
            stop_after: None,
        }
    }
}

/// How far a migration is, for progress reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Objects rewritten by this run.
    pub rewritten: u64,
    /// Objects the server says are left after the current page, when it says.
    pub remaining: Option<u64>,
}

/// What a completed (or stopped) migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The storage version every object is now stored in.
    pub storage_version: String,
    /// `status.storedVersions` before the migration.
    pub stored_before: Vec<String>,
    /// Objects rewritten by this run.
    pub rewritten: u64,
    /// Whether this run continued an interrupted one.
    pub resumed: bool,
    /// Whether the run completed (`storedVersions` trimmed); `false` when `stop_after`
    /// stopped it first.
    pub complete: bool,
    /// Full passes over the objects: more than one when the CRD changed during a pass (every
    /// object is then rewritten again, so that none written meanwhile stays in another
    /// version).
    pub passes: u32,
}

/// Why a migration did not run or stopped.
#[derive(Debug)]
pub enum MigrateError {
    /// The CRD has no storage version (it is not one kube-apiserver accepts).
    NoStorageVersion(String),
    /// Objects are stored in a version that cannot be converted to the storage version.
    NoConversion {
        /// The CRD.
        crd: String,
        /// The stored version.
        from: String,
        /// The storage version.
        to: String,
        /// Why.
        why: String,
    },
    /// The CRD changed while objects were being rewritten and kept changing through the
    /// final passes, or its storage version moved away from the one migrated to: objects
    /// written meanwhile may be stored in another version, so `status.storedVersions` was
    /// left as it was.
    Changed {
        /// The CRD.
        crd: String,
        /// What changed, in words.
        what: String,
    },
    /// A request failed.
    Api(kube::Error),
}

impl std::fmt::Display for MigrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MigrateError::NoStorageVersion(crd) => {
                write!(f, "CustomResourceDefinition `{crd}` has no storage version")
            }
            MigrateError::NoConversion { crd, from, to, why } => write!(
                f,
                "objects of `{crd}` stored as {from} cannot be converted to {to}: {why}"
            ),
            MigrateError::Changed { crd, what } => write!(
                f,
                "`{crd}` changed during the migration ({what}): objects written meanwhile may be stored in another version, so status.storedVersions was left as it was; run the migration again once the CRD is stable"
            ),
            MigrateError::Api(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MigrateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MigrateError::Api(e) => Some(e),
            _ => None,
        }
    }
}

impl From<kube::Error> for MigrateError {
    fn from(e: kube::Error) -> Self {
        MigrateError::Api(e)
    }
}

/// Where an interrupted run stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
struct Checkpoint {
    /// The storage version being migrated to.
    to: String,
    /// `namespace/name` (or `name`) of the last object rewritten.
    #[serde(default)]
    after: String,
    /// The list's continue token after the last completed page.
    #[serde(default, rename = "continue", skip_serializing_if = "String::is_empty")]
    continue_token: String,
}

/// The CRD as a migration needs it.
struct Target {
    crd: String,
    resource: ApiResource,
    namespaced: bool,
    stored: Vec<String>,
}

fn target(crd: &CustomResourceDefinition) -> Result<Target, MigrateError> {
    let name = crd.name_any();
    let storage = crd
        .spec
        .versions
        .iter()
        .find(|v| v.storage)
        .ok_or_else(|| MigrateError::NoStorageVersion(name.clone()))?;
    let stored = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    let strategy = crd
        .spec
        .conversion
        .as_ref()
        .map_or("None", |c| c.strategy.as_str());
    for from in stored.iter().filter(|v| **v != storage.name) {
        let Some(old) = crd.spec.versions.iter().find(|v| v.name == *from) else {
            return Err(MigrateError::NoConversion {
                crd: name,
                from: from.clone(),
                to: storage.name.clone(),
                why: "the CRD no longer has that version".to_owned(),
            });
        };
        if strategy == "None" && old.schema != storage.schema {
            return Err(MigrateError::NoConversion {
                crd: name,
                from: from.clone(),
                to: storage.name.clone(),
                why: "their schemas differ and the CRD's conversion is `None`, which only rewrites `apiVersion`; add a conversion webhook first".to_owned(),
            });
        }
    }
    let names = &crd.spec.names;
    Ok(Target {
        resource: ApiResource {
            group: crd.spec.group.clone(),
            version: storage.name.clone(),
            api_version: format!("{}/{}", crd.spec.group, storage.name),
            kind: names.kind.clone(),
            plural: names.plural.clone(),
        },
        namespaced: crd.spec.scope == "Namespaced",
        crd: name,
        stored,
    })
}

fn key(obj: &DynamicObject) -> String {
    match &obj.metadata.namespace {
        Some(ns) => format!("{ns}/{}", obj.name_any()),
        None => obj.name_any(),
    }
}

/// How many full passes a migration makes at most while the CRD keeps changing under it.
pub const MAX_PASSES: u32 = 3;

/// Rewrites every object of the CRD `crd` in its storage version and trims
/// `status.storedVersions`, reporting progress after each page. Resumes an interrupted run
/// from its checkpoint; refuses (before writing anything) when objects are stored in a
/// version the CRD cannot convert.
///
/// It proves what it trims. The CRD's `metadata.generation` (which every change of its spec
/// moves) is read before a pass and again after it: when it moved, the storage version may
/// have moved and back, and an object written meanwhile may be stored in another version, so
/// every object is rewritten again, up to [`MAX_PASSES`] passes. When the storage version is
/// no longer the one migrated to, or the CRD still changed during the last pass, nothing is
/// trimmed and the migration fails ([`MigrateError::Changed`]). The trim itself carries the
/// CRD's `resourceVersion` as read after the last pass, so a change in between is a
/// conflict, checked again.
pub async fn migrate_storage(
    client: &Client,
    crd: &str,
    options: &MigrateOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<Migrated, MigrateError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let definition = crds.get(crd).await?;
    let target = target(&definition)?;
    let to = target.resource.version.clone();
    let checkpoint = definition
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CHECKPOINT_ANNOTATION))
        .and_then(|text| serde_json::from_str::<Checkpoint>(text).ok())
        .filter(|c| c.to == to);
    let resumed = checkpoint.is_some();
    let mut at = checkpoint.unwrap_or(Checkpoint {
        to: to.clone(),
        ..Checkpoint::default()
    });
    let mut generation = definition.metadata.generation;
    let mut run = Run {
        client,
        crds: &crds,
        crd,
        target: &target,
        options,
        rewritten: 0,
    };
    let mut passes = 0;
    loop {
        passes += 1;
        if !run.pass(&mut at, &mut progress).await? {
            return Ok(Migrated {
                storage_version: to,
                stored_before: target.stored.clone(),
                rewritten: run.rewritten,
                resumed,
                complete: false,
                passes,
            });
        }
        // What the CRD is now: the pass counts only if it did not change meanwhile.
        let now = crds.get(crd).await?;
        let storage = now
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.name.clone());
        if storage.as_deref() != Some(to.as_str()) {
            return Err(MigrateError::Changed {
                crd: crd.to_owned(),
                what: format!(
                    "its storage version is now {}, not {to}",
                    storage.as_deref().unwrap_or("none")
                ),
            });
        }
        if now.metadata.generation == generation {
            match trim(&crds, crd, &now, &to).await? {
                true => break,
                // The CRD changed between the read and the trim: look again.
                false => continue,
            }
        }
        if passes >= MAX_PASSES {
            return Err(MigrateError::Changed {
                crd: crd.to_owned(),
                what: format!(
                    "its generation moved from {} to {} during each of {passes} passes",
                    generation.unwrap_or(0),
                    now.metadata.generation.unwrap_or(0)
                ),
            });
        }
        // Another pass, from the start, over every object.
        generation = now.metadata.generation;
        at = Checkpoint {
            to: to.clone(),
            ..Checkpoint::default()
        };
    }
    crds.patch(
        crd,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {CHECKPOINT_ANNOTATION: null}}})),
    )
    .await?;
    Ok(Migrated {
        storage_version: to,
        stored_before: target.stored.clone(),
        rewritten: run.rewritten,
        resumed,
        complete: true,
        passes,
    })
}

/// `status.storedVersions` set to `to` alone, on the condition that the CRD is still `now`
/// (its `resourceVersion`); `false` when it is not.
async fn trim(
    crds: &Api<CustomResourceDefinition>,
    crd: &str,
    now: &CustomResourceDefinition,
    to: &str,
) -> Result<bool, MigrateError> {
    let precondition = now.metadata.resource_version.clone().unwrap_or_default();
    let patch = json!({
        "metadata": {"resourceVersion": precondition},
        "status": {"storedVersions": [to]},
    });
    match crds
        .patch_status(crd, &PatchParams::default(), &Patch::Merge(patch))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// One migration's state across its passes.
struct Run<'a> {
    client: &'a Client,
    crds: &'a Api<CustomResourceDefinition>,
    crd: &'a str,
    target: &'a Target,
    options: &'a MigrateOptions,
    rewritten: u64,
}

impl Run<'_> {
    /// One pass over every object after `at`, page by page, saving the checkpoint after each
    /// page; `false` when `stop_after` stopped it first.
    async fn pass(
        &mut self,
        at: &mut Checkpoint,
        progress: &mut impl FnMut(&Progress),
    ) -> Result<bool, MigrateError> {
        let (target, options) = (self.target, self.options);
        let to = &target.resource.version;
        let all: Api<DynamicObject> = Api::all_with(self.client.clone(), &target.resource);
        let pause = Duration::from_secs_f64(1.0 / options.writes_per_second.max(0.001));
        loop {
            let mut params = ListParams::default().limit(options.page_size);
            if !at.continue_token.is_empty() {
                params = params.continue_token(&at.continue_token);
            }
            let page = match retried(|| all.list(&params)).await {
                Ok(page) => page,
                // The token expired (compaction): list again from the start, skipping what
                // the checkpoint says is done (lists come in key order).
                Err(kube::Error::Api(e)) if e.code == 410 && !at.continue_token.is_empty() => {
                    at.continue_token.clear();
                    continue;
                }
                Err(kube::Error::Api(e)) if e.code >= 500 && !target.stored.is_empty() => {
                    return Err(MigrateError::NoConversion {
                        crd: target.crd.clone(),
                        from: target.stored.join(", "),
                        to: to.clone(),
                        why: format!("reading the objects failed: {}", e.message),
                    });
                }
                Err(e) => return Err(e.into()),
            };
            for obj in &page.items {
                if !at.after.is_empty() && key(obj) <= at.after {
                    continue;
                }
                if options.stop_after.is_some_and(|n| self.rewritten >= n) {
                    save(self.crds, self.crd, at).await?;
                    return Ok(false);
                }
                rewrite(self.client, target, obj).await?;
                self.rewritten += 1;
                at.after = key(obj);
                tokio::time::sleep(pause).await;
            }
            at.continue_token = page.metadata.continue_.clone().unwrap_or_default();
            progress(&Progress {
                rewritten: self.rewritten,
                remaining: page.metadata.remaining_item_count.map(|n| n.max(0) as u64),
            });
            if at.continue_token.is_empty() {
                return Ok(true);
            }
            save(self.crds, self.crd, at).await?;
        }
    }
}

async fn save(
    crds: &Api<CustomResourceDefinition>,
    crd: &str,
    at: &Checkpoint,
) -> Result<(), MigrateError> {
    let text = serde_json::to_string(at).unwrap_or_default();
    crds.patch(
        crd,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {CHECKPOINT_ANNOTATION: text}}})),
    )
    .await?;
    Ok(())
}

/// `request`, again while the server answers 429 (busy, or the CRD's storage being set up
/// after a change of storage version), for at most about a minute.
async fn retried<T, F, Fut>(mut request: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut attempts = 0;
    loop {
        match request().await {
            Err(kube::Error::Api(e)) if e.code == 429 && attempts < 60 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => return other,
        }
    }
}

/// An update that changes nothing: kube-apiserver stores it in the storage version. A
/// conflict means someone wrote the object since it was listed, which stored it in the
/// storage version already; an object deleted meanwhile needs nothing either.
async fn rewrite(
    client: &Client,
    target: &Target,
    obj: &DynamicObject,
) -> Result<(), MigrateError> {
    let api: Api<DynamicObject> = match (&obj.metadata.namespace, target.namespaced) {
        (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &target.resource),
        _ => Api::all_with(client.clone(), &target.resource),
    };
    match api
        .replace(&obj.name_any(), &PostParams::default(), obj)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
}
