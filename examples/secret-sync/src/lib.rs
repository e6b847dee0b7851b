//! Secret sync: the Secrets of a source namespace that carry a label are copied into every
//! other namespace (or those a selector picks), kept up to date, and removed when their
//! source goes. Level-based: each sync computes the desired copies from the caches, whatever
//! event triggered it. Copies are marked, so secrets the controller did not create are never
//! touched (a same-name one is reported instead).

pub mod apis;
// Formatted by the generator (prettyplease); rustfmt would make it drift from verify.
#[rustfmt::skip]
pub mod generated;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::DeleteParams;
use kube::core::Selector;
use kube::{Client, Resource, ResourceExt};
use kube_codegen_runtime::events::{Event, EventType, Recorder, Reporter};
use kube_codegen_runtime::{FieldManager, Handlers, SharedInformerFactory};
use tokio::sync::mpsc;

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

/// The caches and clients one sync uses.
pub struct Syncer {
    options: Options,
    secrets: SecretLister,
    namespaces: NamespaceLister,
    clients: Clientset,
    recorder: Recorder,
    /// Conflicts already reported, so each is reported once until it is resolved.
    reported: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

/// What one sync did.
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

fn parse(selector: &str) -> Selector {
    // `a=b,c=d` selectors; anything else selects everything, which the CLI rejects earlier.
    selector
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
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

    /// Brings every copy in line with the sources, from the caches.
    pub async fn sync(&self) -> Result<Report, kube::Error> {
        let mut report = Report::default();
        let mut conflicts = std::collections::BTreeSet::new();
        let wanted = parse(&self.options.selector);
        let targets = parse(&self.options.namespace_selector);
        let sources: Vec<Arc<Secret>> = self
            .secrets
            .secrets(&self.options.source_namespace)
            .list(&wanted);
        let namespaces: Vec<Arc<Namespace>> = self
            .namespaces
            .list(&targets)
            .into_iter()
            .filter(|n| {
                n.name_any() != self.options.source_namespace
                    && n.metadata.deletion_timestamp.is_none()
            })
            .collect();
        for ns in &namespaces {
            let ns = ns.name_any();
            let api = self.clients.core_v1().secrets(&ns);
            for source in &sources {
                let wanted_copy = self.copy_of(source, &ns);
                let key = format!("{ns}/{}", source.name_any());
                match self.secrets.secrets(&ns).get(&source.name_any()) {
                    Err(_) => {
                        // Created by applying. secret-sync does not force, so a same-name
                        // secret the cache has not shown yet is not overwritten: its
                        // differing fields conflict, and the retry reports it.
                        api.apply(&wanted_copy).await?;
                        report.created.push(key);
                    }
                    Ok(existing)
                        if existing.labels().get(COPY_LABEL)
                            != Some(&self.options.source_namespace) =>
                    {
                        // Not ours: never touched; reported once until it is resolved.
                        conflicts.insert(key.clone());
                        let new = self
                            .reported
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .insert(key.clone());
                        if new {
                            let note = format!(
                                "secret {key} exists and was not created by secret-sync; not overwritten"
                            );
                            let event = Event {
                                type_: EventType::Warning,
                                reason: "NameConflict".into(),
                                note: Some(note),
                                action: "Sync".into(),
                                secondary: None,
                            };
                            let _ = self.recorder.publish(&event, &source.object_ref(&())).await;
                            report.conflicts.push(key);
                        }
                    }
                    Ok(existing) => {
                        // What secret-sync owns in the copy, against what it wants there.
                        let owned = extract_secret(&existing, api.field_manager().name())
                            .map_err(|e| kube::Error::Service(Box::new(e)))?;
                        if owned != wanted_copy {
                            api.apply(&wanted_copy).await?;
                            report.updated.push(key);
                        }
                    }
                }
            }
        }
        self.reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|k| conflicts.contains(k));
        // Copies whose source is gone (or no longer selected) go too.
        let ours: Selector = [(COPY_LABEL.to_owned(), self.options.source_namespace.clone())]
            .into_iter()
            .collect();
        for copy in self.secrets.list(&ours) {
            let source = sources.iter().find(|s| s.name_any() == copy.name_any());
            let live = source
                .is_some_and(|s| copy.annotations().get(SOURCE_UID) == s.uid().as_ref())
                && namespaces
                    .iter()
                    .any(|n| Some(n.name_any()) == copy.namespace());
            if !live && copy.namespace().as_deref() != Some(&self.options.source_namespace) {
                let ns = copy.namespace().unwrap_or_default();
                self.clients
                    .core_v1()
                    .secrets(&ns)
                    .delete(&copy.name_any(), &DeleteParams::default())
                    .await?;
                report.deleted.push(format!("{ns}/{}", copy.name_any()));
            }
        }
        Ok(report)
    }
}

