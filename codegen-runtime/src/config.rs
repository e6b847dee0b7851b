//! Where a controller finds its cluster: an explicit kubeconfig, or kube's usual inference.

use std::path::Path;

/// The client configuration from `kubeconfig` when given, otherwise inferred as kube does
/// (`KUBECONFIG`, `~/.kube/config`, or the in-cluster service account). `None` when there is
/// none, so a binary can fall back to an embedded API server.
pub async fn load(kubeconfig: Option<&Path>) -> Option<kube::Config> {
    match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path).ok()?;
            kube::Config::from_custom_kubeconfig(file, &Default::default())
                .await
                .ok()
        }
        None => kube::Config::infer().await.ok(),
    }
}
