//! The access reviews, which are created and answered but never stored, as kube-apiserver's
//! `authorization.k8s.io/v1` and `authentication.k8s.io/v1` REST storage answers them:
//! `SelfSubjectAccessReview` (`kubectl auth can-i`), `SelfSubjectRulesReview`
//! (`kubectl auth can-i --list`), `SubjectAccessReview`, `LocalSubjectAccessReview` and
//! `SelfSubjectReview` (`kubectl auth whoami`).

use http::StatusCode;
use serde_json::{Value, json};

use crate::admission::authorization::{self, Attributes, User, rbac};
use crate::admission::decode::decode_body;
use crate::admission::decode::options::Query;
use crate::admission::decode::type_meta::Expected;
use crate::error::ApiError;
use crate::meta::now;
use crate::rules::field::FieldError;
use crate::store::Shared;
use crate::store::ssa::{self, schema::Ty};

/// One kind of review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Review {
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
}

/// The reviews served, each in `v1` of its group.
const REVIEWS: [Review; 5] = [
    review(
        "authorization.k8s.io",
        "localsubjectaccessreviews",
        "LocalSubjectAccessReview",
        true,
    ),
    review(
        "authorization.k8s.io",
        "selfsubjectaccessreviews",
        "SelfSubjectAccessReview",
        false,
    ),
    review(
        "authorization.k8s.io",
        "selfsubjectrulesreviews",
        "SelfSubjectRulesReview",
        false,
    ),
    review(
        "authorization.k8s.io",
        "subjectaccessreviews",
        "SubjectAccessReview",
        false,
    ),
    review(
        "authentication.k8s.io",
        "selfsubjectreviews",
        "SelfSubjectReview",
        false,
    ),
];

const fn review(
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
) -> Review {
    Review {
        group,
        plural,
        kind,
        namespaced,
    }
}

/// The review `plural` of `group`/`version` names, if it is one.
pub(crate) fn find(group: &str, version: &str, plural: &str) -> Option<Review> {
    REVIEWS
        .into_iter()
        .find(|r| version == "v1" && r.group == group && r.plural == plural)
}

/// The groups the reviews are served in (each in `v1`).
pub(crate) fn groups() -> [&'static str; 2] {
    ["authentication.k8s.io", "authorization.k8s.io"]
}

/// The reviews' entries in the `APIResourceList` of `group`/`version`.
pub(crate) fn discovery_entries(group: &str, version: &str) -> Vec<Value> {
    REVIEWS
        .iter()
        .filter(|r| version == "v1" && r.group == group)
        .map(|r| {
            json!({
                "name": r.plural,
                "singularName": r.kind.to_ascii_lowercase(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["create"],
            })
        })
        .collect()
}

/// A request for a review, as the HTTP layer routed it.
pub(crate) struct Request<'a> {
    /// The server.
    pub shared: &'a Shared,
    /// Who asks (after impersonation).
    pub user: &'a User,
    /// The review.
    pub review: Review,
    /// The namespace of the path.
    pub namespace: Option<&'a str>,
    /// Whether the path names an object (`.../selfsubjectaccessreviews/x`): not served.
    pub named: bool,
    /// The HTTP method.
    pub method: &'a str,
    /// The query.
    pub query: &'a Query,
    /// `Content-Type`, without parameters.
    pub content_type: &'a str,
    /// `User-Agent`.
    pub user_agent: &'a str,
}

/// Answers a review request: `201` and the review with its status, or the error.
pub(crate) fn create(req: &Request<'_>, body: &[u8]) -> Result<(StatusCode, Value), ApiError> {
    let r = req.review;
    if req.named || r.namespaced != req.namespace.is_some() {
        let mut e = ApiError::custom(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        e.details = Some(json!({}));
        return Err(e);
    }
    if req.method != "POST" {
        return Err(ApiError::method_not_allowed());
    }
    let api_version = format!("{}/v1", r.group);
    let expected = Expected {
        api_version: &api_version,
        kind: r.kind,
        custom: false,
    };
    let mut obj = decode_body(&expected, req.content_type, body)?;
    obj["apiVersion"] = json!(api_version);
    obj["kind"] = json!(r.kind);
    if let Some(ns) = req.namespace {
        obj["metadata"]["namespace"] = json!(ns);
    }
    let state = req.shared.lock();
    let answer = match r.kind {
        "SelfSubjectRulesReview" => rules_review(&*state, req.user, &obj)?,
        "SelfSubjectReview" => json!({
            "apiVersion": api_version, "kind": r.kind,
            "metadata": {"creationTimestamp": now()},
            "status": {"userInfo": user_info(req.user)},
        }),
        _ => {
            let user = match r.kind {
                "SelfSubjectAccessReview" => req.user.clone(),
                _ => subject(&obj),
            };
            validate(r, &obj)?;
            record_create(&mut obj, &manager(req));
            let decision = authorization::authorize(&*state, &user, &attributes_of(&obj));
            let mut status = json!({"allowed": decision.allowed});
            if !decision.reason.is_empty() {
                status["reason"] = json!(decision.reason);
            }
            obj["status"] = status;
            obj
        }
    };
    Ok((StatusCode::CREATED, answer))
}

/// The field manager of the request: `fieldManager`, or the user agent's product.
fn manager(req: &Request<'_>) -> String {
    req.query
        .get("fieldManager")
        .map(str::to_owned)
        .unwrap_or_else(|| super::default_manager(req.user_agent))
}

/// `managedFields` of a create by `manager`, as kube-apiserver records every create.
fn record_create(obj: &mut Value, manager: &str) {
    let api_version = obj["apiVersion"].as_str().unwrap_or("").to_owned();
    let kind = obj["kind"].as_str().unwrap_or("").to_owned();
    let ty = Ty::of(&api_version, &kind, None, false);
    let zero = ssa::schema::zero(ty, &api_version, &kind);
    let time = now();
    let writer = ssa::Writer {
        manager,
        subresource: "",
        api_version: &api_version,
        now: &time,
    };
    ssa::update(None, &zero, obj, ty, &writer, &ssa::path::Set::new());
}

/// The user a `SubjectAccessReview` asks about: its `user`, `groups`, `uid` and `extra`,
/// as given (no groups are added).
fn subject(obj: &Value) -> User {
    let spec = &obj["spec"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    User {
        name: spec["user"].as_str().unwrap_or("").to_owned(),
        uid: spec["uid"].as_str().unwrap_or("").to_owned(),
        groups: strings(&spec["groups"]),
        extra: spec["extra"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), strings(v)))
            .collect(),
    }
}

