//! Impersonation as kube-apiserver 1.36 does it by default (constrained impersonation,
//! KEP-5284, beta and on): the `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`
//! and `Impersonate-Extra-*` headers, each part authorized for the requestor in one of five
//! modes, tried in order (the mode that last worked for the same requestor first):
//!
//! | mode | applies when | checks |
//! |---|---|---|
//! | `associated-node` | a ServiceAccount impersonates the node its token is bound to, by name alone | `impersonate-on:associated-node:<verb>` on the request, `impersonate:associated-node` on `nodes` |
//! | `arbitrary-node` | `system:node:<name>`, by name alone | `impersonate-on:arbitrary-node:<verb>`, `impersonate:arbitrary-node` on `nodes` |
//! | `serviceaccount` | a ServiceAccount, by name alone | `impersonate-on:serviceaccount:<verb>`, `impersonate:serviceaccount` on `serviceaccounts` |
//! | `user-info` | any other user (groups, uid and extra allowed) | `impersonate-on:user-info:<verb>`, `impersonate:user-info` on `users`, `uids`, `groups`, `userextras/<key>` (group `authentication.k8s.io`) |
//! | `legacy` | always | `impersonate` on `users` or `serviceaccounts`, `groups` (core group), `uids`, `userextras/<key>` |
//!
//! The `impersonate-on` checks ask for the request's own resource (or path) with that verb.
//! Constrained modes refuse the `system:masters` and empty groups and extra keys that are
//! not domain-prefixed paths. When every mode fails, the error is the first one met, in the
//! real server's words (`configmaps is forbidden: User "u" cannot
//! impersonate-on:user-info:list resource "configmaps" ...`).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::admission::authorization::{
    self, AUTHENTICATED, Attributes, UNAUTHENTICATED, User, forbidden, go_quote, rbac::Policy,
    service_account_groups, split_service_account,
};
use crate::admission::decode::options::percent_decode;
use crate::error::ApiError;

/// The modes, in the order they are tried.
const MODES: [Mode; 5] = [
    Mode::AssociatedNode,
    Mode::ArbitraryNode,
    Mode::ServiceAccount,
    Mode::UserInfo,
    Mode::Legacy,
];

/// One way of impersonating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    AssociatedNode,
    ArbitraryNode,
    ServiceAccount,
    UserInfo,
    Legacy,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::AssociatedNode => "associated-node",
            Mode::ArbitraryNode => "arbitrary-node",
            Mode::ServiceAccount => "serviceaccount",
            Mode::UserInfo => "user-info",
            Mode::Legacy => "legacy",
        }
    }
}

/// The mode that last worked for each requestor: tried first next time.
#[derive(Debug, Default)]
pub(crate) struct Modes(Mutex<BTreeMap<String, Mode>>);

impl Modes {
    fn last(&self, requestor: &str) -> Option<Mode> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(requestor)
            .copied()
    }

    fn worked(&self, requestor: &str, mode: Mode) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(requestor.to_owned(), mode);
    }
}

/// The extra key a node-bound ServiceAccount token carries.
const NODE_NAME_EXTRA: &str = "authentication.kubernetes.io/node-name";
/// The user name prefix of nodes.
const NODE_PREFIX: &str = "system:node:";

