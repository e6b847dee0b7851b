//! Admission: what a write meets between the HTTP handler and the store, each step in its
//! own module, called by the verbs (`registry`) in kube-apiserver's order:
//!
//! - [`decode`]: the query's options and the body, read as the real server's handlers
//!   read them (content type, the type the body names, Go's decoding of built-in kinds);
//! - [`webhooks`]: the mutating and validating admission webhooks that configurations
//!   register, around the server's own handling of the request;
//! - [`lifecycle`]: NamespaceLifecycle, for creates;
//! - [`defaulting`]: the defaults of built-in kinds;
//! - [`validation`]: custom resources' schemas and CEL rules, CRDs' rules (metadata and
//!   built-in kinds are checked by `apiserver_rules` where the verbs need them).
//!
//! [`authorization`] (RBAC) runs before all of these, on every request, as kube-apiserver's
//! filters run it: the HTTP layer calls it before routing. [`Ctx`] is what a write carries
//! through these steps into the store.

pub mod authorization;
pub mod decode;
pub mod defaulting;
pub mod lifecycle;
pub mod validation;
pub mod webhooks;

use crate::conversion::Conversions;
use decode::options::FieldValidation;

/// Who writes and how: the field manager, dry-run, unknown-field handling, `force`, and
/// the warnings the request earned.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub(crate) manager: String,
    pub(crate) dry_run: bool,
    pub(crate) field_validation: FieldValidation,
    pub(crate) warnings: Vec<String>,
    /// `force` of a server-side apply: take the fields other managers own.
    pub(crate) force: bool,
    /// What the CRD's conversion webhook has converted for this request.
    pub(crate) conversions: Conversions,
    /// Who writes: RBAC escalation prevention looks at what they hold.
    pub(crate) user: authorization::User,
    /// A server-side apply (or a PUT of an RBAC kind) that finds nothing to update
    /// creates: authorized as `create` too, once the object is valid.
    pub(crate) authorize_create: bool,
}

impl Ctx {
    /// The server's own writes (the namespaces every cluster has, what its controllers
    /// write): as a member of `system:masters`.
    pub(crate) fn system() -> Self {
        Self::named("fake-apiserver")
    }

    /// Writes as field manager `manager`.
    pub fn named(manager: &str) -> Self {
        Self {
            manager: manager.to_owned(),
            dry_run: false,
            field_validation: FieldValidation::Ignore,
            warnings: Vec::new(),
            force: false,
            conversions: Conversions::default(),
            user: authorization::User::admin(),
            authorize_create: false,
        }
    }
}
