//! The Icecream controller: like Foo it owns a Deployment, and it reports where that
//! Deployment's pods run: available replicas, the sorted node names, and pods per phase.

// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=icecreams,verbs=get;list;watch
// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=icecreams/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::core::Selector;
use kube_codegen_runtime::controller::{Action, ObjectKey};
use kube_codegen_runtime::events::EventType;

use super::foo::SUCCESS_SYNCED;
use super::{Context, Error, desired_deployment, key, sync_deployment};
use crate::apis::samplecontroller::v1alpha1::{Icecream, IcecreamStatus};
use crate::generated::samplecontroller::v1alpha1::{
    IcecreamApplyConfiguration, IcecreamStatusApplyConfiguration,
};

/// The label that ties an Icecream's Deployment and pods to it.
pub const ICECREAM_LABEL: &str = "samplecontroller.k8s.io/icecream";

/// The labels of an Icecream's Deployment and pods.
pub fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_owned(), "icecream".to_owned()),
        (ICECREAM_LABEL.to_owned(), name.to_owned()),
    ])
}

/// Brings the Icecream's Deployment in line with its spec and its status in line with its pods.
pub async fn reconcile(icecream: Arc<Icecream>, ctx: Arc<Context>) -> Result<Action, Error> {
    let ns = icecream.namespace().unwrap_or_default();
    let icecream = ctx.icecream_writes.latest(icecream);
    let name = icecream.spec.deployment_name.trim();
    if name.is_empty() {
        let msg = format!("{}: deployment name must be specified", key(&*icecream));
        tracing::error!(object = %key(&*icecream), "{msg}");
        ctx.event(&*icecream, EventType::Warning, "InvalidSpec", msg);
        return Ok(Action::await_change());
    }
    let wanted = desired_deployment(
        &*icecream,
        name,
        icecream.spec.replicas,
        &labels(&icecream.name_any()),
    );
    let (deployment, mut changed) = sync_deployment(&ctx, &*icecream, name, wanted).await?;
    let status = observed(
        &icecream.name_any(),
        &ctx.pods.pods(&ns).list(&Selector::default()),
        &deployment,
    );
    if icecream.status.as_ref() != Some(&status) {
        let config = IcecreamApplyConfiguration::new(&icecream.name_any(), &ns)
            .with_status(status_configuration(&status));
        let written = ctx
            .clients
            .samplecontroller_v1alpha1()
            .icecreams(&ns)
            .apply_status(&config)
            .await?;
        ctx.icecream_writes.record(&icecream, written);
        changed = true;
    }
    if changed {
        ctx.event(
            &*icecream,
            EventType::Normal,
            SUCCESS_SYNCED,
            "Icecream synced successfully".into(),
        );
    }
    Ok(Action::await_change())
}

/// The status an Icecream should have, from its pods and Deployment.
pub fn observed(
    name: &str,
    pods: &[Arc<Pod>],
    deployment: &k8s_openapi::api::apps::v1::Deployment,
) -> IcecreamStatus {
    let ours: Vec<&Arc<Pod>> = pods
        .iter()
        .filter(|p| p.labels().get(ICECREAM_LABEL).map(String::as_str) == Some(name))
        .collect();
    let nodes: BTreeSet<String> = ours
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    let mut pod_phases = BTreeMap::new();
    for p in &ours {
        let phase = p
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Unknown".into());
        *pod_phases.entry(phase).or_insert(0) += 1;
    }
    IcecreamStatus {
        available_replicas: deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0),
        nodes: nodes.into_iter().collect(),
        pod_phases,
    }
}

/// A status as the apply configuration that states all of it: this controller owns the
/// whole status, so a node or phase it no longer reports goes.
pub fn status_configuration(status: &IcecreamStatus) -> IcecreamStatusApplyConfiguration {
    IcecreamStatusApplyConfiguration::default()
        .with_available_replicas(status.available_replicas)
        .with_nodes(status.nodes.iter().cloned())
        .with_pod_phases(status.pod_phases.iter().map(|(k, v)| (k.clone(), *v)))
}

/// Maps a Pod to its Icecream through the Icecream label.
pub fn pod_owner(pod: &Pod) -> Vec<ObjectKey> {
    match (pod.labels().get(ICECREAM_LABEL), pod.namespace()) {
        (Some(name), Some(namespace)) => vec![ObjectKey {
            namespace: Some(namespace),
            name: name.clone(),
        }],
        _ => Vec::new(),
    }
}
