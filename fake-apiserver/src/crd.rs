//! CustomResourceDefinitions: accepting one, and serving (or no longer serving) its resources.

use serde_json::Value;

use crate::meta::now;
use crate::rules::{self, field::FieldError};
use crate::store::State;

impl State {
    /// The CRD admission of a create (`old` is `None`) or an update: v1 defaults, then the
    /// apiextensions rules; warnings go to the request. The errors join the metadata errors
    /// in one 422.
    pub(crate) fn review_crd(
        &self,
        old: Option<&Value>,
        crd: &mut Value,
        warnings: &mut Vec<String>,
    ) -> Vec<FieldError> {
        rules::crd::apply_defaults(crd);
        let review = match old {
            None => rules::crd::validate(crd),
            Some(old) => rules::crd::validate_update(old, crd),
        };
        warnings.extend(review.warnings);
        let mut errors = rules::crd::name_errors(crd);
        errors.extend(review.errors);
        errors
    }

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
