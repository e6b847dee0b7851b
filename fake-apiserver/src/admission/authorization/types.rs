//! Who asks ([`User`]), what they ask for ([`Attributes`]), an authorizer's answer
//! ([`Decision`]), and the real server's 403 for a denial ([`forbidden`]).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::ApiError;
pub use crate::rules::field::go_quote;

/// The group whose members kube-apiserver allows everything (`--authorization-mode`'s
/// privileged group).
pub const MASTERS: &str = "system:masters";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of requests without credentials.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The prefix of a ServiceAccount's user name: `system:serviceaccount:<ns>:<name>`.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// A user as the authenticator hands it on: name, uid, groups and extra values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct User {
    /// `system:serviceaccount:ns:name`, `jane`, `kubernetes-admin`.
    pub name: String,
    /// The uid, when known.
    pub uid: String,
    /// Its groups, `system:authenticated` included.
    pub groups: Vec<String>,
    /// Extra values by key.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl User {
    /// The default credentials of the fake (as kubeadm's `admin.conf`): `kubernetes-admin`
    /// in `system:masters`.
    pub fn admin() -> Self {
        Self {
            name: "kubernetes-admin".to_owned(),
            groups: vec![MASTERS.to_owned(), AUTHENTICATED.to_owned()],
            ..Self::default()
        }
    }

    /// A user of that name in `system:authenticated` only.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            groups: vec![AUTHENTICATED.to_owned()],
            ..Self::default()
        }
    }

    /// The user a name stands for: a ServiceAccount (with its groups) for
    /// `system:serviceaccount:<ns>:<name>`, otherwise [`User::named`].
    pub fn parse(name: &str) -> Self {
        match split_service_account(name) {
            Some((ns, sa)) => Self::service_account(ns, sa),
            None => Self::named(name),
        }
    }

    /// ServiceAccount `name` of `namespace`, with the groups a token of it has:
    /// `system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:authenticated`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"),
            groups: service_account_groups(namespace),
            ..Self::default()
        }
    }

    /// Whether the user is allowed everything without asking RBAC.
    pub fn privileged(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }

    /// The namespace and name of the ServiceAccount this user is, if it is one.
    pub fn service_account_of(&self) -> Option<(&str, &str)> {
        split_service_account(&self.name)
    }
}

/// The groups of a ServiceAccount of `namespace`.
pub fn service_account_groups(namespace: &str) -> Vec<String> {
    vec![
        "system:serviceaccounts".to_owned(),
        format!("system:serviceaccounts:{namespace}"),
        AUTHENTICATED.to_owned(),
    ]
}

/// `(namespace, name)` of `system:serviceaccount:<ns>:<name>`, when the namespace is a
/// valid namespace name and the name a valid ServiceAccount name.
pub fn split_service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let (ns, name) = rest.split_once(':')?;
    let valid = crate::rules::names::dns1123_label(ns).is_empty()
        && crate::rules::names::dns1123_subdomain(name).is_empty();
    valid.then_some((ns, name))
}

/// What a request asks to do, as kube-apiserver's authorizers see it: a verb on a resource
/// (its group, version, subresource, namespace and name), or a verb on a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// `impersonate`; for a path, the HTTP method in lower case.
    pub verb: String,
    /// Whether it names a resource (`/api/...`, `/apis/...` with a resource) or a path.
    pub resource_request: bool,
    /// The API group (`""` for the core group).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource (`pods`).
    pub resource: String,
    /// The subresource (`status`), or `""`.
    pub subresource: String,
    /// The namespace, or `""` for cluster scope.
    pub namespace: String,
    /// The object's name, or `""`.
    pub name: String,
    /// The request path.
    pub path: String,
}

impl Attributes {
    /// The resource with its subresource, as rules name it: `pods/status`.
    pub fn resource_and_subresource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// An authorizer's answer: allowed or not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may go on.
    pub allowed: bool,
    /// `RBAC: allowed by ...`, or why rules could not be read; `""` when there is nothing
    /// to say.
    pub reason: String,
}

