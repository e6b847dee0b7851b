//! The Foo controller: a Foo owns a Deployment of its `deploymentName` with `replicas`
//! pods, and reports the Deployment's available replicas. Go's sample-controller `syncHandler`.

// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos,verbs=get;list;watch
// +kubebuilder:rbac:groups=samplecontroller.k8s.io,resources=foos/status,verbs=patch

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::ResourceExt;
use kube_codegen_runtime::controller::Action;
use kube_codegen_runtime::events::EventType;

use super::{Context, Error, desired_deployment, key, sync_deployment};
use crate::apis::samplecontroller::v1alpha1::Foo;
use crate::generated::samplecontroller::v1alpha1::{
    FooApplyConfiguration, FooStatusApplyConfiguration,
};

/// Event reason when a Deployment of the wanted name is not ours (as in Go).
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event reason after a sync that changed something.
pub const SUCCESS_SYNCED: &str = "Synced";

/// Brings the Foo's Deployment and status in line with its spec. Reads come from the
/// caches; nothing is written when nothing differs.
pub async fn reconcile(foo: Arc<Foo>, ctx: Arc<Context>) -> Result<Action, Error> {
    let ns = foo.namespace().unwrap_or_default();
    // `foo` is the cached Foo (a deleted one is not reconciled: its Deployment goes by
    // garbage collection). Our last status write, while the cache has not seen it yet: not
    // written twice.
    let foo = ctx.foo_writes.latest(foo);
    let name = foo.spec.deployment_name.trim();
    if name.is_empty() {
        let msg = format!("{}: deployment name must be specified", key(&*foo));
        tracing::error!(object = %key(&*foo), "{msg}");
        ctx.event(&*foo, EventType::Warning, "InvalidSpec", msg);
        // Not retried: nothing changes until the Foo does.
        return Ok(Action::await_change());
    }
    let labels = BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        ("controller".to_owned(), foo.name_any()),
    ]);
    let wanted = desired_deployment(&*foo, name, foo.spec.replicas, &labels);
    let (deployment, wrote) = sync_deployment(&ctx, &*foo, name, wanted).await?;
    let mut changed = Vec::new();
    if wrote {
        changed.push("deployment");
    }
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if foo.status.as_ref().map(|s| s.available_replicas) != Some(available) {
        let status = FooStatusApplyConfiguration::default().with_available_replicas(available);
        let written = ctx
            .clients
            .samplecontroller_v1alpha1()
            .foos(&ns)
            .apply_status(&FooApplyConfiguration::new(&foo.name_any(), &ns).with_status(status))
            .await?;
        ctx.foo_writes.record(&foo, written);
        changed.push("status");
    }
    if !changed.is_empty() {
        ctx.event(
            &*foo,
            EventType::Normal,
            SUCCESS_SYNCED,
            "Foo synced successfully".into(),
        );
    }
    Ok(Action::await_change())
}
