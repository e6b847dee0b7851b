//! `POST /api/v1/namespaces/<ns>/pods/<name>/binding`: a Pod bound to a node, as a scheduler
//! binds it and as kube-apiserver's `BindingREST` answers: the Binding's name must be the
//! Pod's, its target a Node with a name; a Pod already on a node is a 409 on `pods/binding`,
//! one being deleted is refused; else `spec.nodeName` is set, the Binding's annotations are
//! added to the Pod's, the `PodScheduled` condition becomes `True`, and the answer is a
//! `Success` Status. (`spec.nodeName` cannot be changed by an update: this is the way.)

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::meta::now;
use crate::resource::ResourceType;
use crate::rules::field::FieldError;
use crate::store::{Shared, State};

/// Binds Pod `name` of `namespace` as the Binding `body` says.
pub(crate) fn create(
    shared: &Shared,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let binding: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a Binding: {e}")))?;
    if binding.pointer("/metadata/name").and_then(Value::as_str) != Some(name) {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut causes = Vec::new();
    if !kind.is_empty() && kind != "Node" {
        causes.push(FieldError::not_supported(
            "target.kind",
            &json!(kind),
            &["Node", "<empty>"],
        ));
    }
    if node.is_empty() {
        causes.push(FieldError::required("target.name", ""));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid("", "Binding", name, causes));
    }
    let mut state = shared.lock();
    let key = State::key(rt, Some(namespace), name);
    let mut pod = state
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        return Err(ApiError::internal(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    if let Some(assigned) = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        return Err(ApiError::conflict(
            "",
            "pods/binding",
            name,
            &format!("pod {name} is already assigned to node \"{assigned}\""),
        ));
    }
    pod["spec"]["nodeName"] = json!(node);
    if let Some(added) = binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .filter(|a| !a.is_empty())
    {
        let annotations = &mut pod["metadata"]["annotations"];
        if !annotations.is_object() {
            *annotations = json!({});
        }
        for (k, v) in added {
            annotations[k] = v.clone();
        }
    }
    let conditions = &mut pod["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut().expect("an array");
    match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) if c["status"] == "True" => {}
        Some(c) => {
            c["status"] = json!("True");
            c["lastTransitionTime"] = json!(now());
        }
        None => list.push(json!({
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": null,
            "lastTransitionTime": now(),
        })),
    }
    state.store.bump_and_put(key, pod);
    Ok(json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }))
}
