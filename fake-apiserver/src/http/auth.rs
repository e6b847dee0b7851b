//! The first filters of kube-apiserver's handler chain, run before a request is routed:
//! who sends it (the user of the server handle it came through; over HTTP, the user a
//! bearer token the server gave out stands for, `401 Unauthorized` for any other token, and
//! the default `kubernetes-admin` in `system:masters` for the kubeconfig's token `fake` or
//! no credentials at all), impersonation (`Impersonate-User`, `Impersonate-Group`,
//! `Impersonate-Uid`, `Impersonate-Extra-*`, as `kubectl --as` and `--as-group` send them:
//! [`super::impersonation`]), and authorization of what it asks for.

use std::sync::Arc;

use super::body::{self, ResponseBody};
use super::control::Controls;
use super::route::Target;
use crate::admission::authorization::access::Acting;
use crate::admission::authorization::{self, User, request};
use crate::admission::decode::options::Query;
use crate::error::ApiError;
use crate::registry;
use crate::store::Shared;

/// The user a request acts as, once impersonation and authorization let it through; or the
/// error it is answered with.
pub(crate) fn authorize(
    shared: &Shared,
    controls: &Controls,
    parts: &http::request::Parts,
    query: &Query,
) -> Result<User, ApiError> {
    let acting = parts.extensions.get::<Arc<Acting>>();
    let requestor = match acting {
        Some(a) => a.user.clone(),
        None => authenticate(controls, &parts.headers)?,
    };
    let attributes = request::attributes(parts.method.as_str(), parts.uri.path(), query);
    let user = {
        let state = shared.lock();
        super::impersonation::impersonate(
            &*state,
            controls.impersonation(),
            &requestor,
            &parts.headers,
            &attributes,
        )?
    };
    if let Some(acting) = acting {
        acting.log.record(&attributes);
    }
    if !user.privileged() {
        authorization::check(&*shared.lock(), &user, &attributes)?;
    }
    Ok(user)
}

/// The token the fake's kubeconfig carries ([`crate::kubeconfig`]): the default admin.
pub const ADMIN_TOKEN: &str = "fake";

/// Who a request over HTTP comes from: the user of its bearer token (the default admin for
/// [`ADMIN_TOKEN`] and for a request without credentials, a convenience kube-apiserver,
/// which would make it `system:anonymous`, does not have), or kube-apiserver's 401 for a
/// token the server did not give out (never treated as anonymous).
fn authenticate(controls: &Controls, headers: &http::HeaderMap) -> Result<User, ApiError> {
    let Some(value) = headers.get(http::header::AUTHORIZATION) else {
        return Ok(User::admin());
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    match token {
        Some(ADMIN_TOKEN) => Ok(User::admin()),
        Some(token) => controls
            .token_user(token)
            .ok_or_else(ApiError::unauthorized),
        None => Err(ApiError::unauthorized()),
    }
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
