//! Metadata-only informers: a kind's objects cached as their `metadata` alone (kube's
//! [`PartialObjectMeta<K>`], client-go's `PartialObjectMetadata` and its `metadatainformer`),
//! for a controller that reads only names, labels, annotations, owners or deletion marks of
//! many objects (every Pod, Secret or ConfigMap of a cluster).
//!
//! They are informers of the factory like the others: one watch per kind (a kind may have
//! both a full and a metadata-only informer, each with its own watch), started, synced and
//! shut down with the rest, and the same late-registration rule. They list and watch through
//! `Api<PartialObjectMeta<K>>`, for which kube asks the server for
//! `as=PartialObjectMetadata` (what kube's deprecated `metadata_watcher` did), so the server
//! sends metadata only.

use std::fmt::Debug;

use kube::Resource;
use kube::api::{ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;

use crate::informer::SharedInformer;
use crate::informer::factory::{ScopeApi, SharedInformerFactory};
use crate::informer::lister::Lister;

/// The metadata-only informer of `K`: `SharedInformer<PartialObjectMeta<K>>`, with handlers,
/// streams, indexers and sync state like any informer.
pub type MetadataInformer<K> = SharedInformer<PartialObjectMeta<K>>;

/// A lister over a metadata-only informer's cache: `get`, `namespace(ns)`, `list(&selector)`
/// return `Arc<PartialObjectMeta<K>>`.
pub type MetadataLister<K> = Lister<PartialObjectMeta<K>>;

impl SharedInformerFactory {
    /// The metadata-only informer of `K` (built-in or custom): the same one on every call.
    ///
    /// Its transform, resync period and `managedFields` choice are those of the cached type,
    /// `PartialObjectMeta<K>` (`transform_for::<PartialObjectMeta<K>>`, ...).
    pub fn metadata_informer<K>(&self) -> MetadataInformer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        K::Scope: ScopeApi,
    {
        // The factory keeps informers by cached type too: this is
        // `informer::<PartialObjectMeta<K>>()`.
        self.informer::<PartialObjectMeta<K>>()
    }

    /// The metadata-only informer of a resource known only at run time, found by discovery
    /// (`metadata_for_resource("", "v1", "secrets")`).
    pub async fn metadata_for_resource(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Result<MetadataInformer<DynamicObject>, kube::Error> {
        let (ar, namespaced) = self.discover(group, version, resource).await?;
        Ok(self.metadata_dynamic(ar, namespaced))
    }

    /// The metadata-only informer of the resource `ar` (no discovery).
    pub fn metadata_dynamic(
        &self,
        ar: ApiResource,
        namespaced: bool,
    ) -> MetadataInformer<DynamicObject> {
        let key = crate::informer::factory::resource_key(&ar.group, &ar.version, &ar.plural);
        self.get_or_insert(key, || {
            let api = self.api_with(&ar, namespaced);
            let options = self.options::<PartialObjectMeta<DynamicObject>>();
            self.forgetting_aside(SharedInformer::new_with(api, ar, options))
        })
    }
}
