//! What a request asks for, read from its method, path and query as kube-apiserver's
//! `RequestInfoFactory` reads it: `/api/v1/...` and `/apis/<group>/<version>/...` with a
//! resource are resource requests (a GET without a name is a `list`, or a `watch` with
//! `watch=true`; a DELETE without one is a `deletecollection`; a list selecting one
//! `metadata.name` names that object); anything else is a path with the method as verb.

use super::types::Attributes;
use crate::admission::decode::options::{Query, percent_decode};

/// The namespace's own subresources: `/namespaces/<ns>/status` is the Namespace's status,
/// not a resource called `status` in it.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The attributes of a request (without its user).
pub fn attributes(method: &str, path: &str, query: &Query) -> Attributes {
    let mut a = Attributes {
        verb: method.to_ascii_lowercase(),
        path: path.to_owned(),
        ..Attributes::default()
    };
    let parts: Vec<String> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let rest = match parts.as_slice() {
        ["api", version, rest @ ..] if !rest.is_empty() => {
            a.api_version = (*version).to_owned();
            rest
        }
        ["apis", group, version, rest @ ..] if !rest.is_empty() => {
            a.api_group = (*group).to_owned();
            a.api_version = (*version).to_owned();
            rest
        }
        _ => {
            a.api_group.clear();
            a.api_version.clear();
            return a;
        }
    };
    a.resource_request = true;
    let mut rest = rest;
    let by_prefix = rest[0] == "watch" && rest.len() >= 2;
    if by_prefix {
        // The deprecated `/watch/...` paths.
        a.verb = "watch".to_owned();
        rest = &rest[1..];
    } else {
        a.verb = verb_of(method).to_owned();
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        a.namespace = rest[1].to_owned();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    a.resource = rest[0].to_owned();
    if let Some(name) = rest.get(1) {
        a.name = (*name).to_owned();
    }
    if let Some(sub) = rest.get(2) {
        a.subresource = (*sub).to_owned();
    }
    if a.name.is_empty() && a.verb == "get" {
        a.verb = if watch_requested(query) {
            "watch"
        } else {
            "list"
        }
        .to_owned();
        if let Some(name) = selected_name(query) {
            a.name = name;
        }
    }
    if a.name.is_empty() && a.verb == "delete" {
        a.verb = "deletecollection".to_owned();
    }
    a
}

/// The verb of a resource request's method, before the path says whether it names an
/// object.
fn verb_of(method: &str) -> &'static str {
    match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
}

/// Whether `watch` is set to something Go reads as true (anything but `false` and `0`).
fn watch_requested(query: &Query) -> bool {
    query
        .get("watch")
        .is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "false" | "0" | ""))
}

/// The name a field selector requires exactly (`metadata.name=x`, `metadata.name==x`),
/// when it is a valid path segment: a list of that one object.
fn selected_name(query: &Query) -> Option<String> {
    let selector = query.get("fieldSelector")?;
    let name = selector.split(',').find_map(|term| {
        let term = term.trim();
        term.strip_prefix("metadata.name==")
            .or_else(|| term.strip_prefix("metadata.name="))
    })?;
    let name = name.trim();
    let valid = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains('%');
    valid.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(method: &str, uri: &str) -> Attributes {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        attributes(method, path, &Query::parse(Some(query)))
    }

    #[test]
    fn resource_requests_read_as_kube_apiserver_reads_them() {
        let a = at("GET", "/api/v1/namespaces/ns/configmaps");
        assert_eq!(
            (
                a.verb.as_str(),
                a.resource.as_str(),
                a.namespace.as_str(),
                a.resource_request
            ),
            ("list", "configmaps", "ns", true)
        );
        let a = at("GET", "/api/v1/namespaces/ns/configmaps?watch=true");
        assert_eq!(a.verb, "watch");
        let a = at("GET", "/api/v1/namespaces/ns/configmaps?watch=0");
        assert_eq!(a.verb, "list");
        let a = at(
            "GET",
            "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dabc",
        );
        assert_eq!((a.verb.as_str(), a.name.as_str()), ("list", "abc"));
        let a = at("DELETE", "/apis/apps/v1/namespaces/ns/deployments");
        assert_eq!(
            (a.verb.as_str(), a.api_group.as_str()),
            ("deletecollection", "apps")
        );
        let a = at("PUT", "/apis/apps/v1/namespaces/ns/deployments/web/scale");
        assert_eq!(
            (a.verb.as_str(), a.name.as_str(), a.subresource.as_str()),
            ("update", "web", "scale")
        );
        // A Namespace is named and namespaced by its own name.
        let a = at("GET", "/api/v1/namespaces/ns");
        assert_eq!(
            (a.resource.as_str(), a.name.as_str(), a.namespace.as_str()),
            ("namespaces", "ns", "ns")
        );
        let a = at("PUT", "/api/v1/namespaces/ns/finalize");
        assert_eq!(
            (a.resource.as_str(), a.subresource.as_str()),
            ("namespaces", "finalize")
        );
        let a = at("GET", "/api/v1/nodes");
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", ""));
    }

    #[test]
    fn other_paths_are_non_resource_requests() {
        for path in [
            "/version",
            "/api",
            "/api/v1",
            "/apis/apps",
            "/apis/apps/v1",
            "/metrics",
        ] {
            let a = at("GET", path);
            assert!(!a.resource_request, "{path}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", path));
        }
        assert_eq!(at("POST", "/metrics").verb, "post");
    }
}
