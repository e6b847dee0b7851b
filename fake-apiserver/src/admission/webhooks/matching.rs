//! Which webhooks a request meets: the rules of each webhook of the configurations
//! (operations, groups, versions, resources and subresources, scope), with
//! `matchPolicy: Equivalent` another served version of the resource, and the namespace and
//! object selectors.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::ApiError;
use crate::resource::ResourceType;
use crate::rules::json::strings;
use crate::store::{Shared, State, namespace_key};
use crate::webhook_client::Endpoint;

/// One webhook whose rules match a request.
pub(crate) struct Hook {
    pub name: String,
    pub endpoint: Endpoint,
    pub fail: bool,
    pub timeout: Duration,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke: bool,
    /// With `matchPolicy: Equivalent`, the other version of the resource its rules name,
    /// in which it sees the request (as kube-apiserver converts it).
    pub version: Option<Arc<ResourceType>>,
}

/// What a request is, as admission sees it.
#[derive(Clone, Copy)]
pub(crate) struct Attributes<'a> {
    pub shared: &'a Shared,
    pub rt: &'a ResourceType,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    pub subresource: Option<&'a str>,
    /// `CREATE`, `UPDATE`, `DELETE`.
    pub operation: &'static str,
    pub dry_run: bool,
}

/// Whether any webhook configuration exists (requests skip admission otherwise).
pub(crate) fn configured(state: &State) -> bool {
    [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    ]
    .iter()
    .any(|plural| {
        !state
            .store
            .keys(&("admissionregistration.k8s.io".into(), (*plural).into()))
            .is_empty()
    })
}

fn rule_matches(rule: &Value, a: &Attributes<'_>) -> bool {
    let any = |list: &[&str], v: &str| list.iter().any(|x| *x == "*" || *x == v);
    // kube-apiserver's rule: `res/sub`, where `*` matches anything and no `/sub` means no
    // subresource (so `pods/*` matches `pods` too).
    let sub = a.subresource.unwrap_or("");
    let resources_match = strings(rule.get("resources")).iter().any(|r| {
        let (res, want) = r.split_once('/').unwrap_or((r, ""));
        (res == "*" || res == a.rt.plural) && (want == "*" || want == sub)
    });
    let scope_matches = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Cluster" => a.namespace.is_none(),
        "Namespaced" => a.namespace.is_some(),
        _ => true,
    };
    any(&strings(rule.get("operations")), a.operation)
        && any(&strings(rule.get("apiGroups")), &a.rt.group)
        && any(&strings(rule.get("apiVersions")), &a.rt.version)
        && resources_match
        && scope_matches
}

fn selects(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    let empty = json!({});
    match selector {
        None => true,
        Some(s) => crate::rules::kinds::pod::selector_matches(s, labels.unwrap_or(&empty)),
    }
}

/// The webhooks of one kind of configuration that match the request, in kube-apiserver's
/// order; `objects` are the object and the old object (either may be absent).
pub(crate) fn matching(
    state: &State,
    shared: &Shared,
    mutating: bool,
    a: &Attributes<'_>,
    objects: [Option<&Value>; 2],
) -> Result<Vec<Hook>, ApiError> {
    // Configurations never pass through webhooks themselves, so a broken webhook can
    // always be removed.
    if a.rt.group == "admissionregistration.k8s.io" {
        return Ok(Vec::new());
    }
    let plural = if mutating {
        "mutatingwebhookconfigurations"
    } else {
        "validatingwebhookconfigurations"
    };
    let mut keys = state
        .store
        .keys(&("admissionregistration.k8s.io".into(), plural.into()));
    keys.sort();
    let namespace_labels = a.namespace.and_then(|ns| {
        state
            .store
            .get(&namespace_key(ns))
            .and_then(|n| n.pointer("/metadata/labels").cloned())
    });
    let mut out = Vec::new();
    for key in keys {
        let Some(config) = state.store.get(&key) else {
            continue;
        };
        for hook in config["webhooks"].as_array().into_iter().flatten() {
            let rules = hook["rules"].as_array().into_iter().flatten();
            let version = if rules.clone().any(|r| rule_matches(r, a)) {
                None
            } else if hook["matchPolicy"].as_str() != Some("Exact")
                && let Some(other) = equivalent(state, a, rules)
            {
                Some(other)
            } else {
                continue;
            };
            // The namespace selector applies to namespaced objects and to namespaces.
            let ns_labels = if a.rt.is("", "namespaces") {
                objects
                    .iter()
                    .flatten()
                    .next()
                    .and_then(|o| o.pointer("/metadata/labels"))
                    .cloned()
            } else {
                namespace_labels.clone()
            };
            if (a.namespace.is_some() || a.rt.is("", "namespaces"))
                && !selects(hook.get("namespaceSelector"), ns_labels.as_ref())
            {
                continue;
            }
            let selector = hook.get("objectSelector");
            let everything = selector.is_none_or(|s| {
                s.get("matchLabels")
                    .and_then(Value::as_object)
                    .is_none_or(|m| m.is_empty())
                    && s.get("matchExpressions")
                        .and_then(Value::as_array)
                        .is_none_or(|e| e.is_empty())
            });
            let object_selected = everything
                || objects
                    .iter()
                    .flatten()
                    .any(|o| selects(selector, o.pointer("/metadata/labels")));
            if !object_selected {
                continue;
            }
            let mut found = hook_of(hook, shared)?;
            found.version = version;
            out.push(found);
        }
    }
    Ok(out)
}

fn hook_of(hook: &Value, shared: &Shared) -> Result<Hook, ApiError> {
    Ok(Hook {
        name: hook["name"].as_str().unwrap_or("").to_owned(),
        endpoint: Endpoint::of(&hook["clientConfig"], &shared.config.webhook_services),
        fail: hook["failurePolicy"].as_str() != Some("Ignore"),
        timeout: Duration::from_secs(hook["timeoutSeconds"].as_u64().unwrap_or(10)),
        reinvoke: hook["reinvocationPolicy"].as_str() == Some("IfNeeded"),
        version: None,
    })
}

/// `matchPolicy: Equivalent`: another served version of the request's resource that one of
/// `rules` matches.
fn equivalent<'v>(
    state: &State,
    a: &Attributes<'_>,
    rules: impl Iterator<Item = &'v Value> + Clone,
) -> Option<Arc<ResourceType>> {
    state
        .types
        .iter()
        .filter(|t| t.group == a.rt.group && t.plural == a.rt.plural && t.version != a.rt.version)
        .find(|t| {
            let other = Attributes { rt: t, ..*a };
            rules.clone().any(|r| rule_matches(r, &other))
        })
        .cloned()
}
