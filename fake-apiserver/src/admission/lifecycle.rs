//! NamespaceLifecycle: what is created in a namespace needs the namespace, and not one
//! being deleted.

use serde_json::json;

use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::store::State;

/// The NamespaceLifecycle admission of a create: the namespace must exist and not be
/// terminating.
pub(crate) fn admit_create(
    state: &State,
    rt: &ResourceType,
    ns: &str,
    name: &str,
) -> Result<(), ApiError> {
    if !state.namespace_exists(ns) {
        return Err(ApiError::not_found("", "namespaces", ns));
    }
    if state.namespace_terminating(ns) {
        let name = if name.is_empty() { "Unknown" } else { name };
        return Err(ApiError::forbidden(
            &rt.group,
            &rt.plural,
            name,
            &format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            ),
            vec![
                json!({"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}),
            ],
        ));
    }
    Ok(())
}
