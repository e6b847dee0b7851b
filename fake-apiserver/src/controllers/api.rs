//! The API the controllers write through.

use serde_json::Value;

use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::store::objects::ObjectKey;

/// What a controller asks of the API server, as kube-controller-manager asks through its
/// client; the registry implements it for the state.
pub(crate) trait Api {
    /// Creates `obj` in `namespace` as field manager `manager`, as a client's create would.
    fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError>;

    /// Replaces object `name` in `namespace` with `obj` as field manager `manager`, as a
    /// client's update would.
    fn update(
        &mut self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError>;

    /// Removes `old` (stored at `key`, its finalizers done) at a new version, and lets the
    /// controllers react; the object as it was removed.
    fn remove(&mut self, key: &ObjectKey, old: Value) -> Value;
}
