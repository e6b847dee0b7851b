//! What the in-process benches share: the process's resident memory, the ConfigMaps they
//! store and the walk through their pages.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::ListParams;

/// Resident memory of this process, in bytes (Linux).
pub fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// The name of the `i`th ConfigMap.
pub fn name(i: usize) -> String {
    format!("cm-{i:07}")
}

/// The `i`th ConfigMap: a label of ten values and one 40-byte data entry.
pub fn configmap(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name(i));
    cm.metadata.labels = Some(BTreeMap::from([("app".into(), format!("app-{}", i % 10))]));
    cm.data = Some(BTreeMap::from([("key".into(), "value".repeat(8))]));
    cm
}

/// A list of pages of 500, from the continue token `token` (`None`: the first page).
pub fn page(token: Option<&str>) -> ListParams {
    let lp = ListParams::default().limit(500);
    match token {
        Some(t) => lp.continue_token(t),
        None => lp,
    }
}

/// Lists every page of 500: the token each page was asked with (`None` for the first).
pub async fn page_tokens(api: &Api<ConfigMap>) -> Vec<Option<String>> {
    let mut tokens = vec![None];
    loop {
        let asked = tokens.last().cloned().flatten();
        let listed = api.list(&page(asked.as_deref())).await.unwrap();
        match listed.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(next) => tokens.push(Some(next)),
            None => return tokens,
        }
    }
}
