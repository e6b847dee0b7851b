//! A deleted CRD: its resource is no longer served, and its objects go.

use serde_json::Value;

use super::api::Api;
use crate::store::State;

/// Stops serving `crd`'s resource and removes its objects.
pub(crate) fn deleted(state: &mut State, crd: &Value) {
    let (group, plural) = state.stop_serving_crd(crd);
    for key in state.store.keys(&(group, plural)) {
        if let Some(obj) = state.store.get(&key) {
            Api::remove(state, &key, obj);
        }
    }
}
