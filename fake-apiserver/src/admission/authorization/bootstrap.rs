//! The RBAC objects a new server has, as kube-apiserver creates them at start: the
//! ClusterRoles and ClusterRoleBindings every ServiceAccount relies on (`system:discovery`,
//! `system:basic-user`, `system:public-info-viewer`, `system:service-account-issuer-discovery`),
//! `cluster-admin` for `system:masters`, and the user-facing `admin`, `edit` and `view`
//! with the `system:aggregate-to-*` roles they aggregate. The data (`bootstrap.yaml`) was
//! read from kube-apiserver 1.36.2.

use std::sync::OnceLock;

use serde_json::Value;

/// The default objects, parsed once: ClusterRoles first, then the bindings.
pub fn objects() -> &'static [Value] {
    static OBJECTS: OnceLock<Vec<Value>> = OnceLock::new();
    OBJECTS.get_or_init(|| {
        serde_saphyr::from_multiple::<Value>(include_str!("bootstrap.yaml"))
            .unwrap_or_default()
            .into_iter()
            .filter(|d| !d.is_null())
            .collect()
    })
}

/// The field manager the defaults are written by, as on the real server.
pub const MANAGER: &str = "kube-apiserver";

/// The default objects as a new server stores them: the aggregated ClusterRoles (`admin`,
/// `edit`, `view`) with the rules their selectors gather.
pub fn stored() -> Vec<Value> {
    let all = super::rbac::Objects(objects().to_vec());
    objects()
        .iter()
        .map(|o| {
            let mut o = o.clone();
            if o.get("aggregationRule").is_some() {
                let rules = super::rbac::effective_rules(&all, &o);
                o["rules"] = serde_json::to_value(rules).unwrap_or_default();
            }
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_parse() {
        let names: Vec<&str> = objects()
            .iter()
            .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
            .collect();
        for name in [
            "cluster-admin",
            "system:discovery",
            "system:basic-user",
            "view",
        ] {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
        assert_eq!(objects().len(), 16);
    }
}
