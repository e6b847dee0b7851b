//! CustomResourceDefinitions: accepting one, and serving (or no longer serving) its resources.

use serde_json::Value;

use crate::meta::now;
use crate::resource;
use crate::rules::{self, field::FieldError};
use crate::state::State;

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

    pub(crate) fn register_crd(&mut self, crd: &Value) {
        let Ok(new_types) = resource::from_crd(crd) else {
            return;
        };
        if let Some(first) = new_types.first() {
            let (g, p) = (first.group.clone(), first.plural.clone());
            self.types.retain(|t| !(t.group == g && t.plural == p));
        }
        self.types
            .extend(new_types.into_iter().map(std::sync::Arc::new));
    }

    pub(crate) fn unregister_crd(&mut self, crd: &Value) {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.types
            .retain(|t| !(t.custom && t.group == group && t.plural == plural));
        for key in self.store.keys(&(group, plural)) {
            if let Some(obj) = self.store.get(&key) {
                self.remove_now(&key, obj);
            }
        }
    }
}
