//! Routing: a request path into discovery, OpenAPI, or a resource request
//! (group/version/resource/namespace/name/subresource). The query is read in
//! `admission::decode::options`.

use crate::admission::decode::options::percent_decode;

/// What a resource request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// API group (`""` for `/api/v1`).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespace from the path.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`).
    pub subresource: Option<String>,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/healthz`, `/readyz`, `/livez`.
    Health,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    Resources(String, String),
    /// A resource or object.
    Resource(Target),
    /// `/openapi/v3`.
    OpenApiRoot,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`.
    OpenApi(String),
    /// Anything else.
    Unknown,
}

/// Parses a request path.
pub fn route(path: &str) -> Route {
    let segs: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .map(percent_decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::CoreVersions,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", gv @ ..] => Route::OpenApi(gv.join("/")),
        ["apis"] => Route::Groups,
        ["apis", g] => Route::Group((*g).to_owned()),
        ["api", v] => Route::Resources(String::new(), (*v).to_owned()),
        ["apis", g, v] => Route::Resources((*g).to_owned(), (*v).to_owned()),
        ["api", v, rest @ ..] => target("", v, rest),
        ["apis", g, v, rest @ ..] => target(g, v, rest),
        _ => Route::Unknown,
    }
}

fn target(group: &str, version: &str, rest: &[&str]) -> Route {
    let t = |plural: &str, namespace: Option<&str>, name: Option<&&str>, sub: Option<&&str>| {
        Route::Resource(Target {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.map(|s| (*s).to_owned()),
            subresource: sub.map(|s| (*s).to_owned()),
        })
    };
    match rest {
        // The Namespace objects themselves.
        ["namespaces"] => t("namespaces", None, None, None),
        ["namespaces", name] => t("namespaces", None, Some(name), None),
        ["namespaces", name, sub @ ("status" | "finalize")] => {
            t("namespaces", None, Some(name), Some(sub))
        }
        // An empty namespace (`/namespaces//configmaps`) is every namespace, as
        // kube-apiserver reads it.
        ["namespaces", ns, plural, tail @ ..] if tail.len() <= 2 => t(
            plural,
            Some(*ns).filter(|ns| !ns.is_empty()),
            tail.first(),
            tail.get(1),
        ),
        [plural, tail @ ..] if tail.len() <= 2 => t(plural, None, tail.first(), tail.get(1)),
        _ => Route::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let r = |p| route(p);
        assert_eq!(
            r("/apis/apps/v1/namespaces/ns/deployments/web/scale"),
            Route::Resource(Target {
                group: "apps".into(),
                version: "v1".into(),
                plural: "deployments".into(),
                namespace: Some("ns".into()),
                name: Some("web".into()),
                subresource: Some("scale".into()),
            })
        );
        assert!(
            matches!(r("/api/v1/namespaces/kube-system"), Route::Resource(t) if t.plural == "namespaces" && t.name.as_deref() == Some("kube-system"))
        );
        assert!(
            matches!(r("/api/v1/pods"), Route::Resource(t) if t.plural == "pods" && t.namespace.is_none())
        );
        assert_eq!(
            r("/apis/apps/v1"),
            Route::Resources("apps".into(), "v1".into())
        );
        assert_eq!(percent_decode("a%2Cb%"), "a,b%");
    }
}
