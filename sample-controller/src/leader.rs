//! Leader election on a `coordination.k8s.io/v1` Lease, with kube-lease-manager.

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update;patch

use kube::Client;
use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::run::{LeaseOptions, ShutdownSignal};

/// Waits until this replica holds the lease (or shutdown starts). Returns the leadership
/// signal and the task that renews the lease; dropping the signal releases the lease.
pub async fn acquire(
    client: Client,
    lease: &LeaseOptions,
    shutdown: ShutdownSignal,
) -> crate::run::anyhow_free::Result<(watch::Receiver<bool>, JoinHandle<()>)> {
    let manager = LeaseManagerBuilder::new(client, &lease.name)
        .with_namespace(&lease.namespace)
        .with_identity(&lease.identity)
        .with_duration(lease.duration)
        .with_grace(lease.duration.div_ceil(3).max(1))
        .build()
        .await?;
    let (mut is_leader, task) = manager.watch().await;
    tracing::info!(lease = %lease.name, identity = %lease.identity, "waiting for the leader lease");
    tokio::select! {
        r = is_leader.wait_for(|leader| *leader) => { r?; }
        () = shutdown => return Err("shut down before acquiring the lease".into()),
    }
    tracing::info!(lease = %lease.name, "acquired the leader lease");
    let task = tokio::spawn(async move {
        if let Ok(Ok(manager)) = task.await {
            let _ = manager.release().await;
        }
    });
    Ok((is_leader, task))
}
