//! Secret sync: the Secrets of a source namespace that carry a label are copied into every
//! other namespace (or those a selector picks), kept up to date, and removed when their
//! source goes. Copies are marked, so secrets the controller did not create are never
//! touched (a same-name one is reported instead).
//!
//! A controller of Namespaces on the runtime: each reconcile brings one namespace's copies
//! in line with the sources, from the caches, whatever event queued it (a source's change
//! queues every namespace; a copy's, or a same-name secret's, its own namespace). A failed
//! reconcile is retried with the runtime's backoff. The key is the target namespace, not
//! the source, because the runtime drops a key whose object is gone, and a deleted source's
//! copies must still go (a Secret cannot own objects of another namespace).

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::DeleteParams;
use kube::core::{Selector, SelectorExt};
use kube::{Client, Resource, ResourceExt};
use kube_codegen_runtime::apply::ExtractError;
use kube_codegen_runtime::controller::{Action, Controller, ObjectKey, is_not_found, predicate};
use kube_codegen_runtime::events::{Event, EventType, Recorder, Reporter};
use kube_codegen_runtime::manager::{Manager, ManagerOptions};
use kube_codegen_runtime::{FieldManager, SharedInformerFactory};

use crate::generated::core::v1::{
    NamespaceLister, SecretApplyConfiguration, SecretLister, extract_secret,
};
use crate::generated::{Clientset, InformerFactoryExt};

/// The label every copy carries (value: the source namespace).
pub const COPY_LABEL: &str = "secret-sync.example.com/copied-from";
/// The annotation with the uid of the copy's source.
pub const SOURCE_UID: &str = "secret-sync.example.com/source-uid";

/// What to copy where.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the sources live.
    pub source_namespace: String,
    /// Which sources to copy (a label selector, e.g. `secret-sync.example.com/sync=true`).
    pub selector: String,
    /// Which namespaces get copies (a label selector; empty: every namespace).
    pub namespace_selector: String,
}

/// What one namespace's sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// `namespace/name` of copies created.
    pub created: Vec<String>,
    /// Copies updated to match their source.
    pub updated: Vec<String>,
    /// Copies removed because their source is gone.
    pub deleted: Vec<String>,
    /// Same-name secrets not created by secret-sync, left alone.
    pub conflicts: Vec<String>,
}

