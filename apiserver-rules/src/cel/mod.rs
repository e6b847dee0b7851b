//! CEL validation rules (`x-kubernetes-validations`) of custom resources, evaluated as
//! kube-apiserver 1.36 evaluates them, over the `cel` interpreter with the Kubernetes
//! function libraries of `kube-cel` (the crate kube's `cel` feature uses).
//!
//! [`Rules::compile`] parses a CRD version's rules once; [`Rules::validate`] runs them on a
//! create, or on an update with the old object: rules at every level (object, list items,
//! map values), transition rules (`oldSelf`) only where an old value is correlated (same
//! property, same map key, same list-map keys), `optionalOldSelf`, `message`,
//! `messageExpression`, `reason` and `fieldPath`, and ratcheting: on an update a failing
//! rule that does not use `oldSelf` on an unchanged value is a warning, not an error.
//!
//! Not emulated: the runtime cost budget (rules run to the end) and the `.?` optional field
//! syntax is parsed but `optional` map and list helpers are those of the `cel` crate.

pub mod check;
pub mod cost;
mod eval;
mod node;
mod value;

use std::fmt;

use kube_cel::KubeCelExt;
use kube_cel::cel::extractors::This;
use kube_cel::cel::parser::Parser;
use kube_cel::cel::{Context, IdedExpr, ParseErrors};
use serde_json::Value;

use crate::field::{ErrorType, FieldError};

pub use value::escape;

/// A CRD version's compiled rules.
pub struct Rules {
    root: node::Node,
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rules")
            .field("any", &self.root.has_rules)
            .finish()
    }
}

impl Rules {
    /// Parses every rule of `schema` (a CRD version's `openAPIV3Schema`); `None` when it
    /// has none, so that kinds without rules cost nothing per request.
    pub fn compile(schema: &Value) -> Option<Rules> {
        let root = node::Node::build(schema, true);
        root.has_rules.then_some(Rules { root })
    }

    /// Runs the rules on `new` (with `old` on an update). Failures are appended to
    /// `errors`; failures that ratcheting forgives go to `warnings` as the real server
    /// words them. Call only when [`blocks`] is false for the errors found so far.
    pub fn validate(
        &self,
        new: &Value,
        old: Option<&Value>,
        errors: &mut Vec<FieldError>,
        warnings: &mut Vec<String>,
    ) {
        let corr = match old {
            Some(old) => eval::Correlation::Old(old),
            None => eval::Correlation::Uncorrelated {
                ancestor_unchanged: false,
            },
        };
        eval::Walk { errors, warnings }.node(&self.root, "", new, old, corr);
    }
}

/// Whether schema errors keep the rules from running (a wrong type, a missing required
/// field, an unsupported enum value, a string or list too long), as on the real server.
pub fn blocks(errors: &[FieldError]) -> bool {
    errors.iter().any(|e| {
        matches!(
            e.kind,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    })
}

/// The error the real server adds when [`blocks`] kept the rules from running.
pub fn not_checked() -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field: "<nil>".to_owned(),
        value: "null".to_owned(),
        detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".to_owned(),
    }
}

/// Parses a rule as the real server does (optional syntax on).
pub(crate) fn parse(source: &str) -> Result<IdedExpr, ParseErrors> {
    Parser::new().enable_optional_syntax(true).parse(source)
}

thread_local! {
    /// The functions rules may call, registered once per thread.
    static BASE: Context<'static> = {
        let mut ctx = Context::default();
        ctx.register_all();
        ctx.add_function("dyn", dyn_value);
        ctx
    };
}

/// `dyn(x)`: `x`, typed as anything (only the type checker cares).
fn dyn_value(
    _: &kube_cel::cel::FunctionContext,
    This(v): This<kube_cel::cel::Value>,
) -> Result<kube_cel::cel::Value, kube_cel::cel::ExecutionError> {
    Ok(v)
}

fn with_context<R>(f: impl FnOnce(&Context<'static>) -> R) -> R {
    BASE.with(f)
}

#[cfg(test)]
mod tests;
