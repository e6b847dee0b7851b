//! Reading CRDs from a cluster (the `cluster` feature): for `kube-codegen import --crd NAME`,
//! and for `kube-codegen compat --baseline-cluster`.

use std::path::Path;

/// What is kept of a CRD read from the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Its definition only: what import turns into Rust types.
    Definition,
    /// Its status too (`storedVersions`), for a comparison; CRDs that are not installed are
    /// left out rather than refused.
    Installed,
}

/// The CRDs named `names`, as JSON text, from the cluster of the kubeconfig (or `KUBECONFIG`,
/// `~/.kube/config`, or the pod's service account) and `context`.
pub fn fetch(
    names: &[String],
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<Vec<(String, String)>, String> {
    let texts = read(names, kubeconfig, context, Keep::Definition)?;
    Ok(names.iter().cloned().zip(texts).collect())
}

/// The installed CRDs among `names`, with their status, as JSON text; names the cluster does
/// not have are left out.
pub fn fetch_installed(
    names: &[String],
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<Vec<String>, String> {
    read(names, kubeconfig, context, Keep::Installed)
}

/// A client for the cluster of the kubeconfig (or `KUBECONFIG`, `~/.kube/config`, or the
/// pod's service account) and `context`, as kubectl finds it.
#[cfg(feature = "cluster")]
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<kube::Client, String> {
    use kube::config::{KubeConfigOptions, Kubeconfig};

    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .map_err(|e| e.to_string())
        }
        None if context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| e.to_string()),
        None => kube::Config::infer().await.map_err(|e| e.to_string()),
    }
    .map_err(|e| format!("error: cannot load the cluster configuration: {e}"))?;
    kube::Client::try_from(config).map_err(|e| format!("error: cannot create a client: {e}"))
}

/// Runs `work` to completion on a runtime of its own.
#[cfg(feature = "cluster")]
pub fn block_on<T>(
    work: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("error: cannot start the client runtime: {e}"))?
        .block_on(work)
}

#[cfg(feature = "cluster")]
fn read(
    names: &[String],
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    keep: Keep,
) -> Result<Vec<String>, String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    block_on(async {
        let api = kube::Api::<CustomResourceDefinition>::all(client(kubeconfig, context).await?);
        let mut out = Vec::new();
        for name in names {
            let found = match keep {
                Keep::Definition => Some(api.get(name).await),
                Keep::Installed => api.get_opt(name).await.transpose(),
            };
            let Some(found) = found else { continue };
            let mut crd = found
                .map_err(|e| format!("error: cannot get CustomResourceDefinition `{name}`: {e}"))?;
            // What the server keeps about the object is not part of its definition.
            crd.metadata.managed_fields = None;
            if keep == Keep::Definition {
                crd.status = None;
            }
            let text = serde_json::to_string(&crd)
                .map_err(|e| format!("error: cannot encode `{name}`: {e}"))?;
            out.push(text);
        }
        Ok(out)
    })
}

/// Without the `cluster` feature there is no client.
#[cfg(not(feature = "cluster"))]
fn read(
    _names: &[String],
    _kubeconfig: Option<&Path>,
    _context: Option<&str>,
    _keep: Keep,
) -> Result<Vec<String>, String> {
    Err("error: this kube-codegen was built without the `cluster` feature; export the CRDs with `kubectl get crd NAME -o yaml` and pass them as files".to_owned())
}
