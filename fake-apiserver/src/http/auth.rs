//! The first filters of kube-apiserver's handler chain, run before a request is routed:
//! who sends it (the user of the server handle it came through, or the default
//! `kubernetes-admin` in `system:masters`), impersonation (`Impersonate-User`,
//! `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-*`, as `kubectl --as` and
//! `--as-group` send them, each checked with the `impersonate` verb), and authorization of
//! what it asks for.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::body::{self, ResponseBody};
use super::route::Target;
use crate::admission::authorization::access::Acting;
use crate::admission::authorization::{
    self, AUTHENTICATED, Attributes, UNAUTHENTICATED, User, go_quote, request,
    service_account_groups, split_service_account,
};
use crate::admission::decode::options::{Query, percent_decode};
use crate::error::ApiError;
use crate::registry;
use crate::store::Shared;

/// The user a request acts as, once impersonation and authorization let it through; or the
/// error it is answered with.
pub(crate) fn authorize(
    shared: &Shared,
    parts: &http::request::Parts,
    query: &Query,
) -> Result<User, ApiError> {
    let acting = parts.extensions.get::<Arc<Acting>>();
    let requestor = acting.map_or_else(User::admin, |a| a.user.clone());
    let user = impersonate(shared, &requestor, &parts.headers)?;
    let attributes = request::attributes(parts.method.as_str(), parts.uri.path(), query);
    if let Some(acting) = acting {
        acting.log.record(&attributes);
    }
    if !user.privileged() {
        authorization::check(&*shared.lock(), &user, &attributes)?;
    }
    Ok(user)
}

/// The answer to an access review (`SelfSubjectAccessReview` and the others), which is
/// created and answered but not stored; `None` when `target` is not a review.
pub(crate) fn review(
    shared: &Shared,
    parts: &http::request::Parts,
    target: &Target,
    user: &User,
    query: &Query,
    bytes: &[u8],
) -> Option<http::Response<ResponseBody>> {
    let review = registry::review::find(&target.group, &target.version, &target.plural)?;
    let header = |name: http::header::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let content_type = header(http::header::CONTENT_TYPE)
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let req = registry::review::Request {
        shared,
        user,
        review,
        namespace: target.namespace.as_deref(),
        named: target.name.is_some(),
        method: parts.method.as_str(),
        query,
        content_type: &content_type,
        user_agent: header(http::header::USER_AGENT),
    };
    Some(match registry::review::create(&req, bytes) {
        Ok((code, value)) => body::json(code, &value),
        Err(e) => body::error(&e),
    })
}

/// The user the impersonation headers ask for, each part of it authorized for `requestor`;
/// `requestor` itself when there are none.
fn impersonate(
    shared: &Shared,
    requestor: &User,
    headers: &http::HeaderMap,
) -> Result<User, ApiError> {
    let Some(wanted) = wanted_user(headers)? else {
        return Ok(requestor.clone());
    };
    let mut user = wanted.clone();
    let mut checks = Vec::new();
    let core = |resource: &str, namespace: &str, name: &str| Attributes {
        verb: "impersonate".to_owned(),
        resource_request: true,
        api_version: "v1".to_owned(),
        resource: resource.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        ..Attributes::default()
    };
    let authentication = |resource: &str, subresource: &str, name: &str| Attributes {
        api_group: "authentication.k8s.io".to_owned(),
        subresource: subresource.to_owned(),
        ..core(resource, "", name)
    };
    match split_service_account(&wanted.name) {
        Some((ns, name)) => {
            checks.push(core("serviceaccounts", ns, name));
            if wanted.groups.is_empty() {
                user.groups = service_account_groups(ns)
                    .into_iter()
                    .filter(|g| g != AUTHENTICATED)
                    .collect();
            }
        }
        None => checks.push(core("users", "", &wanted.name)),
    }
    if !wanted.uid.is_empty() {
        checks.push(authentication("uids", "", &wanted.uid));
    }
    checks.extend(wanted.groups.iter().map(|g| core("groups", "", g)));
    for (key, values) in &wanted.extra {
        checks.extend(values.iter().map(|v| authentication("userextras", key, v)));
    }
    if !requestor.privileged() {
        let state = shared.lock();
        for check in &checks {
            authorization::check(&*state, requestor, check)?;
        }
    }
    let ensure = |user: &mut User, group: &str| {
        if !user.groups.iter().any(|g| g == group) {
            user.groups.push(group.to_owned());
        }
    };
    if user.name == "system:anonymous" {
        ensure(&mut user, UNAUTHENTICATED);
    } else if !user.groups.iter().any(|g| g == UNAUTHENTICATED) {
        ensure(&mut user, AUTHENTICATED);
    }
    Ok(user)
}

