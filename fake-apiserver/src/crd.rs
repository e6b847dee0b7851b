//! CustomResourceDefinitions: accepting one, and serving (or no longer serving) its resources.

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::registry;
use crate::rules::field::FieldError;
use crate::state::{State, name_of, now};
use crate::store::ObjectKey;

/// `metadata.name` of a CRD must be `<plural>.<group>`.
pub(crate) fn name_errors(crd: &Value) -> Vec<FieldError> {
    let name = name_of(crd).unwrap_or("");
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name == format!("{plural}.{group}") {
        Vec::new()
    } else {
        vec![FieldError::invalid_str(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        )]
    }
}

impl State {
    /// Checks a CRD and fills its status the way an established CRD looks.
    pub(crate) fn accept_crd(&self, crd: &mut Value) -> Result<(), ApiError> {
        let types = registry::from_crd(crd).map_err(|e| {
            ApiError::invalid(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                name_of(crd).unwrap_or(""),
                vec![FieldError::invalid_str("spec", "", e)],
            )
        })?;
        let first = types.first();
        let stored: Vec<String> = first
            .map(|t| vec![t.storage_version.clone()])
            .unwrap_or_default();
        let time = now();
        let cond = |t: &str, reason: &str, msg: &str| json!({"type": t, "status": "True", "lastTransitionTime": time, "reason": reason, "message": msg});
        crd["status"] = json!({
            "conditions": [
                cond("NamesAccepted", "NoConflicts", "no conflicts found"),
                cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
            "acceptedNames": crd.pointer("/spec/names").cloned().unwrap_or(json!({})),
            "storedVersions": stored,
        });
        Ok(())
    }

    pub(crate) fn register_crd(&mut self, crd: &Value) {
        let Ok(new_types) = registry::from_crd(crd) else {
            return;
        };
        if let Some(first) = new_types.first() {
            let (g, p) = (first.group.clone(), first.plural.clone());
            self.types.retain(|t| !(t.group == g && t.plural == p));
        }
        self.types.extend(new_types);
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
        let keys: Vec<ObjectKey> = self
            .store
            .all()
            .filter(|(k, _)| k.0 == group && k.1 == plural)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if let Some(obj) = self.store.get(&key).cloned() {
                self.remove_now(&key, obj);
            }
        }
    }
}
