//! The controllers: shared context, errors, and the Deployment helpers both Foo and
//! Icecream use. The queue, backoff, metrics and ownership mapping are the runtime's
//! (`kube_codegen_runtime::controller`); `run` wires them.

// What every controller needs: events through the events.k8s.io API (`Recorder`), and the
// Deployments both kinds own (informer; server-side apply, a patch that also needs `create`
// when it creates the Deployment).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch

pub mod foo;
pub mod icecream;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};
use kube_codegen_runtime::applyconfigurations::apps::v1::DeploymentSpecApplyConfiguration;
use kube_codegen_runtime::applyconfigurations::core::v1 as core_ac;
use kube_codegen_runtime::events::{Event, EventType, Recorder};
use kube_codegen_runtime::{FieldManager, ManagedFieldsAside, ReadYourWrites};

use crate::apis::samplecontroller::v1alpha1::{Foo, Icecream};
use crate::generated::Clientset;
use crate::generated::apps::v1::{
    DeploymentApplyConfiguration, DeploymentClient, DeploymentLister, extract_deployment,
};
use crate::generated::core::v1::PodLister;
use crate::generated::samplecontroller::v1alpha1::{FooLister, IcecreamLister};

/// Everything a reconcile needs: typed clients for writes, listers for reads.
pub struct Context {
    /// Typed clients (writes).
    pub clients: Clientset,
    /// Foo cache.
    pub foos: FooLister,
    /// Icecream cache.
    pub icecreams: IcecreamLister,
    /// Deployment cache.
    pub deployments: DeploymentLister,
    /// Pod cache.
    pub pods: PodLister,
    /// This controller's `managedFields` entries of the cached Deployments, kept aside.
    pub deployment_fields: ManagedFieldsAside,
    /// Events (`events.k8s.io/v1`).
    pub recorder: Recorder,
    /// The last status written per Foo, read before the Foo cache catches up with it.
    pub foo_writes: ReadYourWrites<Foo>,
    /// The same for Icecreams.
    pub icecream_writes: ReadYourWrites<Icecream>,
}

impl Context {
    /// A context over these clients, caches and recorder.
    pub fn new(
        clients: Clientset,
        listers: (FooLister, IcecreamLister, DeploymentLister, PodLister),
        deployment_fields: ManagedFieldsAside,
        recorder: Recorder,
    ) -> Self {
        let (foos, icecreams, deployments, pods) = listers;
        Self {
            clients,
            foos,
            icecreams,
            deployments,
            pods,
            deployment_fields,
            recorder,
            foo_writes: ReadYourWrites::new(),
            icecream_writes: ReadYourWrites::new(),
        }
    }

    /// Records an event about `obj` in the background (the reconcile does not wait for it,
    /// as with client-go's recorder); a failure to record is logged, not fatal.
    pub fn event<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        self.recorder
            .publish_in_background(event, obj.object_ref(&()));
    }

    /// Waits, at most `deadline`, for the events the reconciles queued to be sent: on
    /// shutdown, before the client goes.
    pub async fn flush_events(&self, deadline: std::time::Duration) {
        if tokio::time::timeout(deadline, self.recorder.flush())
            .await
            .is_err()
        {
            tracing::warn!(?deadline, "events still queued at shutdown are dropped");
        }
    }
}

/// Why a reconcile failed; the runtime's queue retries it with per-object exponential
/// backoff (a `404` from the API server, an object already gone, is not a failure).
#[derive(Debug)]
pub enum Error {
    /// The API server refused a write.
    Kube(kube::Error),
    /// A Deployment of the wanted name exists and another owner controls it.
    ResourceExists(String),
    /// The fields this controller owns could not be read from `managedFields`.
    Extract(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Kube(e) => write!(f, "{e}"),
            Error::ResourceExists(msg) => f.write_str(msg),
            Error::Extract(msg) => write!(f, "cannot read the owned fields: {msg}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Kube(e) => Some(e),
            Error::ResourceExists(_) | Error::Extract(_) => None,
        }
    }
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(e)
    }
}

/// The key of an object for logs: `namespace/name`.
pub fn key<K: ResourceExt>(obj: &K) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// Whether `owner` (by apiVersion, kind and uid) is `d`'s controller.
pub fn controlled_by<K: Resource<DynamicType = ()>>(d: &Deployment, owner: &K) -> bool {
    let uid = owner.meta().uid.as_deref();
    d.owner_references().iter().any(|r| {
        r.controller == Some(true)
            && r.api_version == K::api_version(&())
            && r.kind == K::kind(&())
            && Some(r.uid.as_str()) == uid
    })
}

