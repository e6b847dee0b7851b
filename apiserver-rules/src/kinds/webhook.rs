//! MutatingWebhookConfiguration and ValidatingWebhookConfiguration
//! (`admissionregistration.k8s.io/v1`): their defaults and kube-apiserver 1.36's rules
//! (`pkg/apis/admissionregistration/validation`), in its words and order. `matchConditions`
//! are stored but not checked (they are CEL; see the fake's README notes).

use crate::json::strings;
use serde_json::{Value, json};

use crate::field::FieldError;
use crate::names;

const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];

/// What the real server fills in for fields left out: `failurePolicy: Fail`, `matchPolicy:
/// Equivalent`, `timeoutSeconds: 10`, empty selectors, `scope: "*"` in each rule, port 443
/// for a Service, and `reinvocationPolicy: Never` for mutating webhooks.
pub fn default(obj: &mut Value, mutating: bool) {
    for hook in obj
        .get_mut("webhooks")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(h) = hook.as_object_mut() else {
            continue;
        };
        let mut set = |k: &str, v: Value| {
            if h.get(k).is_none_or(Value::is_null) {
                h.insert(k.to_owned(), v);
            }
        };
        set("failurePolicy", json!("Fail"));
        set("matchPolicy", json!("Equivalent"));
        set("timeoutSeconds", json!(10));
        set("namespaceSelector", json!({}));
        set("objectSelector", json!({}));
        if mutating {
            set("reinvocationPolicy", json!("Never"));
        }
        for rule in h
            .get_mut("rules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(r) = rule.as_object_mut()
                && r.get("scope").is_none_or(Value::is_null)
            {
                r.insert("scope".into(), json!("*"));
            }
        }
        if let Some(service) = h
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
            && service.get("port").is_none_or(Value::is_null)
        {
            service.insert("port".into(), json!(443));
        }
    }
}

/// The errors of one configuration, after defaulting.
pub(crate) fn validate(obj: &Value, mutating: bool, errors: &mut Vec<FieldError>) {
    let mut names_seen: Vec<&str> = Vec::new();
    for (i, hook) in obj
        .get("webhooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("webhooks[{i}]");
        webhook(hook, &at, mutating, errors);
        admission_review_versions(hook, &at, errors);
        let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
        if !name.is_empty() {
            if names_seen.contains(&name) {
                errors.push(FieldError::duplicate(format!("{at}.name"), &json!(name)));
            } else {
                names_seen.push(name);
            }
        }
    }
}

