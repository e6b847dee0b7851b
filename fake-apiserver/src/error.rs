//! API errors as the real server sends them: a `metav1.Status` body with reason and code.

use serde_json::{Value, json};

/// A failed request: HTTP code, `reason`, message and details, as `kube::Error::Api` reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `metav1.StatusReason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...).
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// `details`, when the reason has them.
    pub details: Option<Value>,
}

impl ApiError {
    fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_owned(),
            message: message.into(),
            details: None,
        }
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 for an object: `foos.example.com "x" not found`.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(plural, group);
        Self::new(404, "NotFound", format!("{qualified} \"{name}\" not found"))
            .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// 404 for a path the server does not serve.
    pub fn no_route(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
        .with_details(json!({}))
    }

    /// 409 on create of an existing name.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(plural, group);
        Self::new(
            409,
            "AlreadyExists",
            format!("{qualified} \"{name}\" already exists"),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// 409 on a stale `resourceVersion` or failed precondition.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let qualified = qualified(plural, group);
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}"),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }

    /// 409 on server-side apply conflicts between field managers.
    pub fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message).with_details(json!({"causes": causes}))
    }

    /// 422 with one cause per invalid field.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<FieldError>) -> Self {
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let list: Vec<String> = causes.iter().map(FieldError::to_string).collect();
        let message = match list.as_slice() {
            [one] => format!("{qualified} \"{name}\" is invalid: {one}"),
            many => format!("{qualified} \"{name}\" is invalid: [{}]", many.join(", ")),
        };
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.to_string(), "field": c.field}))
            .collect();
        Self::new(422, "Invalid", message)
            .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
    }

    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405 for a verb the resource does not support.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 for a `resourceVersion` older than the retained history.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415 for a patch content type the server does not know.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got {content_type}"
            ),
        )
    }

    /// 500, for faults injected by tests.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// A custom error (fault injection).
    pub fn custom(code: u16, reason: &str, message: &str) -> Self {
        Self::new(code, reason, message)
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    }
}

/// One invalid field, rendered as the real server does:
/// `spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, `FieldValueTypeInvalid`, `FieldValueForbidden`.
    pub reason: &'static str,
    /// Dotted field path (`spec.replicas`).
    pub field: String,
    /// The detail after the field.
    pub detail: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.detail)
    }
}
