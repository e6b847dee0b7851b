//! Query parameters: decoded and validated as the real server does, with its errors
//! (`400` for a value that does not parse, `422 Invalid` on `ListOptions`,
//! `CreateOptions`, `DeleteOptions`, ... for one that parses but is not allowed).

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::rules::field::FieldError;
use crate::store::selector::{FieldSelector, LabelSelector};

/// The decoded query string, in order; repeated keys are kept.
#[derive(Debug, Clone, Default)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Decodes `a=1&b=%20x`.
    pub fn parse(q: Option<&str>) -> Self {
        Self(
            q.unwrap_or("")
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (percent_decode(k), percent_decode(v))
                })
                .collect(),
        )
    }

    /// The same query with `key=value` first (so it wins over a value already there).
    pub fn with(&self, key: &str, value: &str) -> Self {
        let mut pairs = vec![(key.to_owned(), value.to_owned())];
        pairs.extend(self.0.iter().cloned());
        Self(pairs)
    }

    /// The first value of `key` (the real server ignores the others).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A boolean as Go's conversion reads it: absent, `0` and `false` are false, anything
    /// else (even an empty value) is true.
    pub fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| !v.eq_ignore_ascii_case("false") && v != "0")
    }

    /// Like [`Query::flag`], but `None` when absent.
    pub fn opt_flag(&self, key: &str) -> Option<bool> {
        self.get(key).map(|_| self.flag(key))
    }

    /// An integer (`limit`, `timeoutSeconds`, `gracePeriodSeconds`); a value that does not
    /// parse is a 400 with Go's `strconv` message.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => parse_int(v).map(Some).map_err(ApiError::bad_request),
        }
    }
}

/// Go's `strconv.ParseInt(s, 10, 64)` with its error text.
pub fn parse_int(v: &str) -> Result<i64, String> {
    v.parse::<i64>().map_err(|_| {
        let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            format!("strconv.ParseInt: parsing \"{v}\": value out of range")
        } else {
            format!("strconv.ParseInt: parsing \"{v}\": invalid syntax")
        }
    })
}

/// `fieldValidation`: what to do with unknown or duplicate fields in a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and answer with a `Warning` header each (the default).
    #[default]
    Warn,
    /// Reject the request.
    Strict,
}

/// Options of create, update and patch requests.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// `force` (apply patches only).
    pub force: bool,
}

fn dry_run(query: &Query, errors: &mut Vec<FieldError>) -> bool {
    let values = query.all("dryRun");
    if values.iter().any(|v| *v != "All") {
        errors.push(FieldError::not_supported(
            "dryRun",
            &json!(values),
            &["All"],
        ));
    }
    !values.is_empty()
}