/// What a review asks about, from `spec.resourceAttributes` or `spec.nonResourceAttributes`.
fn attributes_of(obj: &Value) -> Attributes {
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or("").to_owned();
    let resource = &obj["spec"]["resourceAttributes"];
    if resource.is_object() {
        let version = text(resource, "version");
        return Attributes {
            verb: text(resource, "verb"),
            resource_request: true,
            api_group: text(resource, "group"),
            api_version: if version.is_empty() {
                "*".to_owned()
            } else {
                version
            },
            resource: text(resource, "resource"),
            subresource: text(resource, "subresource"),
            namespace: text(resource, "namespace"),
            name: text(resource, "name"),
            path: String::new(),
        };
    }
    let other = &obj["spec"]["nonResourceAttributes"];
    Attributes {
        verb: text(other, "verb"),
        path: text(other, "path"),
        ..Attributes::default()
    }
}

/// An access review's checks, in kube-apiserver's words: exactly one kind of attributes,
/// a user or group to ask about, empty metadata (but a local review's namespace, which
/// its resource attributes must repeat).
fn validate(r: Review, obj: &Value) -> Result<(), ApiError> {
    let spec = &obj["spec"];
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let other = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut errors = Vec::new();
    match (resource, other) {
        (Some(_), Some(other)) => errors.push(FieldError::invalid_str(
            "spec.nonResourceAttributes",
            &go_fields(other),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errors.push(FieldError::invalid(
            "spec.resourceAttributes",
            &Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    if r.kind != "SelfSubjectAccessReview" {
        let no_groups = spec["groups"].as_array().is_none_or(Vec::is_empty);
        if spec["user"].as_str().unwrap_or("").is_empty() && no_groups {
            errors.push(FieldError::invalid(
                "spec.user",
                &json!(""),
                "at least one of user or group must be specified",
            ));
        }
    }
    let mut meta = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let namespace = meta
        .as_object_mut()
        .and_then(|m| m.remove("namespace"))
        .unwrap_or(Value::Null);
    if let Some(m) = meta.as_object_mut() {
        m.remove("managedFields");
    }
    if meta.as_object().is_some_and(|m| !m.is_empty()) || (!r.namespaced && !namespace.is_null()) {
        let detail = if r.namespaced {
            "must be empty except for namespace"
        } else {
            "must be empty"
        };
        errors.push(FieldError::invalid("metadata", &obj["metadata"], detail));
    }
    if r.namespaced {
        if let Some(resource) = resource {
            let given = resource["namespace"].as_str().unwrap_or("");
            if Some(given) != namespace.as_str() {
                errors.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    &json!(given),
                    "must match metadata.namespace",
                ));
            }
        }
        if other.is_some() {
            errors.push(FieldError::invalid_str(
                "spec.nonResourceAttributes",
                &go_fields(other.unwrap_or(&Value::Null)),
                "disallowed on this kind of request",
            ));
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    let mut e = ApiError::invalid(authorization_group(), "", "", errors);
    if let Some(details) = e.details.as_mut().and_then(Value::as_object_mut) {
        details.remove("kind");
    }
    Err(e)
}

fn authorization_group() -> &'static str {
    "authorization.k8s.io"
}

/// `nonResourceAttributes` as the real server prints its internal struct in a field error:
/// `{"Path":"/x","Verb":"get"}`.
fn go_fields(v: &Value) -> String {
    let text = |key: &str| v[key].as_str().unwrap_or("");
    json!({"Path": text("path"), "Verb": text("verb")}).to_string()
}

/// A `SelfSubjectRulesReview`'s answer: the rules the user has in `spec.namespace`.
fn rules_review(policy: &dyn rbac::Policy, user: &User, obj: &Value) -> Result<Value, ApiError> {
    let namespace = obj["spec"]["namespace"].as_str().unwrap_or("");
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, errors) = rbac::rules_for(policy, user, namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for (_, rule) in &rules {
        if !rule.resources.is_empty() {
            let mut r = json!({"verbs": rule.verbs, "apiGroups": rule.api_groups, "resources": rule.resources});
            if !rule.resource_names.is_empty() {
                r["resourceNames"] = json!(rule.resource_names);
            }
            resource_rules.push(r);
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules
                .push(json!({"verbs": rule.verbs, "nonResourceURLs": rule.non_resource_urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(rbac::aggregate(&errors));
    }
    Ok(json!({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "metadata": {}, "spec": {}, "status": status,
    }))
}

/// A user as `SelfSubjectReview` shows it.
fn user_info(user: &User) -> Value {
    let mut info = json!({"username": user.name, "groups": user.groups});
    if !user.uid.is_empty() {
        info["uid"] = json!(user.uid);
    }
    if !user.extra.is_empty() {
        info["extra"] = json!(user.extra);
    }
    info
}
