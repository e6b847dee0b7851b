//! The Foo controller: a Foo owns a Deployment of its `deploymentName` with `replicas`
//! pods, and reports the Deployment's available replicas. Go's sample-controller `syncHandler`.

// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos,verbs=get;list;watch
// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos/status,verbs=patch

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::ResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use serde_json::json;

use super::{Context, Error, controlled_by, key, new_deployment};
use crate::apis::samplecontroller::v1alpha1::{Foo, FooStatus};
use crate::generated::samplecontroller::v1alpha1::FooLister;

/// Event reason when a Deployment of the wanted name is not ours (as in Go).
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event reason after a sync that changed something.
pub const SUCCESS_SYNCED: &str = "Synced";

/// Brings the Foo's Deployment and status in line with its spec. Reads come from the
/// caches; nothing is written when nothing differs.
pub async fn reconcile(foo: Arc<Foo>, ctx: Arc<Context>) -> Result<Action, Error> {
    let key = key(&*foo);
    super::measured(key.clone(), &ctx, &ctx.metrics.foo, sync(foo, &ctx)).await
}

async fn sync(foo: Arc<Foo>, ctx: &Context) -> Result<Action, Error> {
    let ns = foo.namespace().unwrap_or_default();
    // The trigger may be stale: read the Foo from the cache. Gone means deleted; its
    // Deployment goes by garbage collection.
    let Ok(foo) = ctx.foos.foos(&ns).get(&foo.name_any()) else {
        return Ok(Action::await_change());
    };
    let name = foo.spec.deployment_name.trim();
    if name.is_empty() {
        let msg = format!("{}: deployment name must be specified", key(&*foo));
        tracing::error!(object = %key(&*foo), "{msg}");
        ctx.event(&*foo, EventType::Warning, "InvalidSpec", msg)
            .await;
        // Not retried: nothing changes until the Foo does.
        return Ok(Action::await_change());
    }
    let deployments = ctx.clients.apps_v1().deployments(&ns);
    let mut changed = Vec::new();
    let deployment = match ctx.deployments.deployments(&ns).get(name) {
        Ok(d) => d,
        Err(_) => {
            let labels = BTreeMap::from([
                ("app".to_owned(), "nginx".to_owned()),
                ("controller".to_owned(), foo.name_any()),
            ]);
            let created = deployments
                .create(
                    &new_deployment(&*foo, name, foo.spec.replicas, labels),
                    &PostParams::default(),
                )
                .await?;
            tracing::info!(object = %key(&*foo), deployment = name, "created deployment");
            changed.push("created deployment");
            Arc::new(created)
        }
    };
    if !controlled_by(&deployment, &*foo) {
        let msg = format!("Resource {name:?} already exists and is not managed by Foo");
        ctx.event(&*foo, EventType::Warning, ERR_RESOURCE_EXISTS, msg.clone())
            .await;
        return Err(Error::ResourceExists(msg));
    }
    let deployment = match foo.spec.replicas {
        Some(wanted) if deployment.spec.replicas != Some(wanted) => {
            tracing::info!(object = %key(&*foo), wanted, have = ?deployment.spec.replicas, "updating deployment replicas");
            let patch = Patch::Merge(json!({"spec": {"replicas": wanted}}));
            changed.push("updated replicas");
            Arc::new(
                deployments
                    .patch(name, &PatchParams::default(), &patch)
                    .await?,
            )
        }
        _ => deployment,
    };
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if foo.status.as_ref().map(|s| s.available_replicas) != Some(available) {
        let foos = ctx.clients.samplecontroller_v1alpha1().foos(&ns);
        foos.apply_status(
            &foo.name_any(),
            &FooStatus {
                available_replicas: available,
            },
        )
        .await?;
        changed.push("status");
    }
    if !changed.is_empty() {
        ctx.event(
            &*foo,
            EventType::Normal,
            SUCCESS_SYNCED,
            "Foo synced successfully".into(),
        )
        .await;
    }
    Ok(Action::await_change())
}

/// Maps a Deployment to the Foo that controls it: by the controller reference's apiVersion
/// and kind, and only if the cached Foo of that name has the reference's uid.
pub fn owner_of(
    foos: FooLister,
) -> impl Fn(Arc<k8s_openapi::api::apps::v1::Deployment>) -> Option<ObjectRef<Foo>> + Send + Sync + 'static
{
    move |d| {
        let owner = super::controller_of::<Foo>(&*d)?;
        let ns = d.namespace()?;
        let foo = foos.foos(&ns).get(&owner.name).ok()?;
        (foo.uid().as_deref() == Some(owner.uid.as_str())).then(|| ObjectRef::from_obj(&*foo))
    }
}
