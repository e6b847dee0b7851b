//! Discovery (`/api`, `/apis`, resource lists, `/version`) and the OpenAPI documents' routes.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::{Response, StatusCode};
use serde_json::{Value, json};

use super::body::{self, ResponseBody};
use super::route::Route;
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::store::Shared;

/// Answers a non-resource route.
pub fn respond(shared: &Arc<Shared>, route: &Route, path: &str) -> Response<ResponseBody> {
    let types = shared.lock().types.clone();
    match route {
        Route::Version => body::json(
            StatusCode::OK,
            &json!({
                "major": "1", "minor": "33", "gitVersion": "v1.33.0-fake", "gitCommit": "fake-apiserver",
                "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "none",
                "compiler": "rustc", "platform": "linux/amd64"
            }),
        ),
        Route::Health => body::text(StatusCode::OK, "ok"),
        Route::CoreVersions => body::json(
            StatusCode::OK,
            &json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
        ),
        Route::Groups => body::json(
            StatusCode::OK,
            &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups(&types)}),
        ),
        Route::Group(g) => match groups(&types).into_iter().find(|x| x["name"] == g.as_str()) {
            Some(mut group) => {
                group["kind"] = json!("APIGroup");
                group["apiVersion"] = json!("v1");
                body::json(StatusCode::OK, &group)
            }
            None => body::error(&ApiError::no_route(path)),
        },
        Route::Resources(g, v) => {
            let resources: Vec<Value> = types
                .iter()
                .filter(|t| t.group == *g && t.version == *v)
                .flat_map(|t| t.discovery_entries())
                .chain(crate::registry::review::discovery_entries(g, v))
                .collect();
            if resources.is_empty() {
                return body::error(&ApiError::no_route(path));
            }
            let gv = if g.is_empty() {
                v.clone()
            } else {
                format!("{g}/{v}")
            };
            body::json(
                StatusCode::OK,
                &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
            )
        }
        Route::OpenApiRoot => body::json(StatusCode::OK, &super::openapi::root(&types)),
        Route::OpenApi(gv) => match super::openapi::group_version(&types, gv) {
            Some((doc, hash)) => body::openapi(&doc, &hash),
            None => body::error(&ApiError::no_route(path)),
        },
        Route::Resource(_) | Route::Unknown => body::error(&ApiError::no_route(path)),
    }
}

fn groups(types: &[std::sync::Arc<ResourceType>]) -> Vec<Value> {
    let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for t in types.iter().filter(|t| !t.group.is_empty()) {
        by_group.entry(&t.group).or_default().push(&t.version);
    }
    // The access reviews' groups, served though nothing of them is stored.
    for g in crate::registry::review::groups() {
        by_group.entry(g).or_default().push("v1");
    }
    by_group
        .into_iter()
        .map(|(g, mut versions)| {
            versions.sort_unstable();
            versions.dedup();
            // Most preferred first, and that one is the preferred version.
            crate::rules::version::sort_preferred_first(&mut versions);
            let preferred = versions[0];
            let list: Vec<Value> = versions.iter().map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v})).collect();
            json!({"name": g, "versions": list, "preferredVersion": {"groupVersion": format!("{g}/{preferred}"), "version": preferred}})
        })
        .collect()
}