/// The user the impersonation headers ask for, authorized for `requestor` (asking for
/// `request`); `requestor` itself when there are none.
pub(crate) fn impersonate(
    policy: &dyn Policy,
    modes: &Modes,
    requestor: &User,
    headers: &http::HeaderMap,
    request: &Attributes,
) -> Result<User, ApiError> {
    let Some(wanted) = wanted_user(headers)? else {
        return Ok(requestor.clone());
    };
    let last = modes.last(&requestor.name);
    let order = last
        .into_iter()
        .chain(MODES.into_iter().filter(|m| Some(*m) != last));
    let mut first: Option<ApiError> = None;
    for mode in order {
        let Some(outcome) = attempt(policy, mode, requestor, &wanted, request) else {
            continue;
        };
        match outcome {
            Ok(user) => {
                modes.worked(&requestor.name, mode);
                return Ok(user);
            }
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    Err(first.unwrap_or_else(|| ApiError::internal("no impersonation mode applied")))
}

/// `mode`'s answer: the impersonated user, its first denial, or `None` when the mode does
/// not apply to what is asked.
fn attempt(
    policy: &dyn Policy,
    mode: Mode,
    requestor: &User,
    wanted: &User,
    request: &Attributes,
) -> Option<Result<User, ApiError>> {
    let only_name = wanted.groups.is_empty() && wanted.uid.is_empty() && wanted.extra.is_empty();
    let node = wanted
        .name
        .strip_prefix(NODE_PREFIX)
        .filter(|n| crate::rules::names::dns1123_subdomain(n).is_empty());
    let service_account = split_service_account(&wanted.name);
    let applies = match mode {
        Mode::AssociatedNode => {
            only_name
                && requestor.service_account_of().is_some()
                && node.is_some_and(|n| {
                    requestor.extra.get(NODE_NAME_EXTRA).map(Vec::as_slice) == Some(&[n.to_owned()])
                })
        }
        Mode::ArbitraryNode => only_name && node.is_some(),
        Mode::ServiceAccount => only_name && service_account.is_some(),
        Mode::UserInfo => node.is_none() && service_account.is_none(),
        Mode::Legacy => true,
    };
    if !applies {
        return None;
    }
    let allowed = |a: &Attributes| -> Result<(), ApiError> {
        if requestor.privileged() {
            return Ok(());
        }
        let decision = authorization::authorize(policy, requestor, a);
        if decision.allowed {
            Ok(())
        } else {
            Err(forbidden(requestor, a, &decision.reason))
        }
    };
    Some(match mode {
        Mode::Legacy => legacy(wanted, &allowed).map(|()| impersonated(wanted, None)),
        constrained => {
            let on = Attributes {
                verb: format!("impersonate-on:{}:{}", constrained.name(), request.verb),
                ..request.clone()
            };
            allowed(&on)
                .and_then(|()| constrained_checks(constrained, requestor, wanted, node, &allowed))
                .map(|()| impersonated(wanted, node.filter(|_| constrained != Mode::UserInfo)))
        }
    })
}

/// What the constrained `mode` checks of the wanted user, after `impersonate-on`.
fn constrained_checks(
    mode: Mode,
    requestor: &User,
    wanted: &User,
    node: Option<&str>,
    allowed: &dyn Fn(&Attributes) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let verb = format!("impersonate:{}", mode.name());
    let on = |resource: &str, namespace: &str, name: &str, subresource: &str| Attributes {
        verb: verb.clone(),
        resource_request: true,
        api_group: "authentication.k8s.io".to_owned(),
        api_version: "v1".to_owned(),
        resource: resource.to_owned(),
        subresource: subresource.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        ..Attributes::default()
    };
    match mode {
        Mode::AssociatedNode | Mode::ArbitraryNode => {
            return allowed(&on("nodes", "", node.unwrap_or(""), ""));
        }
        Mode::ServiceAccount => {
            let (ns, name) = split_service_account(&wanted.name).unwrap_or(("", ""));
            return allowed(&on("serviceaccounts", ns, name, ""));
        }
        _ => {}
    }
    allowed(&on("users", "", &wanted.name, ""))?;
    if !wanted.uid.is_empty() {
        allowed(&on("uids", "", &wanted.uid, ""))?;
    }
    let refused = |a: &Attributes, why: &str| Err(forbidden(requestor, a, why));
    let all_groups = wanted.groups.len() >= 4 && allowed(&on("groups", "", "*", "")).is_ok();
    for group in &wanted.groups {
        let a = on("groups", "", group, "");
        if group.is_empty() {
            return refused(&a, "impersonating the empty string group is not allowed");
        }
        if group == authorization::types::MASTERS {
            return refused(&a, "impersonating the system:masters group is not allowed");
        }
        if !all_groups {
            allowed(&a)?;
        }
    }
    let values: usize = wanted.extra.values().map(Vec::len).sum();
    let all_extra = values >= 4 && allowed(&on("userextras", "", "*", "*")).is_ok();
    for (key, values) in &wanted.extra {
        if let Some(why) = invalid_extra_key(key) {
            return refused(
                &on("userextras", "", "", ""),
                &format!("impersonating an invalid key in extra is not allowed: {why}"),
            );
        }
        for value in values {
            if !all_extra {
                allowed(&on("userextras", "", value, key))?;
            }
        }
    }
    Ok(())
}

/// Why an extra key may not be impersonated in a constrained mode: it must be a
/// lowercase, domain-prefixed path (`acme.io/foo`).
fn invalid_extra_key(key: &str) -> Option<String> {
    let prefixed = key.split_once('/').is_some_and(|(domain, rest)| {
        !rest.is_empty()
            && domain.contains('.')
            && crate::rules::names::dns1123_subdomain(domain).is_empty()
    });
    (!prefixed || key.to_ascii_lowercase() != key).then(|| {
        format!(
            "extra.key: Invalid value: {}: must be a domain-prefixed path (such as \"acme.io/foo\")",
            go_quote(key)
        )
    })
}

/// The legacy checks: `impersonate` on the user (or ServiceAccount), uid, groups and extra.
fn legacy(
    wanted: &User,
    allowed: &dyn Fn(&Attributes) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
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
        Some((ns, name)) => allowed(&core("serviceaccounts", ns, name))?,
        None => allowed(&core("users", "", &wanted.name))?,
    }
    if !wanted.uid.is_empty() {
        allowed(&authentication("uids", "", &wanted.uid))?;
    }
    for group in &wanted.groups {
        allowed(&core("groups", "", group))?;
    }
    for (key, values) in &wanted.extra {
        for value in values {
            allowed(&authentication("userextras", key, value))?;
        }
    }
    Ok(())
}

/// The user a request acts as once impersonation is allowed: the wanted one, with a
/// ServiceAccount's groups when none are given (a node's, `system:nodes`, in the node
/// modes), then `system:authenticated` (or `system:unauthenticated` for
/// `system:anonymous`).
fn impersonated(wanted: &User, node: Option<&str>) -> User {
    let mut user = wanted.clone();
    if node.is_some() {
        user.groups = vec!["system:nodes".to_owned()];
    } else if let Some((ns, _)) = split_service_account(&wanted.name)
        && wanted.groups.is_empty()
    {
        user.groups = service_account_groups(ns)
            .into_iter()
            .filter(|g| g != AUTHENTICATED)
            .collect();
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
    user
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
        let policy = crate::admission::authorization::rbac::Objects::default();
        let request = Attributes::default();
        impersonate(
            &policy,
            &Modes::default(),
            &User::admin(),
            &headers(pairs),
            &request,
        )
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