/// Why a namespace's sync failed; the controller retries it with the runtime's backoff.
#[derive(Debug)]
pub enum Error {
    /// The API server refused to apply the copy `namespace/name`.
    Apply {
        /// The copy.
        copy: String,
        /// The API server's answer.
        source: kube::Error,
    },
    /// The API server refused to delete the copy `namespace/name`.
    Delete {
        /// The copy.
        copy: String,
        /// The API server's answer.
        source: kube::Error,
    },
    /// What secret-sync owns in the cached copy `namespace/name` could not be read.
    Owned {
        /// The copy.
        copy: String,
        /// Why.
        source: ExtractError,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Apply { copy, source } => write!(f, "cannot apply the copy {copy}: {source}"),
            Error::Delete { copy, source } => {
                write!(f, "cannot delete the copy {copy}: {source}")
            }
            Error::Owned { copy, source } => {
                write!(f, "cannot read what secret-sync owns in {copy}: {source}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Apply { source, .. } | Error::Delete { source, .. } => Some(source),
            Error::Owned { source, .. } => Some(source),
        }
    }
}

fn parse(selector: &str) -> Selector {
    // `a=b,c=d` selectors; anything else selects everything, which the CLI rejects earlier.
    selector
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// The caches and clients the reconciles share.
struct Syncer {
    options: Options,
    /// `options.selector`, parsed.
    sources: Selector,
    /// `options.namespace_selector`, parsed.
    targets: Selector,
    secrets: SecretLister,
    clients: Clientset,
    recorder: Recorder,
    /// Conflicts already reported, so each is reported once until it is resolved.
    reported: Mutex<BTreeSet<String>>,
    on_report: Box<dyn Fn(&Report) + Send + Sync>,
}

impl Syncer {
    /// The copy of `source` in `namespace`: the fields secret-sync owns there (its mark,
    /// the source's uid, data and type). A data key the source drops is dropped from the
    /// copy by the next apply, as secret-sync stops applying it.
    fn copy_of(&self, source: &Secret, namespace: &str) -> SecretApplyConfiguration {
        let mut copy = SecretApplyConfiguration::new(&source.name_any(), namespace)
            .with_labels([(COPY_LABEL, self.options.source_namespace.as_str())])
            .with_annotations([(SOURCE_UID.to_owned(), source.uid().unwrap_or_default())])
            .with_data(source.data.clone().unwrap_or_default());
        if let Some(type_) = &source.type_ {
            copy = copy.with_type(type_.clone());
        }
        copy
    }

    /// The selected sources, from the cache.
    fn sources(&self) -> Vec<Arc<Secret>> {
        self.secrets
            .secrets(&self.options.source_namespace)
            .list(&self.sources)
    }

    /// Brings the copies in `namespace` in line with the sources, noting in `report` what
    /// it wrote: a copy of every source when the namespace is selected, none otherwise.
    async fn sync(&self, namespace: &Namespace, report: &mut Report) -> Result<(), Error> {
        let ns = namespace.name_any();
        let sources = if self.targets.matches(namespace.labels()) {
            self.sources()
        } else {
            Vec::new()
        };
        let api = self.clients.core_v1().secrets(&ns);
        let mut conflicts = BTreeSet::new();
        for source in &sources {
            let wanted = self.copy_of(source, &ns);
            let copy = format!("{ns}/{}", source.name_any());
            match self.secrets.secrets(&ns).get(&source.name_any()) {
                Err(_) => {
                    // Created by applying. secret-sync does not force, so a same-name
                    // secret the cache has not shown yet is not overwritten: its differing
                    // fields conflict, and the retry reports it.
                    api.apply(&wanted).await.map_err(|source| Error::Apply {
                        copy: copy.clone(),
                        source,
                    })?;
                    report.created.push(copy);
                }
                Ok(existing)
                    if existing.labels().get(COPY_LABEL)
                        != Some(&self.options.source_namespace) =>
                {
                    // Not ours: never touched; reported once until it is resolved.
                    conflicts.insert(copy.clone());
                    if self.lock_reported().insert(copy.clone()) {
                        self.report_conflict(source, &copy).await;
                        report.conflicts.push(copy);
                    }
                }
                Ok(existing) => {
                    // What secret-sync owns in the copy, against what it wants there.
                    let owned = extract_secret(&existing, api.field_manager().name()).map_err(
                        |source| Error::Owned {
                            copy: copy.clone(),
                            source,
                        },
                    )?;
                    if owned != wanted {
                        api.apply(&wanted).await.map_err(|source| Error::Apply {
                            copy: copy.clone(),
                            source,
                        })?;
                        report.updated.push(copy);
                    }
                }
            }
        }
        let prefix = format!("{ns}/");
        self.lock_reported()
            .retain(|k| !k.starts_with(&prefix) || conflicts.contains(k));
        // Copies whose source is gone (or no longer selected, or this namespace no longer
        // is) go too. Those of a source still selected were brought in line above, so a
        // source's name is enough to tell.
        let ours: Selector = [(COPY_LABEL.to_owned(), self.options.source_namespace.clone())]
            .into_iter()
            .collect();
        for copy in self.secrets.secrets(&ns).list(&ours) {
            let name = copy.name_any();
            if sources.iter().any(|s| s.name_any() == name) {
                continue;
            }
            let deleted = api.delete(&name, &DeleteParams::default()).await;
            match deleted {
                Ok(_) => report.deleted.push(format!("{ns}/{name}")),
                // Gone already: what this delete wanted.
                Err(e) if is_not_found(&e) => {}
                Err(source) => {
                    return Err(Error::Delete {
                        copy: format!("{ns}/{name}"),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    fn lock_reported(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.reported.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A `NameConflict` Warning event on `source` about the secret `copy` that is not ours.
    async fn report_conflict(&self, source: &Secret, copy: &str) {
        let note =
            format!("secret {copy} exists and was not created by secret-sync; not overwritten");
        let event = Event {
            type_: EventType::Warning,
            reason: "NameConflict".into(),
            note: Some(note),
            action: "Sync".into(),
            secondary: None,
        };
        // The report goes out whether or not the event does.
        let _ = self.recorder.publish(&event, &source.object_ref(&())).await;
    }
}

/// Syncs one namespace (skipping the source namespace and one being deleted), and hands
/// what it wrote to `on_report`, also when it failed part of the way.
async fn reconcile(namespace: Arc<Namespace>, syncer: Arc<Syncer>) -> Result<Action, Error> {
    if namespace.name_any() == syncer.options.source_namespace
        || namespace.metadata.deletion_timestamp.is_some()
    {
        return Ok(Action::Done);
    }
    let mut report = Report::default();
    let synced = syncer.sync(&namespace, &mut report).await;
    if report != Report::default() {
        (syncer.on_report)(&report);
    }
    synced.map(|()| Action::Done)
}

/// The namespaces a change of `secret` concerns: every namespace for a selected source,
/// the secret's own for a copy or a secret named as a selected source.
fn namespaces_of(secret: &Secret, syncer: &Syncer, namespaces: &NamespaceLister) -> Vec<ObjectKey> {
    let ns = secret.namespace().unwrap_or_default();
    let key = |name: String| ObjectKey {
        namespace: None,
        name,
    };
    if ns == syncer.options.source_namespace {
        if !syncer.sources.matches(secret.labels()) {
            return Vec::new();
        }
        return namespaces
            .list(&Selector::default())
            .iter()
            .map(|n| n.name_any())
            .filter(|n| *n != ns)
            .map(key)
            .collect();
    }
    let copy = secret.labels().get(COPY_LABEL) == Some(&syncer.options.source_namespace);
    let named_as_source = || {
        syncer
            .secrets
            .secrets(&syncer.options.source_namespace)
            .get(&secret.name_any())
            .is_ok_and(|s| syncer.sources.matches(s.labels()))
    };
    if copy || named_as_source() {
        vec![key(ns)]
    } else {
        Vec::new()
    }
}

/// The field manager secret-sync applies its copies with.
const FIELD_MANAGER: &str = "secret-sync";

/// Runs until `shutdown`: a controller of Namespaces (see the crate's documentation) under
/// the runtime's manager; each namespace's report of what it wrote goes to `on_report`.
///
/// # Errors
/// When the caches do not have their first lists within two minutes.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: BoxFuture<'static, ()>,
    on_report: impl Fn(&Report) + Send + Sync + 'static,
) -> Result<(), String> {
    // `sync` extracts what secret-sync owns from the cached copies, which needs its own
    // `managedFields` entries; the factory drops the others', and every other kind's.
    let factory = SharedInformerFactory::builder(client.clone())
        .keep_managed_fields_of::<Secret>([FIELD_MANAGER])
        .build();
    let secrets = factory.core().v1().secrets();
    let namespaces = factory.core().v1().namespaces();
    let syncer = Arc::new(Syncer {
        sources: parse(&options.selector),
        targets: parse(&options.namespace_selector),
        options,
        secrets: secrets.lister(),
        clients: Clientset::new(client.clone(), FieldManager::new(FIELD_MANAGER)),
        recorder: Recorder::new(
            client.clone(),
            Reporter {
                controller: "secret-sync".into(),
                instance: None,
            },
        ),
        reported: Mutex::default(),
        on_report: Box::new(on_report),
    });
    let mut manager = Manager::new(client, factory, ManagerOptions::default(), shutdown);
    let (mapping, lister) = (Arc::clone(&syncer), namespaces.lister());
    let controller = Controller::new("secret-sync", namespaces.informer().clone())
        // A namespace's labels decide whether it gets copies; its other changes do not matter.
        .with_predicate(predicate::labels_changed())
        .watches(secrets.informer().clone(), move |secret: &Secret| {
            namespaces_of(secret, &mapping, &lister)
        });
    manager.add(controller, reconcile, syncer);
    manager.run().await.map_err(|e| e.to_string())
}