/// The user the impersonation headers name, as given; `None` without any. Groups, a uid
/// or extra values without a user are a 400.
fn wanted_user(headers: &http::HeaderMap) -> Result<Option<User>, ApiError> {
    let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let name = headers
        .get("impersonate-user")
        .map(text)
        .unwrap_or_default();
    let uid = headers.get("impersonate-uid").map(text).unwrap_or_default();
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .map(text)
        .collect();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut has_extra = false;
    for (header, value) in headers {
        if let Some(key) = header.as_str().strip_prefix("impersonate-extra-") {
            has_extra = true;
            extra
                .entry(percent_decode(key))
                .or_default()
                .push(text(value));
        }
    }
    let user = User {
        name,
        uid,
        groups,
        extra,
    };
    let any_other = !user.uid.is_empty() || !user.groups.is_empty() || has_extra;
    match (user.name.is_empty(), any_other) {
        (true, false) => Ok(None),
        (true, true) => Err(ApiError::bad_request(format!(
            "requested {} without impersonating a user name",
            go_user(&user)
        ))),
        (false, _) => Ok(Some(user)),
    }
}

/// A user as Go's `%#v` prints a `*user.DefaultInfo`.
fn go_user(user: &User) -> String {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|s| go_quote(s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let groups = if user.groups.is_empty() {
        "[]string(nil)".to_owned()
    } else {
        format!("[]string{{{}}}", list(&user.groups))
    };
    let extra = if user.extra.is_empty() {
        "map[string][]string(nil)".to_owned()
    } else {
        let entries: Vec<String> = user
            .extra
            .iter()
            .map(|(k, v)| format!("{}:[]string{{{}}}", go_quote(k), list(v)))
            .collect();
        format!("map[string][]string{{{}}}", entries.join(", "))
    };
    format!(
        "&user.DefaultInfo{{Name:{}, UID:{}, Groups:{groups}, Extra:{extra}}}",
        go_quote(&user.name),
        go_quote(&user.uid)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                http::HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn as_admin(pairs: &[(&str, &str)]) -> Result<User, ApiError> {
        let shared = Shared::new(crate::config::Config::default());
        impersonate(&shared, &User::admin(), &headers(pairs))
    }

    #[test]
    fn a_service_account_gets_its_groups_unless_groups_are_given() {
        let u = as_admin(&[("Impersonate-User", "system:serviceaccount:ns:ctl")]).unwrap();
        assert_eq!(u, User::service_account("ns", "ctl"));
        let u = as_admin(&[
            ("Impersonate-User", "system:serviceaccount:ns:ctl"),
            ("Impersonate-Group", "g"),
        ])
        .unwrap();
        assert_eq!(u.groups, ["g", AUTHENTICATED]);
        let u = as_admin(&[("Impersonate-User", "system:anonymous")]).unwrap();
        assert_eq!(u.groups, [UNAUTHENTICATED]);
    }

    #[test]
    fn groups_without_a_user_are_a_bad_request() {
        let e = as_admin(&[
            ("Impersonate-Group", "foo"),
            ("Impersonate-Group", "bar"),
            ("Impersonate-Uid", "12"),
        ])
        .unwrap_err();
        assert_eq!(
            e.message,
            "requested &user.DefaultInfo{Name:\"\", UID:\"12\", Groups:[]string{\"foo\", \"bar\"}, Extra:map[string][]string(nil)} without impersonating a user name"
        );
        assert_eq!(e.code, 400);
    }
}
