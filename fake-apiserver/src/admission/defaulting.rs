//! Defaulting: what kube-apiserver does to a built-in object around its field manager.
//! Before it, the decoder's defaults ([`default_builtin`]; owned by the writer, so they are
//! in `managedFields`); after it, admission plugins, the registry strategy, a read's
//! defaults and a Service's allocated addresses ([`after_field_manager`]; owned by nobody).
//! Both are apiserver-rules' [`defaults`](crate::rules::defaults). Custom resources are
//! defaulted by their schema, in [`validation`](super::validation).

use serde_json::Value;

use crate::error::ApiError;
use crate::meta::{name_of, random_suffix};
use crate::resource::ResourceType;
use crate::rules::defaults;
use crate::store::State;

/// A built-in object as the real server's decoder reads and defaults it (see
/// [`defaults::decode`]); what the field manager then records is owned.
pub(crate) fn default_builtin(rt: &ResourceType, obj: &mut Value) {
    if !rt.custom {
        defaults::decode(&rt.api_version(), &rt.kind, obj);
    }
}

/// What the real server does to a built-in object after the field manager (so nobody owns
/// it): admission plugins, the strategy, the defaults of a read from storage, and a
/// Service's cluster IP and node ports, given back on delete and kept on a dry run.
pub(crate) fn after_field_manager(
    state: &mut State,
    rt: &ResourceType,
    obj: &mut Value,
    old: Option<&Value>,
    dry_run: bool,
) -> Result<(), ApiError> {
    if rt.custom {
        return Ok(());
    }
    let api_version = rt.api_version();
    match old {
        Some(old) => defaults::prepare_update(&api_version, &rt.kind, obj, old),
        None => {
            let account = if rt.is("", "pods") {
                pod_service_account(state, obj)
            } else {
                None
            };
            let suffix = random_suffix(state.store.resource_version().wrapping_mul(31));
            let admission = defaults::Admission {
                service_account: account.as_ref(),
                suffix: &suffix,
            };
            defaults::prepare_create(&api_version, &rt.kind, obj, &admission);
        }
    }
    if rt.is("", "services") {
        let errors = state.services.assign(obj, old, !dry_run);
        if !errors.is_empty() {
            let name = name_of(obj).unwrap_or("").to_owned();
            return Err(ApiError::invalid("", &rt.kind, &name, errors));
        }
    }
    Ok(())
}

/// The ServiceAccount a new pod runs as (`default` when it names none), if it exists.
fn pod_service_account(state: &State, pod: &Value) -> Option<Value> {
    let ns = pod.pointer("/metadata/namespace").and_then(Value::as_str);
    let account = pod
        .pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .unwrap_or("default");
    let key = (
        String::new(),
        "serviceaccounts".into(),
        ns.unwrap_or("").into(),
        account.into(),
    );
    state.store.get(&key)
}
