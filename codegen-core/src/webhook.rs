//! Admission webhook configurations from controller-gen's markers:
//! `+kubebuilder:webhook:<key>=<value>,...` (one webhook) and
//! `+kubebuilder:webhookconfiguration:mutating=<bool>,name=<name>` (the name of the
//! MutatingWebhookConfiguration or ValidatingWebhookConfiguration that holds them).
//!
//! As controller-gen does, markers are read from every comment line of the sources (`//`,
//! `///`, `//!`), so a Go project's markers port without edits; the keys, defaults
//! (`serviceName=webhook-service`, `serviceNamespace=system`, `webhookVersions=v1`) and
//! rules (`path` or `url`, not both; `admissionReviewVersions` and `sideEffects` required;
//! `timeoutSeconds` from 1 to 30) are controller-gen's. Where controller-gen passes a value
//! through that kube-apiserver then refuses (`failurePolicy=Sometimes`, `verbs=get`), this
//! is an error at the marker instead. Webhooks are sorted by name, so the YAML does not
//! depend on the order of the markers.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::diag::did_you_mean;
use crate::source::SourceFile;

/// The marker of one webhook.
pub(crate) const WEBHOOK: &str = "+kubebuilder:webhook:";
/// The marker that names a webhook configuration.
pub(crate) const CONFIGURATION: &str = "+kubebuilder:webhookconfiguration:";

const KEYS: &[&str] = &[
    "mutating",
    "failurePolicy",
    "matchPolicy",
    "sideEffects",
    "timeoutSeconds",
    "groups",
    "resources",
    "verbs",
    "versions",
    "name",
    "path",
    "url",
    "serviceName",
    "serviceNamespace",
    "servicePort",
    "admissionReviewVersions",
    "reinvocationPolicy",
    "webhookVersions",
];

/// Where the API server sends a webhook's requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClientConfig {
    /// A Service in the cluster.
    Service {
        /// `serviceName` (default `webhook-service`).
        name: String,
        /// `serviceNamespace` (default `system`).
        namespace: String,
        /// `path`.
        path: String,
        /// `servicePort` (the API server's default, 443, when absent).
        port: Option<i32>,
    },
    /// `url`: any HTTPS address.
    Url(String),
}

/// One webhook, as a `+kubebuilder:webhook` marker declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Webhook {
    /// `mutating=true`: a MutatingWebhookConfiguration's webhook.
    pub(crate) mutating: bool,
    /// `name`: a fully qualified name (`vfoo.example.com`).
    pub(crate) name: String,
    /// `Fail` or `Ignore`.
    pub(crate) failure_policy: String,
    /// `Exact` or `Equivalent`, when given.
    pub(crate) match_policy: Option<String>,
    /// `None` or `NoneOnDryRun`.
    pub(crate) side_effects: String,
    /// 1 to 30, when given.
    pub(crate) timeout_seconds: Option<i32>,
    /// `groups`, with `core` written as `""`.
    pub(crate) groups: Vec<String>,
    /// `versions`.
    pub(crate) versions: Vec<String>,
    /// `resources`.
    pub(crate) resources: Vec<String>,
    /// `verbs` as the API's operations (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, `*`).
    pub(crate) operations: Vec<String>,
    /// Where requests go.
    pub(crate) client: ClientConfig,
    /// `admissionReviewVersions`.
    pub(crate) admission_review_versions: Vec<String>,
    /// `Never` or `IfNeeded` (mutating webhooks only).
    pub(crate) reinvocation_policy: Option<String>,
}

/// The webhooks of a tree, and the names of their configurations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Webhooks {
    /// Every webhook, sorted by name (mutating and validating together).
    pub(crate) webhooks: Vec<Webhook>,
    /// `+kubebuilder:webhookconfiguration` names: (mutating, name).
    pub(crate) names: BTreeMap<bool, String>,
}

/// A mistake in a marker: the byte offset in the marker's text after its name, and why.
pub(crate) type Mistake = (usize, String);

