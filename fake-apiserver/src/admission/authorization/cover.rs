//! Whether one set of RBAC rules covers another, as kube-apiserver's escalation check
//! decides it (component-helpers' `Covers`): each rule to grant is broken down into one verb
//! on one resource (or path) of one group, with at most one name, and each piece must be
//! covered by a rule the user holds. A `*` counts as a wildcard only in the rules held: a
//! rule that grants `*` is covered only by one that holds `*`. The pieces left over are
//! compacted and printed as the real server prints them in its 403.

use super::rbac::PolicyRule;

/// The pieces of `rule`: one API group, resource and verb each (and one name, when it names
/// some), then one path and verb each for its non-resource URLs.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let one = |v: &String| vec![v.clone()];
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let piece = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: one(verb),
                    ..PolicyRule::default()
                };
                if rule.resource_names.is_empty() {
                    out.push(piece);
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            resource_names: one(name),
                            ..piece.clone()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: one(verb),
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], value: &str) -> bool {
    set.iter().any(|s| s == value)
}

fn has_all(set: &[String], values: &[String]) -> bool {
    values.iter().all(|v| has(set, v))
}

/// Whether the resources `owner` holds cover `wanted`: `*`, the same names, or `*/sub` for
/// `x/sub`.
fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

/// Whether a path `owner` holds covers `wanted`: the same, or a prefix ending in `*`.
fn url_covers(owner: &str, wanted: &str) -> bool {
    owner == wanted || (owner.ends_with('*') && wanted.starts_with(owner.trim_end_matches('*')))
}

fn urls_cover(owner: &[String], wanted: &[String]) -> bool {
    wanted
        .iter()
        .all(|w| owner.iter().any(|o| url_covers(o, w)))
}

/// Whether the held rule `owner` covers the piece `wanted` (kube's `ruleCovers`).
pub fn rule_covers(owner: &PolicyRule, wanted: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &wanted.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &wanted.api_groups);
    let resources = resources_cover(&owner.resources, &wanted.resources);
    let urls = urls_cover(&owner.non_resource_urls, &wanted.non_resource_urls);
    let names = if wanted.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &wanted.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// Whether `owner` covers every rule of `wanted`, and the pieces it does not.
pub fn covers(owner: &[PolicyRule], wanted: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let missing: Vec<PolicyRule> = wanted
        .iter()
        .flat_map(breakdown)
        .filter(|piece| !owner.iter().any(|o| rule_covers(o, piece)))
        .collect();
    (missing.is_empty(), missing)
}

/// A simple rule's group, resource and (at most one) name.
type SimpleKey = (String, String, Option<String>);

/// kube's `CompactRules`: pieces of one group and resource (and at most one name) merged
/// into one rule with their verbs in order, keeping duplicates; other rules as they are.
pub fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<(SimpleKey, usize)> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule.clone());
            continue;
        }
        let key = (
            rule.api_groups[0].clone(),
            rule.resources[0].clone(),
            rule.resource_names.first().cloned(),
        );
        match simple.iter().find(|(k, _)| *k == key) {
            Some((_, at)) => out[*at].verbs.extend(rule.verbs.iter().cloned()),
            None => {
                simple.push((key, out.len()));
                out.push(rule.clone());
            }
        }
    }
    out
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn quoted(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| super::go_quote(v)).collect();
    format!("[{}]", items.join(" "))
}

/// kube's `CompactString` of a rule: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`,
/// each part only when it is not empty.
pub fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (label, values) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !values.is_empty() {
            parts.push(format!("{label}:{}", quoted(values)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// The missing pieces as the real server lists them: compacted, printed, each once, sorted
/// by their bytes, one per line.
pub fn describe_missing(missing: &[PolicyRule]) -> String {
    let mut lines: Vec<String> = compact(missing).iter().map(compact_string).collect();
    lines.sort();
    lines.dedup();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(v: serde_json::Value) -> PolicyRule {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_wildcard_is_covered_only_by_a_wildcard() {
        let owner = [rule(
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}),
        )];
        let (ok, _) = covers(
            &owner,
            &[rule(
                json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}),
            )],
        );
        assert!(ok);
        let (ok, missing) = covers(
            &owner,
            &[rule(
                json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}),
            )],
        );
        assert!(!ok);
        assert_eq!(
            describe_missing(&missing),
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"*\"]}"
        );
        let admin = [rule(
            json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
        )];
        assert!(
            covers(
                &admin,
                &[rule(
                    json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]})
                )]
            )
            .0
        );
        // Resources with their subresources, names and paths.
        let owner = [
            rule(json!({"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["update"]})),
            rule(
                json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}),
            ),
            rule(json!({"nonResourceURLs": ["/api/*"], "verbs": ["get"]})),
        ];
        assert!(covers(&owner, &[rule(json!({"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["update"]}))]).0);
        assert!(!covers(&owner, &[rule(json!({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["update"]}))]).0);
        assert!(covers(&owner, &[rule(json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}))]).0);
        assert!(
            !covers(
                &owner,
                &[rule(
                    json!({"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]})
                )]
            )
            .0
        );
        assert!(
            covers(
                &owner,
                &[rule(
                    json!({"nonResourceURLs": ["/api/v1", "/api/"], "verbs": ["get"]})
                )]
            )
            .0
        );
        assert!(
            !covers(
                &owner,
                &[rule(
                    json!({"nonResourceURLs": ["/apis"], "verbs": ["get"]})
                )]
            )
            .0
        );
    }

    #[test]
    fn missing_rules_are_compacted_and_sorted_as_the_real_server_prints_them() {
        let (_, missing) = covers(
            &[],
            &[
                rule(json!({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]})),
                rule(json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]})),
                rule(
                    json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get", "update"]}),
                ),
                rule(json!({"nonResourceURLs": ["/metrics"], "verbs": ["get"]})),
            ],
        );
        assert_eq!(
            describe_missing(&missing),
            "{APIGroups:[\"\"], Resources:[\"configmaps\"], ResourceNames:[\"a\"], Verbs:[\"get\" \"update\"]}\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}\n\
             {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"*\"]}\n\
             {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
        );
    }
}
