//! `spec.conversion`: the strategy, and a webhook's client config and review versions
//! exactly when the strategy is `Webhook`.

use serde_json::{Value, json};

use super::text;
use crate::field::FieldError;

/// `spec.conversion`, when set.
pub(super) fn validate(c: Option<&Value>, errs: &mut Vec<FieldError>) {
    let Some(c) = c.filter(|c| !c.is_null()) else {
        return;
    };
    let strategy = text(c, "strategy");
    match strategy {
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        "None" | "Webhook" => {}
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            &json!(other),
            &["None", "Webhook"],
        )),
    }
    let client = c.pointer("/webhook/clientConfig").filter(|v| !v.is_null());
    let reviews = c
        .pointer("/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if strategy == "Webhook" {
        match client {
            None => errs.push(FieldError::required(
                "spec.conversion.webhookClientConfig",
                "required when strategy is set to Webhook",
            )),
            Some(cc) if cc.get("url").is_some() == cc.get("service").is_some() => {
                errs.push(FieldError::required(
                    "spec.conversion.webhookClientConfig",
                    "exactly one of url or service is required",
                ));
            }
            Some(_) => {}
        }
        if reviews.is_empty() {
            errs.push(FieldError::required(
                "spec.conversion.conversionReviewVersions",
                "",
            ));
        } else if !reviews.iter().any(|v| v == "v1" || v == "v1beta1") {
            errs.push(FieldError::invalid(
                "spec.conversion.conversionReviewVersions",
                &json!(reviews),
                "must include at least one of v1, v1beta1",
            ));
        }
    } else {
        if client.is_some() {
            errs.push(FieldError::forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !reviews.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
}
