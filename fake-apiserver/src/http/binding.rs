//! `POST /api/v1/namespaces/<ns>/pods/<name>/binding`: a Pod bound to a node, as a scheduler
//! binds it and as kube-apiserver's `BindingREST` answers: the Binding's name must be the
//! Pod's, its target a Node with a name (else a 500 whose message is the field errors, since
//! the real server returns them as a plain error); its `uid` and `resourceVersion`, when given, must
//! be the Pod's (409); a Pod already on a node is a 409 on `pods/binding`, one with
//! scheduling gates or being deleted is refused; else `spec.nodeName` is set, the Binding's
//! annotations are added to the Pod's, the `PodScheduled` condition becomes `True` (replaced
//! whole), and the answer is a `Success` Status. With `dryRun` nothing is stored.
//! (`spec.nodeName` cannot be changed by an update on kube-apiserver: this is the way.)

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
    dry_run: bool,
) -> Result<Value, ApiError> {
    let binding: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not a Binding: {e}")))?;
    if binding.pointer("/metadata/name").and_then(Value::as_str) != Some(name) {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let node = target_node(&binding)?;
    let node = node.as_str();
    let mut state = shared.lock();
    let key = State::key(rt, Some(namespace), name);
    let mut pod = state
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    check_preconditions(&binding, &pod, name)?;
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
    // Replaced whole, as `UpdatePodCondition` does: the time moves only with the status.
    let scheduled = |since: Value| {
        json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
            "lastTransitionTime": since})
    };
    match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) => {
            let since = if c["status"] == "True" {
                c["lastTransitionTime"].clone()
            } else {
                json!(now())
            };
            *c = scheduled(since);
        }
        None => list.push(scheduled(json!(now()))),
    }
    if dry_run {
        return Ok(success());
    }
    state.store.bump_and_put(key, pod);
    Ok(success())
}

/// The Binding's node, or kube-apiserver's 500 quoting what is wrong with its target.
fn target_node(binding: &Value) -> Result<String, ApiError> {
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
        let text: Vec<String> = causes.iter().map(ToString::to_string).collect();
        return Err(ApiError::internal(if text.len() == 1 {
            text[0].clone()
        } else {
            format!("[{}]", text.join(", "))
        }));
    }
    Ok(node.to_owned())
}

/// The Binding's `uid` and `resourceVersion` preconditions, and the Pod's scheduling gates.
fn check_preconditions(binding: &Value, pod: &Value, name: &str) -> Result<(), ApiError> {
    let conflict = |why: String| ApiError::conflict("", "pods", name, &why);
    if let Some(uid) = binding.pointer("/metadata/uid").and_then(Value::as_str)
        && Some(uid) != pod.pointer("/metadata/uid").and_then(Value::as_str)
    {
        return Err(conflict(format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            pod.pointer("/metadata/uid")
                .and_then(Value::as_str)
                .unwrap_or("")
        )));
    }
    if let Some(rv) = binding
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|rv| !rv.is_empty())
        && Some(rv)
            != pod
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
    {
        return Err(conflict(format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            pod.pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
        )));
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        return Err(ApiError::conflict(
            "",
            "pods/binding",
            name,
            &format!("pod {name} has non-empty .spec.schedulingGates"),
        ));
    }
    Ok(())
}

fn success() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    })
}