/// The 403 kube-apiserver answers a denied request with, word for word:
/// `configmaps "x" is forbidden: User "u" cannot get resource "configmaps" in API group ""
/// in the namespace "ns"`, then `: <reason>` when the authorizer gave one.
pub fn forbidden(user: &User, a: &Attributes, reason: &str) -> ApiError {
    let mut why = sanitize(&denial(user, a));
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let (group, resource) = if a.resource_request {
        (a.api_group.as_str(), a.resource.as_str())
    } else {
        ("", "")
    };
    let qualified = if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    };
    let message = match (
        qualified.is_empty(),
        a.name.is_empty() || !a.resource_request,
    ) {
        (true, _) => format!("forbidden: {why}"),
        (false, true) => format!("{qualified} is forbidden: {why}"),
        (false, false) => format!("{qualified} \"{}\" is forbidden: {why}", a.name),
    };
    let mut details = json!({});
    let mut put = |key: &str, value: &str| {
        if !value.is_empty() {
            details[key] = Value::String(value.to_owned());
        }
    };
    if a.resource_request {
        put("name", &a.name);
        put("group", group);
        put("kind", resource);
    }
    ApiError {
        code: 403,
        reason: "Forbidden".to_owned(),
        message,
        details: Some(details),
        warnings: Vec::new(),
    }
}

/// `User "u" cannot <verb> resource "<resource>" in API group "<group>" in the namespace
/// "<ns>"` (or `at the cluster scope`), or `User "u" cannot <verb> path "<path>"`.
pub fn denial(user: &User, a: &Attributes) -> String {
    let who = go_quote(&user.name);
    if !a.resource_request {
        return format!("User {who} cannot {} path {}", a.verb, go_quote(&a.path));
    }
    let what = format!(
        "User {who} cannot {} resource {} in API group {}",
        a.verb,
        go_quote(&a.resource_and_subresource()),
        go_quote(&a.api_group)
    );
    if a.namespace.is_empty() {
        format!("{what} at the cluster scope")
    } else {
        format!("{what} in the namespace {}", go_quote(&a.namespace))
    }
}

/// What kube-apiserver escapes in a denial so that it never reads as HTML.
fn sanitize(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa() -> User {
        User::service_account("rb1", "ctl")
    }

    #[test]
    fn the_403_reads_as_kube_apiservers() {
        let a = Attributes {
            verb: "list".into(),
            resource_request: true,
            resource: "configmaps".into(),
            namespace: "rb1".into(),
            ..Attributes::default()
        };
        let e = forbidden(&sa(), &a, "");
        assert_eq!(
            e.to_status(),
            serde_json::from_str::<Value>(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"system:serviceaccount:rb1:ctl\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"rb1\"","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}"#
            )
            .unwrap()
        );
        let a = Attributes {
            verb: "get".into(),
            resource_request: true,
            api_group: "apps".into(),
            resource: "deployments".into(),
            subresource: "scale".into(),
            namespace: "rb1".into(),
            name: "x".into(),
            ..Attributes::default()
        };
        let e = forbidden(&sa(), &a, "");
        assert_eq!(
            e.message,
            "deployments.apps \"x\" is forbidden: User \"system:serviceaccount:rb1:ctl\" cannot get resource \"deployments/scale\" in API group \"apps\" in the namespace \"rb1\""
        );
        assert_eq!(
            e.details,
            Some(json!({"name": "x", "group": "apps", "kind": "deployments"}))
        );
        let a = Attributes {
            verb: "get".into(),
            path: "/metrics".into(),
            ..Attributes::default()
        };
        let e = forbidden(&sa(), &a, "");
        assert_eq!(
            e.message,
            "forbidden: User \"system:serviceaccount:rb1:ctl\" cannot get path \"/metrics\""
        );
        assert_eq!(e.details, Some(json!({})));
    }

    #[test]
    fn service_account_names_split_as_the_real_server_splits_them() {
        assert_eq!(
            split_service_account("system:serviceaccount:ns:name"),
            Some(("ns", "name"))
        );
        assert_eq!(split_service_account("system:serviceaccount:ns:"), None);
        assert_eq!(split_service_account("system:serviceaccount:ns:a:b"), None);
        assert_eq!(split_service_account("bob"), None);
    }
}