/// The field manager secret-sync applies its copies with.
const FIELD_MANAGER: &str = "secret-sync";

/// Runs until `shutdown`: every Secret or Namespace change triggers a full sync (debounced),
/// and each sync's report goes to `on_report`.
pub async fn run(
    client: Client,
    options: Options,
    shutdown: BoxFuture<'static, ()>,
    on_report: impl Fn(&Report) + Send + 'static,
) -> Result<(), String> {
    // `sync` extracts what secret-sync owns from the cached copies, which needs its own
    // `managedFields` entries; the factory drops the others', and every other kind's.
    let factory = SharedInformerFactory::builder(client.clone())
        .keep_managed_fields_of::<Secret>([FIELD_MANAGER])
        .build();
    let secrets = factory.core().v1().secrets();
    let namespaces = factory.core().v1().namespaces();
    let (trigger, mut triggered) = mpsc::unbounded_channel::<()>();
    let (a, u, d) = (trigger.clone(), trigger.clone(), trigger.clone());
    secrets.informer().add_event_handler(
        Handlers::new()
            .on_add(move |_: &Arc<Secret>| {
                let _ = a.send(());
            })
            .on_update(move |_, _| {
                let _ = u.send(());
            })
            .on_delete(move |_| {
                let _ = d.send(());
            }),
    );
    let (a, d) = (trigger.clone(), trigger.clone());
    namespaces.informer().add_event_handler(
        Handlers::new()
            .on_add(move |_: &Arc<Namespace>| {
                let _ = a.send(());
            })
            .on_delete(move |_| {
                let _ = d.send(());
            }),
    );
    factory.start();
    let synced = factory.wait_for_cache_sync(Duration::from_secs(60)).await;
    if synced.values().any(|ok| !ok) {
        factory.shutdown().await;
        return Err(format!("caches did not sync: {synced:?}"));
    }
    let syncer = Syncer {
        options,
        secrets: secrets.lister(),
        namespaces: namespaces.lister(),
        clients: Clientset::new(client.clone(), FieldManager::new(FIELD_MANAGER)),
        recorder: Recorder::new(
            client,
            Reporter {
                controller: "secret-sync".into(),
                instance: None,
            },
        ),
        reported: Default::default(),
    };
    let _ = trigger.send(());
    let mut shutdown = shutdown;
    let mut failures = 0u32;
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            t = triggered.recv() => if t.is_none() { break },
        }
        // Debounce: one sync for a burst of events.
        tokio::time::sleep(Duration::from_millis(50)).await;
        while triggered.try_recv().is_ok() {}
        match syncer.sync().await {
            Ok(report) => {
                failures = 0;
                if report != Report::default() {
                    on_report(&report);
                }
            }
            Err(e) => {
                failures += 1;
                eprintln!("sync failed ({e}); retrying");
                tokio::time::sleep(Duration::from_millis(100) * failures.min(50)).await;
                let _ = trigger.send(());
            }
        }
    }
    factory.shutdown().await;
    Ok(())
}
