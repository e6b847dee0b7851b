//! Where a controller finds its cluster: an explicit kubeconfig (one file, or a list merged
//! as kubectl merges `KUBECONFIG`), or kube's usual inference.

use std::fmt;
use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

/// The client configuration from `kubeconfig` when given, otherwise inferred as kube does
/// (`KUBECONFIG`, `~/.kube/config`, or the in-cluster service account).
///
/// `kubeconfig` may list several files separated as `PATH` is (`a:b` on Unix), as
/// `KUBECONFIG` does; they are merged as kubectl merges them (the first file to set a value
/// wins), and files of such a list that do not exist are skipped, as kubectl skips them. An
/// empty value counts as not given.
///
/// `Ok(None)` when nothing was named and nothing could be inferred, so a binary can fall back
/// to an embedded API server. A kubeconfig that was named but cannot be read, parsed or used
/// is an error: running somewhere else than the user asked is worse than stopping.
pub async fn load(kubeconfig: Option<&Path>) -> Result<Option<kube::Config>, ConfigError> {
    let Some(named) = kubeconfig.filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(kube::Config::infer().await.ok());
    };
    let Some(merged) = read_merged(named)? else {
        return Ok(kube::Config::infer().await.ok());
    };
    kube::Config::from_custom_kubeconfig(merged, &KubeConfigOptions::default())
        .await
        .map(Some)
        .map_err(|source| ConfigError {
            path: named.to_path_buf(),
            source,
        })
}

/// The files of `list` read and merged in order; `None` when the list names no file.
fn read_merged(list: &Path) -> Result<Option<Kubeconfig>, ConfigError> {
    let paths: Vec<PathBuf> = std::env::split_paths(list)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    let several = paths.len() > 1;
    let mut merged: Option<Kubeconfig> = None;
    for path in paths {
        if several && !path.exists() {
            continue;
        }
        let error = |source| ConfigError {
            path: path.clone(),
            source,
        };
        let file = Kubeconfig::read_from(&path).map_err(error)?;
        merged = Some(match merged {
            None => file,
            Some(first) => first.merge(file).map_err(error)?,
        });
    }
    Ok(merged)
}

/// A kubeconfig that was named but could not be used, with the file it came from.
#[derive(Debug)]
pub struct ConfigError {
    path: PathBuf,
    source: KubeconfigError,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            // kube's words repeat the path; the cause alone reads better after ours.
            KubeconfigError::ReadConfig(cause, _) => {
                write!(f, "kubeconfig {}: {cause}", self.path.display())
            }
            other => write!(f, "kubeconfig {}: {other}", self.path.display()),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "apiVersion: v1\nkind: Config\ncurrent-context: a\n\
        contexts:\n- name: a\n  context: {cluster: a, user: a, namespace: team-a}\n\
        clusters:\n- name: a\n  cluster: {server: 'https://127.0.0.1:6443'}\n\
        users:\n- name: a\n  user: {token: t}\n";

    const SECOND: &str = "apiVersion: v1\nkind: Config\ncurrent-context: b\n\
        contexts:\n- name: b\n  context: {cluster: b, user: b}\n\
        clusters:\n- name: b\n  cluster: {server: 'https://127.0.0.2:6443'}\n\
        users:\n- name: b\n  user: {token: u}\n";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kcg-config-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn a_list_is_merged_first_file_winning_and_missing_files_skipped() {
        let dir = dir("list");
        let a = write(&dir, "a", CONFIG);
        let b = write(&dir, "b", SECOND);
        let list = std::env::join_paths([a, dir.join("missing"), b]).unwrap();
        let config = load(Some(Path::new(&list))).await.unwrap().unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:6443/");
        assert_eq!(config.default_namespace, "team-a");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_named_file_that_cannot_be_used_is_an_error_naming_it() {
        let dir = dir("bad");
        let missing = dir.join("missing");
        let error = load(Some(&missing)).await.unwrap_err().to_string();
        let expected = format!(
            "kubeconfig {}: No such file or directory",
            missing.display()
        );
        assert!(error.starts_with(&expected), "{error}");
        let broken = write(&dir, "broken", "clusters: [");
        let error = load(Some(&broken)).await.unwrap_err().to_string();
        assert!(error.contains("broken"), "{error}");
        let no_context = write(&dir, "empty", "apiVersion: v1\nkind: Config\n");
        assert!(load(Some(&no_context)).await.is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
