//! Validation: custom resources against their CRD's structural schema (defaulting and
//! pruning with it) and CEL rules, with ratcheting on updates; CRDs by the apiextensions
//! rules; and which group a 422 names. Object metadata and built-in kinds are checked by
//! `apiserver_rules` (`meta`, `kinds`), called where the verbs need them.

use serde_json::Value;

use super::Ctx;
use super::decode::options::FieldValidation;
use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::rules::{self, field::FieldError, schema};

/// Defaults, prunes and validates a custom resource by its schema. Pruned fields are
/// `unknown field` warnings, or with `fieldValidation=Strict` a 400, as on the real server.
/// On an update (`old`), errors at unchanged values are ratcheted away.
pub(crate) fn admit_schema(
    rt: &ResourceType,
    obj: &mut Value,
    old: Option<&Value>,
    ctx: &mut Ctx,
) -> Result<Vec<FieldError>, ApiError> {
    let Some(schema) = &rt.schema else {
        return Ok(Vec::new());
    };
    let mut unknown = Vec::new();
    let mut errors = schema::admit(schema, obj, &mut unknown);
    if let Some(old) = old {
        schema::ratchet(schema, obj, old, &mut errors);
    }
    let messages = unknown.iter().map(|u| format!("unknown field \"{u}\""));
    match ctx.field_validation {
        FieldValidation::Strict if !unknown.is_empty() => {
            return Err(ApiError::bad_request(format!(
                "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
                messages.collect::<Vec<_>>().join(", "),
                kind = rt.kind,
                version = rt.version,
            )));
        }
        FieldValidation::Warn => ctx.warnings.extend(messages),
        _ => {}
    }
    Ok(errors)
}

/// Runs a custom resource's CEL rules once the schema has been checked: not at all when a
/// schema error blocks them (the real server then adds one error saying so); failures that
/// ratcheting forgives on an update become warnings.
pub(crate) fn admit_rules(
    rt: &ResourceType,
    new: &Value,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
    ctx: &mut Ctx,
) {
    let Some(rules) = &rt.rules else {
        return;
    };
    if crate::rules::cel::blocks(errors) {
        errors.push(crate::rules::cel::not_checked());
    } else {
        rules.validate(new, old, errors, &mut ctx.warnings);
    }
}

/// The group a 422 names: `events.k8s.io` Events are validated as core Events, so their
/// errors say `Event "x" is invalid`.
pub(crate) fn error_group(rt: &ResourceType) -> &str {
    if rt.is("events.k8s.io", "events") {
        ""
    } else {
        &rt.group
    }
}

/// The CRD admission of a create (`old` is `None`) or an update: v1 defaults, then the
/// apiextensions rules; warnings go to the request. The errors join the metadata errors
/// in one 422.
pub(crate) fn review_crd(
    old: Option<&Value>,
    crd: &mut Value,
    warnings: &mut Vec<String>,
) -> Vec<FieldError> {
    rules::crd::apply_defaults(crd);
    let review = match old {
        None => rules::crd::validate(crd),
        Some(old) => rules::crd::validate_update(old, crd),
    };
    warnings.extend(review.warnings);
    let mut errors = rules::crd::name_errors(crd);
    errors.extend(review.errors);
    errors
}
