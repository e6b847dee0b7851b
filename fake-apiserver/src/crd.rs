//! CustomResourceDefinitions: accepting one, and serving (or no longer serving) its resources.

use serde_json::Value;

use crate::meta::now;
use crate::rules;
use crate::store::State;

impl State {
    /// The status of an accepted CRD: established at once, its names accepted, its
    /// storage version stored (kept from before on an update).
    pub(crate) fn accept_crd(&self, old: Option<&Value>, crd: &mut Value) {
        let mut status = rules::crd::established_status(crd, &now());
        if let Some(stored) = old
            .and_then(|o| o.pointer("/status/storedVersions"))
            .and_then(Value::as_array)
        {
            let mut all = stored.clone();
            for v in status["storedVersions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                if !all.contains(&v) {
                    all.push(v);
                }
            }
            status["storedVersions"] = Value::Array(all);
        }
        crd["status"] = status;
    }
}