/// Splits a marker's arguments at the commas outside quotes and braces: `(offset, key,
/// value)`, the value unquoted.
fn arguments(body: &str) -> Vec<(usize, String, String)> {
    let mut parts = Vec::new();
    let (mut start, mut depth, mut quote) = (0, 0usize, None::<char>);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '`') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push((start, &body[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push((start, &body[start..]));
    parts
        .into_iter()
        .filter(|(_, p)| !p.trim().is_empty())
        .map(|(offset, part)| match part.split_once('=') {
            Some((k, v)) => (offset, k.trim().to_owned(), unquote(v.trim())),
            None => (offset, part.trim().to_owned(), String::new()),
        })
        .collect()
}

fn unquote(v: &str) -> String {
    for q in ['"', '`'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    v.to_owned()
}

/// A list value: `a;b;c` or `{a,b,c}`.
fn list(value: &str) -> Vec<String> {
    let inner = value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .map_or_else(|| value.replace(';', ","), str::to_owned);
    inner
        .split(',')
        .map(str::trim)
        // `""` is an item (the core group), an empty place is not.
        .filter(|v| !v.is_empty())
        .map(unquote)
        .collect()
}

/// `value` matched case-insensitively against `allowed`: the API's spelling, or a mistake.
fn one_of(key: &str, value: &str, allowed: &[&'static str]) -> Result<&'static str, String> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value))
        .copied()
        .ok_or_else(|| {
            format!(
                "`{key}={value}` is not one of {}{}",
                allowed.join(", "),
                did_you_mean(value, allowed.iter().copied())
            )
        })
}

/// Whether `name` is what kube-apiserver takes as a webhook name: a lowercase DNS subdomain
/// of at least three segments.
fn fully_qualified(name: &str) -> bool {
    crate::naming::is_dns_subdomain(name) && name.split('.').count() >= 3
}

/// The arguments of a `+kubebuilder:webhook` marker by key, with their offsets; unknown and
/// repeated keys are mistakes.
fn read_arguments(
    body: &str,
    mistakes: &mut Vec<Mistake>,
) -> BTreeMap<&'static str, (usize, String)> {
    let mut values = BTreeMap::new();
    for (offset, key, value) in arguments(body) {
        match KEYS.iter().find(|k| **k == key) {
            Some(k) if values.contains_key(k) => {
                mistakes.push((offset, format!("`{key}` is given twice")));
            }
            Some(k) => {
                values.insert(*k, (offset, value));
            }
            None if key == "patch" => mistakes.push((
                offset,
                "`patch=` is not supported by kube-codegen yet; edit the generated YAML with kustomize instead".to_owned(),
            )),
            None => mistakes.push((
                offset,
                format!(
                    "unknown key `{key}` in `+kubebuilder:webhook`{}",
                    did_you_mean(&key, KEYS.iter().copied())
                ),
            )),
        }
    }
    values
}

/// Whether kube-apiserver takes `v` for the key `key`, or why not.
fn check_value(key: &str, v: &str) -> Result<(), String> {
    match key {
        "mutating" if !matches!(v, "true" | "false") => {
            Err(format!("`mutating={v}` is `true` or `false`"))
        }
        "name" if !fully_qualified(v) => Err(format!(
            "webhook name `{v}` should be a domain with at least three segments separated by dots, as kube-apiserver requires (such as `vfoo.example.com`)"
        )),
        "failurePolicy" => one_of(key, v, &["Fail", "Ignore"]).map(drop),
        "matchPolicy" => one_of(key, v, &["Exact", "Equivalent"]).map(drop),
        "reinvocationPolicy" => one_of(key, v, &["Never", "IfNeeded"]).map(drop),
        "sideEffects" => match one_of(key, v, &["None", "NoneOnDryRun", "Some", "Unknown"])? {
            "Some" | "Unknown" => Err(format!(
                "`sideEffects={v}` is refused by admissionregistration.k8s.io/v1; use `None` or `NoneOnDryRun` (and skip side effects on dry runs)"
            )),
            _ => Ok(()),
        },
        "timeoutSeconds" if !matches!(v.parse::<i32>(), Ok(1..=30)) => Err(format!(
            "`timeoutSeconds={v}` must be between 1 and 30 seconds"
        )),
        "servicePort" if !matches!(v.parse::<i32>(), Ok(1..=65535)) => {
            Err(format!("`servicePort={v}` is a port from 1 to 65535"))
        }
        "path" if !v.starts_with('/') => Err(format!("`path={v}` must start with `/`")),
        "url" if !v.starts_with("https://") => Err(format!(
            "`url={v}` must be an `https://` URL: the API server calls webhooks over TLS"
        )),
        "verbs" => {
            let ops = ["create", "update", "delete", "connect", "*"];
            match list(v)
                .into_iter()
                .find(|verb| !ops.iter().any(|o| o.eq_ignore_ascii_case(verb)))
            {
                Some(verb) => Err(format!(
                    "verb `{verb}` cannot be admitted: webhooks see create, update, delete and connect (or `*`){}",
                    did_you_mean(&verb, ops)
                )),
                None => Ok(()),
            }
        }
        "webhookVersions" => match list(v).iter().find(|w| *w != "v1") {
            Some(w) => Err(format!(
                "webhook version `{w}` is not supported; admissionregistration.k8s.io/v1 is the only one"
            )),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Where the API server sends requests: `path` behind a Service (with controller-gen's
/// default Service), or `url`; exactly one of them.
fn client_config(
    valid: &BTreeMap<&str, String>,
    given: &BTreeMap<&'static str, (usize, String)>,
    mistakes: &mut Vec<Mistake>,
) -> Option<ClientConfig> {
    let text = |k: &str| valid.get(k).cloned();
    match (
        text("path"),
        text("url"),
        given.get("path"),
        given.get("url"),
    ) {
        (Some(path), None, _, None) => Some(ClientConfig::Service {
            name: text("serviceName").unwrap_or_else(|| "webhook-service".to_owned()),
            namespace: text("serviceNamespace").unwrap_or_else(|| "system".to_owned()),
            path,
            port: text("servicePort").and_then(|p| p.parse().ok()),
        }),
        (None, Some(url), None, _) => Some(ClientConfig::Url(url)),
        (_, _, Some((at, _)), Some(_)) => {
            mistakes.push((*at, "`path` and `url` are exclusive: `path` reaches the webhook through a Service, `url` directly; keep one".to_owned()));
            None
        }
        (_, _, None, None) => {
            mistakes.push((
                0,
                "`+kubebuilder:webhook` needs `path=` (served behind a Service) or `url=`"
                    .to_owned(),
            ));
            None
        }
        // One of them given, and a mistake already.
        _ => None,
    }
}

/// Reads the text after `+kubebuilder:webhook:`.
pub(crate) fn parse(body: &str) -> Result<Webhook, Vec<Mistake>> {
    let mut mistakes = Vec::new();
    let given = read_arguments(body, &mut mistakes);
    let mut valid: BTreeMap<&str, String> = BTreeMap::new();
    for (key, (offset, value)) in &given {
        match check_value(key, value) {
            Ok(()) => {
                valid.insert(key, value.clone());
            }
            Err(why) => mistakes.push((*offset, why)),
        }
    }
    for key in [
        "name",
        "failurePolicy",
        "sideEffects",
        "groups",
        "versions",
        "resources",
        "verbs",
        "admissionReviewVersions",
    ] {
        if !given.contains_key(key) {
            mistakes.push((0, format!("`+kubebuilder:webhook` needs `{key}=`")));
        }
    }
    let client = client_config(&valid, &given, &mut mistakes);
    let mutating = valid.get("mutating").is_some_and(|v| v == "true");
    if !mutating && let Some((at, _)) = given.get("reinvocationPolicy") {
        mistakes.push((*at, "`reinvocationPolicy` is for mutating webhooks only; validating webhooks are not reinvoked".to_owned()));
    }
    let (Some(client), true) = (client, mistakes.is_empty()) else {
        return Err(mistakes);
    };
    let text = |k: &str| valid.get(k).cloned().unwrap_or_default();
    let canonical = |key: &str, allowed: &[&'static str]| {
        valid
            .get(key)
            .map(|v| one_of(key, v, allowed).map_or_else(|_| v.clone(), str::to_owned))
    };
    Ok(Webhook {
        mutating,
        name: text("name"),
        failure_policy: canonical("failurePolicy", &["Fail", "Ignore"]).unwrap_or_default(),
        match_policy: canonical("matchPolicy", &["Exact", "Equivalent"]),
        side_effects: canonical("sideEffects", &["None", "NoneOnDryRun"]).unwrap_or_default(),
        timeout_seconds: valid.get("timeoutSeconds").and_then(|t| t.parse().ok()),
        groups: (if text("groups").is_empty() {
            vec![String::new()]
        } else {
            list(&text("groups"))
        })
        .into_iter()
        .map(|g| if g == "core" { String::new() } else { g })
        .collect(),
        versions: list(&text("versions")),
        resources: list(&text("resources")),
        operations: list(&text("verbs"))
            .iter()
            .map(|v| v.to_ascii_uppercase())
            .collect(),
        client,
        admission_review_versions: list(&text("admissionReviewVersions")),
        reinvocation_policy: canonical("reinvocationPolicy", &["Never", "IfNeeded"]),
    })
}

/// Reads the text after `+kubebuilder:webhookconfiguration:`: (mutating, name).
pub(crate) fn parse_configuration(body: &str) -> Result<(bool, String), Vec<Mistake>> {
    let mut mistakes = Vec::new();
    let (mut mutating, mut name) = (None, None);
    for (offset, key, value) in arguments(body) {
        match key.as_str() {
            "mutating" if value == "true" || value == "false" => mutating = Some(value == "true"),
            "mutating" => {
                mistakes.push((offset, format!("`mutating={value}` is `true` or `false`")))
            }
            "name" if crate::naming::is_dns_subdomain(&value) => name = Some(value),
            "name" => mistakes.push((
                offset,
                format!("`name={value}` is not a valid object name (a lowercase DNS subdomain)"),
            )),
            _ => mistakes.push((
                offset,
                format!(
                    "unknown key `{key}` in `+kubebuilder:webhookconfiguration`{}",
                    did_you_mean(&key, ["mutating", "name"])
                ),
            )),
        }
    }
    let given = |key: &str| arguments(body).iter().any(|(_, k, _)| k == key);
    match (mutating, name, mistakes.is_empty()) {
        (Some(m), Some(n), true) => Ok((m, n)),
        (m, n, _) => {
            if m.is_none() && !given("mutating") {
                mistakes.push((
                    0,
                    "`+kubebuilder:webhookconfiguration` needs `mutating=`".to_owned(),
                ));
            }
            if n.is_none() {
                mistakes.push((
                    0,
                    "`+kubebuilder:webhookconfiguration` needs `name=`".to_owned(),
                ));
            }
            Err(mistakes)
        }
    }
}

/// The webhook markers of `sources` (read with [`crate::source::load`]), or
/// `file:line:col: error: ...` lines.
pub fn collect(sources: &[SourceFile]) -> Result<Webhooks, Vec<String>> {
    let mut out = Webhooks::default();
    let mut errors = Vec::new();
    for source in sources {
        for (n, line) in source.text.lines().enumerate() {
            if !line.trim_start().starts_with("//") {
                continue;
            }
            for (marker, is_config) in [(WEBHOOK, false), (CONFIGURATION, true)] {
                let Some(at) = line.find(marker) else {
                    continue;
                };
                let start = at + marker.len();
                let body = line[start..].trim_end();
                // Columns count characters, as `generate`'s do.
                let here = |offset: usize, msg: &str| {
                    let col = line[..start + offset.min(body.len())].chars().count() + 1;
                    format!("{}:{}:{col}: error: {msg}", source.path.display(), n + 1)
                };
                if is_config {
                    match parse_configuration(body) {
                        Ok((mutating, name)) => {
                            if let Some(first) = out.names.insert(mutating, name.clone()) {
                                let kind = if mutating { "mutating" } else { "validating" };
                                errors.push(here(0, &format!("a second {kind} webhook configuration name, `{name}` (the first is `{first}`); one configuration of each kind holds every webhook")));
                            }
                        }
                        Err(m) => errors.extend(m.iter().map(|(o, why)| here(*o, why))),
                    }
                } else {
                    match parse(body) {
                        Ok(w) => out.webhooks.push(w),
                        Err(m) => errors.extend(m.iter().map(|(o, why)| here(*o, why))),
                    }
                }
            }
        }
    }
    // Sorted by name, stable, as controller-gen sorts them.
    out.webhooks.sort_by(|a, b| a.name.cmp(&b.name));
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn webhook_json(w: &Webhook) -> Value {
    let client = match &w.client {
        ClientConfig::Service {
            name,
            namespace,
            path,
            port,
        } => {
            let mut service = json!({"name": name, "namespace": namespace, "path": path});
            if let Some(port) = port {
                service["port"] = json!(port);
            }
            json!({ "service": service })
        }
        ClientConfig::Url(url) => json!({ "url": url }),
    };
    let mut out = Map::new();
    out.insert(
        "admissionReviewVersions".into(),
        json!(w.admission_review_versions),
    );
    out.insert("clientConfig".into(), client);
    out.insert("failurePolicy".into(), json!(w.failure_policy));
    if let Some(m) = &w.match_policy {
        out.insert("matchPolicy".into(), json!(m));
    }
    out.insert("name".into(), json!(w.name));
    if let Some(r) = &w.reinvocation_policy {
        out.insert("reinvocationPolicy".into(), json!(r));
    }
    out.insert(
        "rules".into(),
        json!([{
            "apiGroups": w.groups,
            "apiVersions": w.versions,
            "operations": w.operations,
            "resources": w.resources,
        }]),
    );
    out.insert("sideEffects".into(), json!(w.side_effects));
    if let Some(t) = w.timeout_seconds {
        out.insert("timeoutSeconds".into(), json!(t));
    }
    Value::Object(out)
}

/// The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of `webhooks` (each
/// only when it has webhooks), with cert-manager's `inject-ca-from` annotation when
/// `certificate` (`<namespace>/<certificate>`) is given.
pub fn configurations(webhooks: &Webhooks, certificate: Option<&str>) -> Vec<Value> {
    let mut out = Vec::new();
    for (mutating, kind, default_name) in [
        (
            true,
            "MutatingWebhookConfiguration",
            "mutating-webhook-configuration",
        ),
        (
            false,
            "ValidatingWebhookConfiguration",
            "validating-webhook-configuration",
        ),
    ] {
        let hooks: Vec<Value> = webhooks
            .webhooks
            .iter()
            .filter(|w| w.mutating == mutating)
            .map(webhook_json)
            .collect();
        if hooks.is_empty() {
            continue;
        }
        let name = webhooks
            .names
            .get(&mutating)
            .map_or(default_name, String::as_str);
        let mut metadata = json!({ "name": name });
        if let Some(certificate) = certificate {
            metadata["annotations"] = json!({ "cert-manager.io/inject-ca-from": certificate });
        }
        out.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": metadata,
            "webhooks": hooks,
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "webhookVersions=v1,verbs=create;update,path=/validate-testdata-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=testdata.kubebuilder.io,resources=cronjobs,versions=v1,name=validation.cronjob.testdata.kubebuilder.io,sideEffects=None,timeoutSeconds=10,admissionReviewVersions=v1;v1beta1";

    #[test]
    fn controller_gens_own_example_reads_with_its_defaults() {
        let w = parse(VALID).unwrap();
        assert!(!w.mutating);
        assert_eq!(w.failure_policy, "Fail");
        assert_eq!(w.operations, ["CREATE", "UPDATE"]);
        assert_eq!(w.admission_review_versions, ["v1", "v1beta1"]);
        assert_eq!(
            w.client,
            ClientConfig::Service {
                name: "webhook-service".into(),
                namespace: "system".into(),
                path: "/validate-testdata-kubebuilder-io-v1-cronjob".into(),
                port: None
            }
        );
    }

    #[test]
    fn quoted_urls_braced_lists_and_core_read_as_controller_gen_reads_them() {
        let w = parse(r#"mutating=true,failurePolicy=Ignore,sideEffects=NoneOnDryRun,groups={core,apps},resources=pods,verbs=*,versions=v1,name=m.pods.example.com,url="https://127.0.0.1:9443/mutate",admissionReviewVersions=v1,reinvocationPolicy=ifneeded"#).unwrap();
        assert_eq!(w.groups, ["", "apps"]);
        let core = parse(&VALID.replace("groups=testdata.kubebuilder.io", "groups=\"\"")).unwrap();
        assert_eq!(
            core.groups,
            [""],
            "kubebuilder's spelling of the core group"
        );
        let braced =
            parse(&VALID.replace("groups=testdata.kubebuilder.io", "groups={\"\",apps}")).unwrap();
        assert_eq!(braced.groups, ["", "apps"]);
        assert_eq!(w.operations, ["*"]);
        assert_eq!(
            w.client,
            ClientConfig::Url("https://127.0.0.1:9443/mutate".into())
        );
        assert_eq!(w.reinvocation_policy.as_deref(), Some("IfNeeded"));
    }

    #[test]
    fn what_the_api_server_refuses_is_a_mistake_at_its_key() {
        let with = |extra: &str| parse(&format!("{VALID},{extra}")).unwrap_err();
        let path_and_url = with("url=https://x.example.com/v");
        assert!(path_and_url[0].1.contains("exclusive"), "{path_and_url:?}");
        let body = VALID.replace("sideEffects=None", "sideEffects=Some");
        let at = body.find("sideEffects").unwrap();
        assert_eq!(parse(&body).unwrap_err()[0].0, at);
        let typo = parse(&VALID.replace("failurePolicy=fail", "failurPolicy=fail")).unwrap_err();
        assert!(
            typo.iter()
                .any(|(_, m)| m.contains("did you mean `failurePolicy`")),
            "{typo:?}"
        );
        let timeout = parse(&VALID.replace("timeoutSeconds=10", "timeoutSeconds=31")).unwrap_err();
        assert!(timeout[0].1.contains("between 1 and 30"));
        let short = parse(&VALID.replace(
            "name=validation.cronjob.testdata.kubebuilder.io",
            "name=cronjob",
        ))
        .unwrap_err();
        assert!(short[0].1.contains("at least three segments"));
        let verb = parse(&VALID.replace("verbs=create;update", "verbs=create;get")).unwrap_err();
        assert!(verb[0].1.contains("verb `get`"));
        let missing = parse("mutating=true").unwrap_err();
        assert!(
            missing
                .iter()
                .any(|(_, m)| m.contains("needs `admissionReviewVersions=`"))
        );
    }
}