fn webhook(hook: &Value, at: &str, mutating: bool, errors: &mut Vec<FieldError>) {
    let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
    fully_qualified(name, &format!("{at}.name"), errors);
    for (i, rule) in hook
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        rule_with_operations(rule, &format!("{at}.rules[{i}]"), errors);
    }
    let text = |k: &str| hook.get(k).and_then(Value::as_str);
    if let Some(p) = text("failurePolicy")
        && !["Fail", "Ignore"].contains(&p)
    {
        errors.push(FieldError::not_supported(
            format!("{at}.failurePolicy"),
            &json!(p),
            &["Fail", "Ignore"],
        ));
    }
    if let Some(p) = text("matchPolicy")
        && !["Equivalent", "Exact"].contains(&p)
    {
        errors.push(FieldError::not_supported(
            format!("{at}.matchPolicy"),
            &json!(p),
            &["Equivalent", "Exact"],
        ));
    }
    match text("sideEffects") {
        None => errors.push(FieldError::required(
            format!("{at}.sideEffects"),
            "must specify one of None, NoneOnDryRun",
        )),
        Some(s) if !["None", "NoneOnDryRun"].contains(&s) => {
            errors.push(FieldError::not_supported(
                format!("{at}.sideEffects"),
                &json!(s),
                &["None", "NoneOnDryRun"],
            ))
        }
        Some(_) => {}
    }
    if let Some(t) = hook.get("timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&t)
    {
        errors.push(FieldError::invalid(
            format!("{at}.timeoutSeconds"),
            &json!(t),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if let Some(selector) = hook.get(key) {
            label_selector(selector, &format!("{at}.{key}"), errors);
        }
    }
    // Mutating webhooks: the reinvocation policy comes before the client configuration.
    if mutating
        && let Some(p) = text("reinvocationPolicy")
        && !["IfNeeded", "Never"].contains(&p)
    {
        errors.push(FieldError::not_supported(
            format!("{at}.reinvocationPolicy"),
            &json!(p),
            &["IfNeeded", "Never"],
        ));
    }
    client_config(
        hook.get("clientConfig"),
        &format!("{at}.clientConfig"),
        errors,
    );
}

/// `IsFullyQualifiedName`: a DNS subdomain of at least three segments.
fn fully_qualified(name: &str, at: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(FieldError::required(at, ""));
        return;
    }
    let problems = names::dns1123_subdomain(name);
    if !problems.is_empty() {
        errors.push(FieldError::invalid_str(at, name, problems.join(",")));
        return;
    }
    if name.split('.').count() < 3 {
        errors.push(FieldError::invalid_str(
            at,
            name,
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

fn rule_with_operations(rule: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let operations = strings(rule.get("operations"));
    if operations.is_empty() {
        errors.push(FieldError::required(format!("{at}.operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errors.push(FieldError::invalid(
            format!("{at}.operations"),
            &json!(operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            errors.push(FieldError::not_supported(
                format!("{at}.operations[{i}]"),
                &json!(op),
                OPERATIONS,
            ));
        }
    }
    let groups = strings(rule.get("apiGroups"));
    if groups.is_empty() {
        errors.push(FieldError::required(format!("{at}.apiGroups"), ""));
    }
    if groups.len() > 1 && groups.contains(&"*") {
        errors.push(FieldError::invalid(
            format!("{at}.apiGroups"),
            &json!(groups),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = strings(rule.get("apiVersions"));
    if versions.is_empty() {
        errors.push(FieldError::required(format!("{at}.apiVersions"), ""));
    }
    if versions.len() > 1 && versions.contains(&"*") {
        errors.push(FieldError::invalid(
            format!("{at}.apiVersions"),
            &json!(versions),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.is_empty() {
            errors.push(FieldError::required(format!("{at}.apiVersions[{i}]"), ""));
        }
    }
    resources(
        &strings(rule.get("resources")),
        &format!("{at}.resources"),
        errors,
    );
    if let Some(scope) = rule.get("scope").and_then(Value::as_str)
        && !SCOPES.contains(&scope)
    {
        errors.push(FieldError::not_supported(
            format!("{at}.scope"),
            &json!(scope),
            SCOPES,
        ));
    }
}

fn resources(list: &[&str], at: &str, errors: &mut Vec<FieldError>) {
    if list.is_empty() {
        errors.push(FieldError::required(at, ""));
    }
    let (mut wildcard_sub, mut wildcard_res): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, entry) in list.iter().enumerate() {
        if entry.is_empty() {
            errors.push(FieldError::required(format!("{at}[{i}]"), ""));
            continue;
        }
        double |= *entry == "*/*";
        single |= *entry == "*";
        let Some((res, sub)) = entry.split_once('/') else {
            plain = *entry != "*";
            continue;
        };
        if wildcard_sub.contains(&res) {
            errors.push(FieldError::invalid_str(
                format!("{at}[{i}]"),
                entry,
                format!("if '{res}/*' is present, must not specify {entry}"),
            ));
        }
        if wildcard_res.contains(&sub) {
            errors.push(FieldError::invalid_str(
                format!("{at}[{i}]"),
                entry,
                format!("if '*/{sub}' is present, must not specify {entry}"),
            ));
        }
        if sub == "*" {
            wildcard_sub.push(res);
        }
        if res == "*" {
            wildcard_res.push(sub);
        }
    }
    if list.len() > 1 && double {
        errors.push(FieldError::invalid(
            at,
            &json!(list),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        errors.push(FieldError::invalid(
            at,
            &json!(list),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
}

fn admission_review_versions(hook: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let at = format!("{at}.admissionReviewVersions");
    let versions = strings(hook.get("admissionReviewVersions"));
    if versions.is_empty() {
        errors.push(FieldError::required(at, "must specify one of v1, v1beta1"));
        return;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(v) {
            errors.push(FieldError::invalid_str(
                format!("{at}[{i}]"),
                v,
                "duplicate version",
            ));
            continue;
        }
        seen.push(v);
        for problem in names::dns1035_label(v) {
            errors.push(FieldError::invalid_str(format!("{at}[{i}]"), v, problem));
        }
    }
    if !versions.iter().any(|v| matches!(*v, "v1" | "v1beta1")) {
        errors.push(FieldError::invalid(
            at,
            &json!(versions),
            "must include at least one of v1, v1beta1",
        ));
    }
}

/// Label selector operators and their values, as `ValidateLabelSelector` checks them.
fn label_selector(selector: &Value, at: &str, errors: &mut Vec<FieldError>) {
    for (i, e) in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{at}.matchExpressions[{i}]");
        let values = e
            .get("values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" | "NotIn" if values == 0 => errors.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if values > 0 => errors.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errors.push(FieldError::invalid_str(
                format!("{at}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
    }
}

fn client_config(config: Option<&Value>, at: &str, errors: &mut Vec<FieldError>) {
    let url = config.and_then(|c| c.get("url")).and_then(Value::as_str);
    let service = config
        .and_then(|c| c.get("service"))
        .filter(|s| !s.is_null());
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => {
            errors.push(FieldError::required(
                at,
                "exactly one of url or service is required",
            ));
        }
        (Some(url), None) => webhook_url(url, &format!("{at}.url"), errors),
        (None, Some(service)) => webhook_service(service, &format!("{at}.service"), errors),
    }
}

fn webhook_url(url: &str, at: &str, errors: &mut Vec<FieldError>) {
    const FORM: &str = "; desired format: https://host[/path]";
    // Without `scheme://`, Go's url.Parse reads everything as a path: no host.
    let (scheme, rest) = url.split_once("://").unwrap_or(("", ""));
    if scheme != "https" {
        errors.push(FieldError::invalid_str(
            at,
            scheme,
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() {
        errors.push(FieldError::invalid_str(
            at,
            host,
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some((user, _)) = authority.rsplit_once('@') {
        errors.push(FieldError::invalid_str(
            at,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if let Some((_, fragment)) = rest.split_once('#')
        && !fragment.is_empty()
    {
        errors.push(FieldError::invalid_str(
            at,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    let before_fragment = rest.split('#').next().unwrap_or("");
    if let Some((_, query)) = before_fragment.split_once('?')
        && !query.is_empty()
    {
        errors.push(FieldError::invalid_str(
            at,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
}

fn webhook_service(service: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let text = |k: &str| service.get(k).and_then(Value::as_str).unwrap_or("");
    if text("name").is_empty() {
        errors.push(FieldError::required(format!("{at}.name"), ""));
    }
    if text("namespace").is_empty() {
        errors.push(FieldError::required(format!("{at}.namespace"), ""));
    }
    if let Some(port) = service.get("port").and_then(Value::as_i64)
        && !(1..=65535).contains(&port)
    {
        errors.push(FieldError::invalid(
            format!("{at}.port"),
            &json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(path) = service.get("path").and_then(Value::as_str) else {
        return;
    };
    if path.is_empty() || path == "/" {
        return;
    }
    let at = format!("{at}.path");
    if path == "//" {
        errors.push(FieldError::invalid_str(
            at,
            path,
            "segment[0] may not be empty",
        ));
        return;
    }
    if !path.starts_with('/') {
        errors.push(FieldError::invalid_str(&at, path, "must start with a '/'"));
    }
    let inner = path.get(1..).unwrap_or("");
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid_str(
                &at,
                path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for problem in names::dns1123_subdomain(step) {
            errors.push(FieldError::invalid_str(
                &at,
                path,
                format!("segment[{i}]: {problem}"),
            ));
        }
    }
}