/// The controller reference of `d`, if it names kind `K`.
pub fn controller_of<K: Resource<DynamicType = ()>>(
    d: &impl ResourceExt,
) -> Option<&OwnerReference> {
    d.owner_references().iter().find(|r| {
        r.controller == Some(true) && r.api_version == K::api_version(&()) && r.kind == K::kind(&())
    })
}

/// The Deployment an owner wants, as the fields this controller has an opinion on: its
/// labels and controller reference, `replicas` (left to the server's default when unset),
/// and a pod template of `labels` running nginx on port 80. Applied with the controller's field
/// manager, it owns exactly these fields; what others set (the Deployment controller's
/// status and revision annotation, an HPA's replicas when `replicas` is unset) stays theirs.
pub fn desired_deployment<K: Resource<DynamicType = ()>>(
    owner: &K,
    name: &str,
    replicas: Option<i32>,
    labels: &BTreeMap<String, String>,
) -> DeploymentApplyConfiguration {
    let template = core_ac::PodTemplateSpecApplyConfiguration::default()
        .with_metadata(ObjectMeta {
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        })
        .with_spec(
            core_ac::PodSpecApplyConfiguration::default().with_containers([
                core_ac::ContainerApplyConfiguration::default()
                    .with_name("nginx")
                    .with_image("nginx:latest")
                    .with_ports([core_ac::ContainerPortApplyConfiguration::default()
                        .with_name("http")
                        .with_container_port(80)
                        // kube-apiserver defaults `protocol`, and it is part of the port's
                        // list key: left unstated, the extracted Deployment never equals
                        // this one and every sync would write (the steady-state test fails).
                        .with_protocol("TCP")]),
            ]),
        );
    let mut spec = DeploymentSpecApplyConfiguration::default()
        .with_selector(LabelSelector {
            match_labels: Some(labels.clone()),
            ..LabelSelector::default()
        })
        .with_template(template);
    if let Some(replicas) = replicas {
        spec = spec.with_replicas(replicas);
    }
    DeploymentApplyConfiguration::new(name, &owner.meta().namespace.clone().unwrap_or_default())
        .with_labels(labels.clone())
        .with_owner_references(owner.controller_owner_ref(&()))
        .with_spec(spec)
}

/// Brings the owner's Deployment `name` in line with [`desired_deployment`], reading the
/// Deployment from the cache; returns it and whether anything was written.
///
/// A missing Deployment is created by applying the configuration with a field manager that
/// does not force, so a same-name Deployment the cache has not shown yet is not taken over
/// (its differing fields conflict; the retry then sees it and reports it). A Deployment
/// another owner controls is an [`Error::ResourceExists`] (as in Go's sample). Otherwise
/// the fields this controller owns, extracted from `managedFields` (whose entries of this
/// controller the informer factory keeps aside for Deployments, see `run`), are compared with the wanted ones, and
/// applied (forcing, as controllers do) only when they differ: a sync in steady state
/// writes nothing.
pub async fn sync_deployment<K: Resource<DynamicType = ()>>(
    ctx: &Context,
    owner: &K,
    name: &str,
    wanted: DeploymentApplyConfiguration,
) -> Result<(Arc<Deployment>, bool), Error> {
    let ns = owner.meta().namespace.clone().unwrap_or_default();
    let Ok(existing) = ctx.deployments.deployments(&ns).get(name) else {
        let creating = DeploymentClient::new(
            ctx.clients.client().clone(),
            &ns,
            FieldManager::new(ctx.clients.field_manager().name()),
        );
        let created = creating.apply(&wanted).await?;
        tracing::info!(object = %key(owner), deployment = name, "created deployment");
        return Ok((Arc::new(created), true));
    };
    if !controlled_by(&existing, owner) {
        let msg = format!(
            "Resource {name:?} already exists and is not managed by {}",
            K::kind(&())
        );
        ctx.event(
            owner,
            EventType::Warning,
            foo::ERR_RESOURCE_EXISTS,
            msg.clone(),
        );
        return Err(Error::ResourceExists(msg));
    }
    let deployments = ctx.clients.apps_v1().deployments(&ns);
    let with_fields = ctx.deployment_fields.restore(&*existing);
    let ours = extract_deployment(&with_fields, deployments.field_manager().name())
        .map_err(|e| Error::Extract(e.to_string()))?;
    if ours == wanted {
        return Ok((existing, false));
    }
    tracing::info!(object = %key(owner), deployment = name, "applying deployment");
    Ok((Arc::new(deployments.apply(&wanted).await?), true))
}
