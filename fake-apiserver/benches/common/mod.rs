//! What the in-process benches share: the process's resident memory and the ConfigMaps they
//! store.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

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
