//! The CA bundle written where the API server reads it: each webhook's
//! `clientConfig.caBundle` in the operator's webhook configurations, and
//! `spec.conversion.webhook.clientConfig.caBundle` of its CRDs that convert through a
//! webhook. Each write is a JSON patch that first tests the `resourceVersion` read, so a
//! change made meanwhile by someone else is never overwritten (the next pass reads again).

use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

use super::{CertConfig, CertError};

/// The webhook configuration kinds: `(kind, plural)`.
const CONFIGURATIONS: [(&str, &str); 2] = [
    (
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    ),
    (
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
    ),
];

fn api(client: &kube::Client, group: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, "v1", kind);
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

/// What a pass of [`inject`] did.
#[derive(Debug, Default)]
pub(super) struct Injected {
    /// `kind/name` of each object patched.
    pub(super) patched: Vec<String>,
    /// `kind/name` of each object that already held the bundle.
    pub(super) current: Vec<String>,
}

/// Writes `bundle` (base64 of the CA bundle's PEM) into the configured targets.
pub(super) async fn inject(
    client: &kube::Client,
    config: &CertConfig,
    bundle: &str,
) -> Result<Injected, CertError> {
    let mut done = Injected::default();
    let params = PatchParams {
        field_manager: Some(config.field_manager.clone()),
        ..PatchParams::default()
    };
    for (kind, plural) in CONFIGURATIONS {
        let api = api(client, "admissionregistration.k8s.io", kind, plural);
        let mut objects = Vec::new();
        for name in &config.webhook_configurations {
            objects.extend(api.get_opt(name).await?);
        }
        if let Some(selector) = &config.webhook_selector {
            let listed = api.list(&ListParams::default().labels(selector)).await?;
            for object in listed {
                if !objects
                    .iter()
                    .any(|o| o.metadata.name == object.metadata.name)
                {
                    objects.push(object);
                }
            }
        }
        for object in objects {
            let object = serde_json::to_value(&object).map_err(kube::Error::SerdeError)?;
            let mut webhooks = object["webhooks"].clone();
            let mut changed = false;
            for hook in webhooks.as_array_mut().into_iter().flatten() {
                if hook["clientConfig"]["caBundle"].as_str() != Some(bundle) {
                    hook["clientConfig"]["caBundle"] = json!(bundle);
                    changed = true;
                }
            }
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let id = format!("{kind}/{name}");
            if !changed {
                done.current.push(id);
                continue;
            }
            let ops = json!([
                {"op": "test", "path": "/metadata/resourceVersion",
                 "value": object["metadata"]["resourceVersion"]},
                {"op": "replace", "path": "/webhooks", "value": webhooks},
            ]);
            api.patch(name, &params, &json_patch(ops)?).await?;
            done.patched.push(id);
        }
    }
    let crds = api(
        client,
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    );
    for name in &config.crds {
        let Some(crd) = crds.get_opt(name).await? else {
            continue;
        };
        let crd = serde_json::to_value(&crd).map_err(kube::Error::SerdeError)?;
        let conversion = &crd["spec"]["conversion"];
        // A CRD that does not convert through a webhook is left as it is: a caBundle with
        // no webhook is refused, and a webhook is not this manager's to add.
        if conversion["strategy"] != "Webhook" || !conversion["webhook"]["clientConfig"].is_object()
        {
            continue;
        }
        let id = format!("CustomResourceDefinition/{name}");
        if conversion["webhook"]["clientConfig"]["caBundle"].as_str() == Some(bundle) {
            done.current.push(id);
            continue;
        }
        let ops = json!([
            {"op": "test", "path": "/metadata/resourceVersion",
             "value": crd["metadata"]["resourceVersion"]},
            {"op": "add", "path": "/spec/conversion/webhook/clientConfig/caBundle", "value": bundle},
        ]);
        crds.patch(name, &params, &json_patch(ops)?).await?;
        done.patched.push(id);
    }
    Ok(done)
}

fn json_patch(ops: Value) -> Result<Patch<()>, kube::Error> {
    let patch: json_patch::Patch = serde_json::from_value(ops).map_err(kube::Error::SerdeError)?;
    Ok(Patch::Json(patch))
}
