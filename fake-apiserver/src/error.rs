//! API errors as the real server sends them: a `metav1.Status` body with reason and code.

use serde_json::{Value, json};

use crate::rules::field::{FieldError, aggregate};

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
    /// `Warning` headers sent with the error (rules that ratcheting forgave).
    pub warnings: Vec<String>,
}

/// The key under which an error's `details` carry the `metadata.continue` of its Status
/// (written there, not as details).
pub(crate) const LIST_CONTINUE: &str = "\u{0}listContinue";

impl ApiError {
    fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_owned(),
            message: message.into(),
            details: None,
            warnings: Vec::new(),
        }
    }

    /// The error with `Warning` headers.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 for an object: `foos.example.com "x" not found`.
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(plural, group);
        Self::new(404, "NotFound", format!("{qualified} \"{name}\" not found"))
            .with_details(object_details(group, plural, name))
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
    /// `deleting`: the existing object is being deleted, which the message says first.
    pub fn already_exists(group: &str, plural: &str, name: &str, deleting: bool) -> Self {
        let qualified = qualified(plural, group);
        let prefix = if deleting {
            "object is being deleted: "
        } else {
            ""
        };
        Self::new(
            409,
            "AlreadyExists",
            format!("{prefix}{qualified} \"{name}\" already exists"),
        )
        .with_details(object_details(group, plural, name))
    }

    /// An object of a CRD stored in a version the CRD no longer has: kube-apiserver's
    /// converter refuses it (`request to convert CR from an invalid group/version`). A get
    /// answers 500 with that message; a list, served by a watch cache that cannot list the
    /// kind, answers 429 with it (retry after 6 s) until the object is gone.
    pub fn invalid_stored_version(stored: &str, listing: Option<(&str, &str)>) -> Self {
        let cause = format!("request to convert CR from an invalid group/version: {stored}");
        match listing {
            None => Self::new(500, "", cause),
            Some((group_version, kind)) => Self::new(
                429,
                "TooManyRequests",
                format!(
                    "storage is (re)initializing: failed to list {group_version}, Kind={kind}: {cause}"
                ),
            )
            .with_details(json!({"retryAfterSeconds": 6})),
        }
    }

    /// 401 for credentials the server does not know: kube-apiserver's answer, whatever the
    /// request asked.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 409 when `generateName` found no free name in eight tries.
    pub fn generate_name_conflict(group: &str, plural: &str, name: &str) -> Self {
        let qualified = qualified(plural, group);
        let mut details = object_details(group, plural, name);
        details["retryAfterSeconds"] = json!(1);
        Self::new(
            409,
            "AlreadyExists",
            format!(
                "{qualified} \"{name}\" already exists, the server was not able to generate a unique name for the object"
            ),
        )
        .with_details(details)
    }

    /// 409 on a stale `resourceVersion` or failed precondition.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let qualified = qualified(plural, group);
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}"),
        )
        .with_details(object_details(group, plural, name))
    }

    /// 409 on server-side apply conflicts between field managers.
    pub fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message).with_details(json!({"causes": causes}))
    }

    /// 422 with one cause per invalid field: `Kind[.group] "name" is invalid: ...`, the
    /// message listing each distinct error once and `details.causes` every one.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<FieldError>) -> Self {
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let message = if causes.is_empty() {
            format!("{qualified} \"{name}\" is invalid")
        } else {
            format!("{qualified} \"{name}\" is invalid: {}", aggregate(&causes))
        };
        let causes: Vec<Value> = causes.iter().map(cause).collect();
        let mut details = json!({"kind": kind, "causes": causes});
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        Self::new(422, "Invalid", message).with_details(details)
    }

    /// 403 on an object: `configmaps "x" is forbidden: <why>`.
    pub fn forbidden(group: &str, plural: &str, name: &str, why: &str, causes: Vec<Value>) -> Self {
        let qualified = qualified(plural, group);
        let mut details = object_details(group, plural, name);
        if !causes.is_empty() {
            details["causes"] = json!(causes);
        }
        Self::new(
            403,
            "Forbidden",
            format!("{qualified} \"{name}\" is forbidden: {why}"),
        )
        .with_details(details)
    }

    /// 504 for a `resourceVersion` the server has not reached.
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        Self::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        }))
    }

    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405 for a method the path does not take, as the real server's router answers.
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    /// 410 for a `resourceVersion` older than the retained history.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415 for a body whose content type the endpoint does not take; `accepted` lists
    /// the ones it does.
    pub fn unsupported_media_type(accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// 415 from the router, for a patch type a built-in resource does not take.
    pub fn unsupported_patch_type() -> Self {
        Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
            .with_details(json!({}))
    }

    /// 406 from the router, for an `Accept` header no representation satisfies.
    pub fn not_acceptable(available: &[&str]) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!(
                "406: Not Acceptable\n\nAvailable representations: {}",
                available.join(", ")
            ),
        )
        .with_details(json!({}))
    }

    /// 500, for faults injected by tests.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// A custom error (fault injection).
    pub fn custom(code: u16, reason: &str, message: &str) -> Self {
        Self::new(code, reason, message)
    }

    /// 422 for a JSON patch whose operation cannot be applied: the real server drops the
    /// operation's error and says only this.
    pub fn patch_rejected() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
        .with_details(json!({}))
    }

    /// 422 for a patch whose result cannot be decoded into the kind's Go type: no kind and
    /// no name, so the message starts with a space (` "" is invalid: patch: ...`).
    pub fn patch_invalid(value: &str, detail: &str) -> Self {
        let cause = FieldError::invalid_str("patch", value, detail);
        let message = format!(" \"\" is invalid: {cause}");
        Self::new(422, "Invalid", message).with_details(json!({"causes": [
            {"reason": "FieldValueInvalid", "message": cause.body(), "field": "patch"}
        ]}))
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
        match self.details.as_ref().and_then(|d| d.get(LIST_CONTINUE)) {
            // A list's 410 hands out a token to go on with, in the Status's metadata.
            Some(token) => status["metadata"] = json!({"continue": token}),
            None => {
                if let Some(details) = &self.details {
                    status["details"] = details.clone();
                }
            }
        }
        if self.reason.is_empty() {
            // An internal error has no reason (`StatusReasonUnknown` is left out).
            status.as_object_mut().map(|s| s.remove("reason"));
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

/// A `details.causes[]` entry: `reason`, `message`, and `field` unless it is the root.
fn cause(e: &FieldError) -> Value {
    let mut c = json!({"reason": e.kind.reason(), "message": e.body()});
    if !e.field.is_empty() {
        c["field"] = json!(e.field);
    }
    c
}

/// `details` naming an object: `name`, `group` (left out for the core group), `kind` (the
/// resource, as the real server puts it).
fn object_details(group: &str, plural: &str, name: &str) -> Value {
    let mut details = json!({"name": name, "kind": plural});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    details
}
