//! Finalizers in the order kube-apiserver needs: a finalizer is added before the controller
//! makes anything outside the object (else a deletion between the two would leave it
//! behind), its clean-up runs once deletion has started, and it is removed only after the
//! clean-up succeeded, which lets the server delete the object.
//!
//! Each write carries the `resourceVersion` it was computed from, as controller-runtime's
//! `controllerutil.AddFinalizer` followed by an update does: a concurrent change fails it
//! (`409 Conflict`), and the key is retried from the fresh object.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::Action;

/// What [`finalize`] asks the reconcile to do.
#[derive(Debug)]
pub enum Event<K> {
    /// The object lives (and carries the finalizer): bring the world in line with it.
    Apply(Arc<K>),
    /// The object is being deleted: undo what the controller made outside it. Once this
    /// succeeds, the finalizer is removed; it runs again (after a backoff) until it does.
    Cleanup(Arc<K>),
}

/// Why [`finalize`] failed.
#[derive(Debug)]
pub enum FinalizerError<E> {
    /// The reconcile (apply or clean-up) failed.
    Reconcile(E),
    /// Adding or removing the finalizer failed (a conflicting change included).
    Patch(kube::Error),
    /// The finalizer name is empty or not a qualified name with a `/`.
    InvalidName(String),
}

impl<E: std::fmt::Display> std::fmt::Display for FinalizerError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FinalizerError::Reconcile(e) => write!(f, "{e}"),
            FinalizerError::Patch(e) => write!(f, "cannot change the finalizers: {e}"),
            FinalizerError::InvalidName(name) => write!(
                f,
                "finalizer {name:?} is not a qualified name (`example.com/cleanup`)"
            ),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for FinalizerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FinalizerError::Reconcile(e) => Some(e),
            FinalizerError::Patch(e) => Some(e),
            FinalizerError::InvalidName(_) => None,
        }
    }
}

/// Runs `reconcile` under finalizer `name` (a qualified name, `example.com/cleanup`):
///
/// - a live object without the finalizer gets it, and nothing else happens this time (the
///   write brings the object back with it);
/// - a live object with it: `reconcile(Event::Apply(obj))`;
/// - an object being deleted with it: `reconcile(Event::Cleanup(obj))`, then the finalizer
///   is removed;
/// - an object being deleted without it: nothing to do.
pub async fn finalize<K, F, R, E>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Resource + Clone + Debug + DeserializeOwned,
    F: FnOnce(Event<K>) -> R,
    R: Future<Output = Result<Action, E>>,
{
    if name.is_empty() || !name.contains('/') {
        return Err(FinalizerError::InvalidName(name.to_owned()));
    }
    let finalizers = obj.finalizers();
    let index = finalizers.iter().position(|f| f == name);
    let deleting = obj.meta().deletion_timestamp.is_some();
    match (deleting, index) {
        (false, Some(_)) => reconcile(Event::Apply(obj))
            .await
            .map_err(FinalizerError::Reconcile),
        (false, None) => {
            let mut finalizers = finalizers.to_vec();
            finalizers.push(name.to_owned());
            write(api, &obj, finalizers).await?;
            Ok(Action::Done)
        }
        (true, Some(index)) => {
            let action = reconcile(Event::Cleanup(Arc::clone(&obj)))
                .await
                .map_err(FinalizerError::Reconcile)?;
            let mut finalizers = finalizers.to_vec();
            finalizers.remove(index);
            write(api, &obj, finalizers).await?;
            Ok(action)
        }
        (true, None) => Ok(Action::Done),
    }
}

/// Writes `finalizers` with a merge patch that carries the `resourceVersion` read: the
/// server refuses it (`409`) when the object changed since.
async fn write<K, E>(
    api: &Api<K>,
    obj: &K,
    finalizers: Vec<String>,
) -> Result<(), FinalizerError<E>>
where
    K: Resource + Clone + Debug + DeserializeOwned,
{
    let patch = json!({
        "metadata": {
            "finalizers": finalizers,
            "resourceVersion": obj.resource_version(),
        }
    });
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
    .map_err(FinalizerError::Patch)
}
