//! Authorization, as kube-apiserver's `Node,RBAC` authorizers decide it: who asks
//! ([`User`]), what they ask for ([`Attributes`], read from a request by [`request`]), and
//! whether the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the store allow
//! it ([`rbac`]). Members of `system:masters` are allowed everything before RBAC is asked,
//! as the real server's privileged-group authorizer allows them. A denial is the real
//! server's 403 ([`forbidden`]).
//!
//! [`bootstrap`] holds the default ClusterRoles and bindings a new server has, and
//! [`access`] what a client acting as a user records of its own requests. The HTTP layer
//! authorizes every request before routing it, as kube-apiserver's filters do, so a
//! request for a resource that does not exist is a 403 before it is a 404.

pub mod access;
pub mod bootstrap;
pub mod cover;
pub mod escalation;
pub mod rbac;
pub mod request;
pub mod types;

pub use types::{
    AUTHENTICATED, Attributes, Decision, UNAUTHENTICATED, User, forbidden, go_quote,
    service_account_groups, split_service_account,
};

use crate::error::ApiError;

/// The decision for `user` asking for `attributes`, from the RBAC objects of `policy`.
pub fn authorize(policy: &dyn rbac::Policy, user: &User, attributes: &Attributes) -> Decision {
    if user.privileged() {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    rbac::authorize(policy, user, attributes)
}

/// `Ok` when `user` may do what `attributes` ask, or the 403 the real server answers.
pub fn check(
    policy: &dyn rbac::Policy,
    user: &User,
    attributes: &Attributes,
) -> Result<(), ApiError> {
    let decision = authorize(policy, user, attributes);
    if decision.allowed {
        Ok(())
    } else {
        Err(forbidden(user, attributes, &decision.reason))
    }
}