impl WriteOptions {
    /// Reads and checks the options of a create (`CreateOptions`), update (`UpdateOptions`)
    /// or patch (`PatchOptions`); `apply` for a server-side apply patch.
    pub fn parse(query: &Query, kind: &str, apply: bool) -> Result<Self, ApiError> {
        let mut errors = Vec::new();
        // An empty manager is no manager: required for apply, the user agent's otherwise.
        let manager = query
            .get("fieldManager")
            .filter(|m| !m.is_empty())
            .map(str::to_owned);
        if let Some(m) = &manager {
            if m.len() > 128 {
                errors.push(FieldError::too_long("fieldManager", 128));
            }
            for (i, c) in m.char_indices() {
                if c.is_control() {
                    errors.push(FieldError::invalid_str(
                        "fieldManager",
                        m,
                        format!("invalid character U+{:04X} (at position {i})", c as u32),
                    ));
                }
            }
        } else if apply {
            errors.push(FieldError::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
        let dry_run = dry_run(query, &mut errors);
        let field_validation = match query.get("fieldValidation").unwrap_or("") {
            "" | "Warn" => FieldValidation::Warn,
            "Ignore" => FieldValidation::Ignore,
            "Strict" => FieldValidation::Strict,
            other => {
                errors.push(FieldError::not_supported(
                    "fieldValidation",
                    &json!(other),
                    &["", "Ignore", "Strict", "Warn"],
                ));
                FieldValidation::Warn
            }
        };
        let force = query.get("force").is_some();
        if force && !apply && kind == "PatchOptions" {
            errors.push(FieldError::forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", kind, "", errors));
        }
        Ok(Self {
            dry_run,
            field_manager: manager,
            field_validation,
            force: query.flag("force"),
        })
    }
}

/// Options of list and watch requests.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub labels: String,
    /// `fieldSelector`.
    pub fields: String,
    /// `limit`; 0 or less means no limit.
    pub limit: i64,
    /// `continue`.
    pub continue_token: String,
    /// `resourceVersion`.
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: String,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<i64>,
    /// `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// `sendInitialEvents`, after the watch-list defaults.
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    /// Reads and checks the options of a list (`watch` false) or watch.
    pub fn parse(query: &Query, watch: bool) -> Result<Self, ApiError> {
        let mut o = Self {
            labels: query.get("labelSelector").unwrap_or("").to_owned(),
            fields: query.get("fieldSelector").unwrap_or("").to_owned(),
            limit: query.int("limit")?.unwrap_or(0),
            continue_token: query.get("continue").unwrap_or("").to_owned(),
            resource_version: query.get("resourceVersion").unwrap_or("").to_owned(),
            resource_version_match: query.get("resourceVersionMatch").unwrap_or("").to_owned(),
            timeout_seconds: query.int("timeoutSeconds")?,
            bookmarks: query.flag("allowWatchBookmarks"),
            send_initial_events: query.opt_flag("sendInitialEvents"),
        };
        let rvm = o.resource_version_match.clone();
        let mut errors = Vec::new();
        let forbidden = |why: &str| FieldError::forbidden("resourceVersionMatch", why);
        if watch {
            // The watch-list defaults (the WatchList feature is on in 1.36): a watch from
            // "now" streams the current state first.
            if o.send_initial_events.is_none()
                && rvm.is_empty()
                && matches!(o.resource_version.as_str(), "" | "0")
            {
                o.send_initial_events = Some(true);
                o.resource_version_match = "NotOlderThan".into();
            }
            let rvm = o.resource_version_match.as_str();
            if o.send_initial_events.is_some() && rvm != "NotOlderThan" {
                errors.push(forbidden(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if !rvm.is_empty() {
                if o.send_initial_events.is_none() {
                    errors.push(forbidden(
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ));
                }
                if rvm != "NotOlderThan" {
                    errors.push(FieldError::not_supported(
                        "resourceVersionMatch",
                        &json!(rvm),
                        &["NotOlderThan"],
                    ));
                }
                if !o.continue_token.is_empty() {
                    errors.push(forbidden(
                        "resourceVersionMatch is forbidden when continue is provided",
                    ));
                }
            }
        } else {
            if !rvm.is_empty() {
                if o.resource_version.is_empty() {
                    errors.push(forbidden(
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    ));
                }
                if !o.continue_token.is_empty() {
                    errors.push(forbidden(
                        "resourceVersionMatch is forbidden when continue is provided",
                    ));
                }
                match rvm.as_str() {
                    "Exact" if o.resource_version == "0" => errors.push(forbidden(
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    )),
                    "Exact" | "NotOlderThan" => {}
                    other => errors.push(FieldError::not_supported(
                        "resourceVersionMatch",
                        &json!(other),
                        &["Exact", "NotOlderThan", ""],
                    )),
                }
            }
            if o.send_initial_events.is_some() {
                errors.push(FieldError::forbidden(
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for list",
                ));
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", errors));
        }
        Ok(o)
    }
}

impl ListOptions {
    /// The label and field selectors, parsed and checked against the fields `rt` supports.
    pub fn selectors(&self, rt: &ResourceType) -> Result<(LabelSelector, FieldSelector), ApiError> {
        let labels = LabelSelector::parse(&self.labels).map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse(
            &self.fields,
            &rt.selectable_fields,
            rt.field_labels,
            &rt.kind,
        )
        .map_err(ApiError::bad_request)?;
        Ok((labels, fields))
    }
}

/// Options of a delete: from the body (a `DeleteOptions` object) or the query.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `propagationPolicy`.
    pub propagation: Option<String>,
    /// `orphanDependents` (deprecated).
    pub orphan_dependents: Option<bool>,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Reads the options from the body when it has one, else from the query, then checks
    /// them (`422` on `DeleteOptions.meta.k8s.io`).
    pub fn parse(body: Option<&Value>, query: &Query) -> Result<Self, ApiError> {
        let mut errors = Vec::new();
        let o = match body {
            Some(b) => {
                let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
                let dry: Vec<&str> = b
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if dry.iter().any(|v| *v != "All") {
                    errors.push(FieldError::not_supported("dryRun", &json!(dry), &["All"]));
                }
                let pre = b.get("preconditions").cloned().unwrap_or(Value::Null);
                Self {
                    propagation: text(b, "propagationPolicy"),
                    orphan_dependents: b.get("orphanDependents").and_then(Value::as_bool),
                    uid: text(&pre, "uid"),
                    resource_version: text(&pre, "resourceVersion"),
                    dry_run: !dry.is_empty(),
                }
            }
            None => {
                query.int("gracePeriodSeconds")?;
                Self {
                    propagation: query.get("propagationPolicy").map(str::to_owned),
                    orphan_dependents: query.opt_flag("orphanDependents"),
                    uid: None,
                    resource_version: None,
                    dry_run: dry_run(query, &mut errors),
                }
            }
        };
        if let Some(p) = &o.propagation {
            if o.orphan_dependents.is_some() {
                errors.push(FieldError::invalid_str(
                    "propagationPolicy",
                    p,
                    "orphanDependents and deletionPropagation cannot be both set",
                ));
            }
            if !matches!(p.as_str(), "Foreground" | "Background" | "Orphan") {
                errors.push(FieldError::not_supported(
                    "propagationPolicy",
                    &json!(p),
                    &["Foreground", "Background", "Orphan", "nil"],
                ));
            }
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                errors,
            ));
        }
        Ok(o)
    }

    /// The effective policy: `orphanDependents=true` is `Orphan`.
    pub fn policy(&self) -> Option<&str> {
        match (&self.propagation, self.orphan_dependents) {
            (Some(p), _) => Some(p.as_str()),
            (None, Some(true)) => Some("Orphan"),
            (None, Some(false)) => Some("Background"),
            (None, None) => None,
        }
    }
}

/// Decodes `%XX` escapes (and `+` as space in queries).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_fail_like_the_real_server() {
        let q = |s: &str| Query::parse(Some(s));
        let err = ListOptions::parse(&q("limit=abc"), false).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "strconv.ParseInt: parsing \"abc\": invalid syntax")
        );
        let err = ListOptions::parse(&q("resourceVersionMatch=Exact"), false).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(err.message.starts_with(
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden"
        ));
        let w = ListOptions::parse(&q("watch=1"), true).unwrap();
        assert_eq!(w.send_initial_events, Some(true), "watch-list defaults");
        let err = WriteOptions::parse(&q("dryRun=foo"), "CreateOptions", false).unwrap_err();
        assert_eq!(
            err.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"foo\"]: supported values: \"All\""
        );
        let err = DeleteOptions::parse(None, &q("propagationPolicy=Sideways")).unwrap_err();
        assert!(
            err.message
                .contains("supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"")
        );
        assert!(
            q("watch=").flag("watch")
                && !q("watch=0").flag("watch")
                && !q("watch=False").flag("watch")
        );
    }
}
