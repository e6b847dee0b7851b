//! The RBAC authorizer: the rules a user has in a namespace (from every ClusterRoleBinding
//! whose subjects name it, then every RoleBinding of the namespace), and whether one of
//! them allows a request, as kube-apiserver's `RBACAuthorizer` and its rule resolver decide:
//! verbs, API groups, resources (`pods/status`, `*/scale`), resource names and
//! non-resource URLs (`/apis/*`), each with `*`.
//!
//! The objects come from a [`Policy`]: the server's store, or (for a report on a cluster)
//! objects read through the API.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::{Attributes, Decision, SERVICE_ACCOUNT_PREFIX, User, go_quote};
use crate::store::State;

/// The API group of the RBAC kinds.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// Where RBAC objects are read from.
pub trait Policy {
    /// Every object of `resource` (`roles`, `rolebindings`, `clusterroles`,
    /// `clusterrolebindings`), in `namespace` when given, sorted by namespace and name.
    fn objects(&self, resource: &str, namespace: Option<&str>) -> Vec<Value>;

    /// One object of `resource`, by namespace (`""` for cluster-scoped) and name.
    fn object(&self, resource: &str, namespace: &str, name: &str) -> Option<Value>;
}

impl Policy for State {
    fn objects(&self, resource: &str, namespace: Option<&str>) -> Vec<Value> {
        let key = (GROUP.to_owned(), resource.to_owned());
        self.store
            .list(&key, namespace, None)
            .filter_map(|(_, stored)| stored.value())
            .collect()
    }

    fn object(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = (
            GROUP.to_owned(),
            resource.to_owned(),
            namespace.to_owned(),
            name.to_owned(),
        );
        self.store.get(&key)
    }
}

/// RBAC objects held in memory (read from a cluster), by their `kind`.
#[derive(Debug, Clone, Default)]
pub struct Objects(pub Vec<Value>);

impl Objects {
    fn of(&self, resource: &str) -> impl Iterator<Item = &Value> {
        let kind = match resource {
            "roles" => "Role",
            "rolebindings" => "RoleBinding",
            "clusterroles" => "ClusterRole",
            _ => "ClusterRoleBinding",
        };
        self.0.iter().filter(move |o| o["kind"] == kind)
    }
}

impl Policy for Objects {
    fn objects(&self, resource: &str, namespace: Option<&str>) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .of(resource)
            .filter(|o| namespace.is_none_or(|ns| namespace_of(o) == ns))
            .cloned()
            .collect();
        out.sort_by(|a, b| (namespace_of(a), name_of(a)).cmp(&(namespace_of(b), name_of(b))));
        out
    }

    fn object(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        self.of(resource)
            .find(|o| namespace_of(o) == namespace && name_of(o) == name)
            .cloned()
    }
}

fn namespace_of(o: &Value) -> &str {
    o.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn name_of(o: &Value) -> &str {
    o.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// One rule of a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    /// `get`, `list`, ..., or `*`.
    pub verbs: Vec<String>,
    /// API groups (`""` is the core group), or `*`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*/scale`), or `*`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Object names the rule is limited to; none means every name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Paths (`/healthz`, `/apis/*`), or `*`.
    #[serde(rename = "nonResourceURLs", skip_serializing_if = "Vec::is_empty")]
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Whether the rule allows the request `a`, as kube-apiserver's `RuleAllows` decides.
    pub fn allows(&self, a: &Attributes) -> bool {
        let verb = any(&self.verbs, |v| v == a.verb);
        if a.resource_request {
            verb && any(&self.api_groups, |g| g == a.api_group)
                && self.resource_matches(&a.resource_and_subresource(), &a.subresource)
                && (self.resource_names.is_empty() || self.resource_names.contains(&a.name))
        } else {
            verb && self.non_resource_urls.iter().any(|url| {
                url == "*"
                    || *url == a.path
                    || url
                        .strip_suffix('*')
                        .is_some_and(|prefix| a.path.starts_with(prefix))
            })
        }
    }

    /// `pods/status` matches `pods/status`, `*/status` and `*`.
    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
        })
    }
}

/// Whether `values` holds `*` or a value `matches` accepts.
fn any(values: &[String], matches: impl Fn(&str) -> bool) -> bool {
    values.iter().any(|v| v == "*" || matches(v))
}

/// A binding's reference to its role.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct RoleRef {
    kind: String,
    name: String,
}

/// One subject of a binding.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// A ServiceAccount's namespace (the binding's when empty).
    pub namespace: String,
}

/// A RoleBinding or ClusterRoleBinding, as the authorizer reads it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Binding {
    metadata: Meta,
    role_ref: RoleRef,
    subjects: Vec<Subject>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Meta {
    name: String,
    namespace: String,
    labels: std::collections::BTreeMap<String, String>,
}

/// Where a rule comes from: the binding, its role, and the subject that names the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// `ClusterRoleBinding` or `RoleBinding`.
    pub binding_kind: &'static str,
    /// The binding's name.
    pub binding: String,
    /// The binding's namespace (`""` for a ClusterRoleBinding).
    pub namespace: String,
    /// `Role` or `ClusterRole`.
    pub role_kind: String,
    /// The role's name.
    pub role: String,
    /// The subject that named the user, as the real server describes it
    /// (`ServiceAccount "ctl/ns"`, `Group "system:authenticated"`).
    pub subject: String,
    /// Whether the subject is a group (rather than the user or ServiceAccount itself).
    pub by_group: bool,
    /// Whether the binding is one of the server's defaults (`kubernetes.io/bootstrapping:
    /// rbac-defaults`).
    pub default: bool,
}

impl std::fmt::Display for Source {
    /// `RoleBinding "ctl-cm/rb1" of Role "cm-reader" to ServiceAccount "ctl/rb1"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let binding = if self.namespace.is_empty() {
            self.binding.clone()
        } else {
            format!("{}/{}", self.binding, self.namespace)
        };
        write!(
            f,
            "{} {} of {} {} to {}",
            self.binding_kind,
            go_quote(&binding),
            self.role_kind,
            go_quote(&self.role),
            self.subject
        )
    }
}

/// The rules `user` has in `namespace` (`""`: cluster scope, ClusterRoleBindings only), each
/// with its source, in the order the real server visits them; and the errors met reading
/// them (a binding whose role does not exist).
pub fn rules_for(
    policy: &dyn Policy,
    user: &User,
    namespace: &str,
) -> (Vec<(Source, PolicyRule)>, Vec<String>) {
    rules_named(policy, user, namespace, Naming::Lister)
}

/// The rules `user` holds in `namespace`, as escalation prevention reads them: the same
/// rules, with a missing role named as the registry names it (`roles.rbac...`, where the
/// authorizer's cache says `role.rbac...`).
pub fn rules_for_writing(
    policy: &dyn Policy,
    user: &User,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let (rules, errors) = rules_named(policy, user, namespace, Naming::Registry);
    (rules.into_iter().map(|(_, r)| r).collect(), errors)
}

/// How a missing role is named: the authorizer's cache says `role.rbac...`, the registry
/// `roles.rbac...`.
#[derive(Clone, Copy)]
enum Naming {
    Lister,
    Registry,
}

fn rules_named(
    policy: &dyn Policy,
    user: &User,
    namespace: &str,
    naming: Naming,
) -> (Vec<(Source, PolicyRule)>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let scopes: [(&'static str, Option<&str>); 2] = [
        ("clusterrolebindings", None),
        ("rolebindings", Some(namespace)),
    ];
    for (resource, scope) in scopes {
        if resource == "rolebindings" && namespace.is_empty() {
            continue;
        }
        for object in policy.objects(resource, scope) {
            let Ok(binding) = serde_json::from_value::<Binding>(object) else {
                continue;
            };
            let Some(subject) = binding
                .subjects
                .iter()
                .find(|s| applies(user, s, &binding.metadata.namespace))
            else {
                continue;
            };
            let role_rules = match role_rules(policy, &binding, naming) {
                Ok(r) => r,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let source = Source {
                binding_kind: if scope.is_some() {
                    "RoleBinding"
                } else {
                    "ClusterRoleBinding"
                },
                binding: binding.metadata.name.clone(),
                namespace: binding.metadata.namespace.clone(),
                role_kind: binding.role_ref.kind.clone(),
                role: binding.role_ref.name.clone(),
                subject: describe(subject, &binding.metadata.namespace),
                by_group: subject.kind == "Group",
                default: binding.metadata.labels.get("kubernetes.io/bootstrapping")
                    == Some(&"rbac-defaults".to_owned()),
            };
            rules.extend(role_rules.into_iter().map(|r| (source.clone(), r)));
        }
    }
    (rules, errors)
}

/// RBAC's decision: allowed by the first rule that allows the request, naming its source;
/// otherwise no opinion, with the errors met as the reason.
pub fn authorize(policy: &dyn Policy, user: &User, a: &Attributes) -> Decision {
    let (rules, errors) = rules_for(policy, user, &a.namespace);
    if let Some((source, _)) = rules.iter().find(|(_, rule)| rule.allows(a)) {
        return Decision {
            allowed: true,
            reason: format!("RBAC: allowed by {source}"),
        };
    }
    Decision {
        allowed: false,
        reason: if errors.is_empty() {
            String::new()
        } else {
            format!("RBAC: {}", aggregate(&errors))
        },
    }
}

/// Several errors as Go's `utilerrors.Aggregate` prints them: one as it is, more (each
/// once) in brackets.
pub fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for e in errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The rules of the role a binding refers to, or the lister's error.
fn role_rules(
    policy: &dyn Policy,
    binding: &Binding,
    naming: Naming,
) -> Result<Vec<PolicyRule>, String> {
    let name = &binding.role_ref.name;
    let (resource, namespace, singular) = match binding.role_ref.kind.as_str() {
        "Role" => ("roles", binding.metadata.namespace.as_str(), "role"),
        "ClusterRole" => ("clusterroles", "", "clusterrole"),
        other => return Err(format!("unsupported role reference kind: \"{other}\"")),
    };
    let shown = match naming {
        Naming::Lister => singular,
        Naming::Registry => resource,
    };
    let role = policy
        .object(resource, namespace, name)
        .ok_or_else(|| format!("{shown}.{GROUP} \"{name}\" not found"))?;
    Ok(effective_rules(policy, &role))
}

/// The rules a role grants: its own, or for a ClusterRole with an `aggregationRule`, the
/// rules of the ClusterRoles its selectors select, as kube-controller-manager's
/// `clusterrole-aggregation` controller writes them into it (computed when read, so a test
/// need not wait for a controller).
pub fn effective_rules(policy: &dyn Policy, role: &Value) -> Vec<PolicyRule> {
    let mut seen = vec![name_of(role).to_owned()];
    aggregate_into(policy, role, &mut seen)
}

fn aggregate_into(policy: &dyn Policy, role: &Value, seen: &mut Vec<String>) -> Vec<PolicyRule> {
    let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    else {
        return rules_of(role);
    };
    let empty = Value::Object(serde_json::Map::new());
    let mut rules: Vec<PolicyRule> = Vec::new();
    // The controller visits the selected roles by name and keeps each rule once.
    for other in policy.objects("clusterroles", None) {
        let labels = other.pointer("/metadata/labels").unwrap_or(&empty);
        let selected = selectors
            .iter()
            .any(|s| crate::rules::kinds::pod::selector_matches(s, labels));
        let name = name_of(&other).to_owned();
        if !selected || seen.contains(&name) {
            continue;
        }
        seen.push(name);
        for rule in aggregate_into(policy, &other, seen) {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    rules
}

/// The rules of a Role or ClusterRole.
pub fn rules_of(role: &Value) -> Vec<PolicyRule> {
    role.get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| serde_json::from_value(r.clone()).ok())
        .collect()
}

/// Whether a binding's `subject` names `user` (a ServiceAccount without a namespace is the
/// binding's namespace's).
fn applies(user: &User, subject: &Subject, binding_namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.groups.contains(&subject.name),
        "ServiceAccount" => {
            let ns = if subject.namespace.is_empty() {
                binding_namespace
            } else {
                &subject.namespace
            };
            !ns.is_empty()
                && user.name == format!("{}{ns}:{}", SERVICE_ACCOUNT_PREFIX, subject.name)
        }
        _ => false,
    }
}

/// A subject as the real server names it in a reason: `ServiceAccount "name/ns"`,
/// `Group "g"`, `User "u"`.
fn describe(subject: &Subject, binding_namespace: &str) -> String {
    match subject.kind.as_str() {
        "ServiceAccount" => {
            let ns = if subject.namespace.is_empty() {
                binding_namespace
            } else {
                &subject.namespace
            };
            format!(
                "ServiceAccount {}",
                go_quote(&format!("{}/{ns}", subject.name))
            )
        }
        kind => format!("{kind} {}", go_quote(&subject.name)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(v: Value) -> PolicyRule {
        serde_json::from_value(v).unwrap()
    }

    fn request(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            namespace: "ns".into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn rules_match_as_kube_apiserver_matches_them() {
        let r = rule(json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}));
        assert!(r.allows(&request("get", "", "pods", "", "x")));
        assert!(!r.allows(&request("get", "", "pods", "status", "x")));
        assert!(!r.allows(&request("list", "", "pods", "", "")));
        assert!(!r.allows(&request("get", "apps", "pods", "", "x")));
        let r = rule(json!({"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["*"]}));
        assert!(r.allows(&request("update", "apps", "deployments", "scale", "x")));
        assert!(!r.allows(&request("update", "apps", "deployments", "", "x")));
        let r = rule(
            json!({"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get", "list"]}),
        );
        assert!(r.allows(&request("get", "", "configmaps", "", "a")));
        assert!(!r.allows(&request("get", "", "configmaps", "", "b")));
        assert!(!r.allows(&request("list", "", "configmaps", "", "")));
        let r = rule(json!({"nonResourceURLs": ["/apis/*", "/version"], "verbs": ["get"]}));
        let path = |p: &str| Attributes {
            verb: "get".into(),
            path: p.into(),
            ..Attributes::default()
        };
        assert!(r.allows(&path("/apis/apps/v1")));
        assert!(r.allows(&path("/version")));
        assert!(!r.allows(&path("/version/")));
        assert!(!r.allows(&path("/metrics")));
    }

    #[test]
    fn bindings_name_users_groups_and_service_accounts() {
        let objects = Objects(vec![
            json!({"kind": "Role", "metadata": {"name": "r", "namespace": "ns"},
                   "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
            json!({"kind": "RoleBinding", "metadata": {"name": "b", "namespace": "ns"},
                   "roleRef": {"kind": "Role", "name": "r"},
                   "subjects": [{"kind": "ServiceAccount", "name": "ctl"}]}),
            json!({"kind": "RoleBinding", "metadata": {"name": "missing", "namespace": "ns"},
                   "roleRef": {"kind": "Role", "name": "nope"},
                   "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}]}),
        ]);
        let sa = User::service_account("ns", "ctl");
        let list = request("list", "", "configmaps", "", "");
        let d = authorize(&objects, &sa, &list);
        assert_eq!(
            d.reason,
            "RBAC: allowed by RoleBinding \"b/ns\" of Role \"r\" to ServiceAccount \"ctl/ns\""
        );
        let other = User::service_account("ns", "other");
        let d = authorize(&objects, &other, &list);
        assert!(!d.allowed);
        assert_eq!(
            d.reason,
            "RBAC: role.rbac.authorization.k8s.io \"nope\" not found"
        );
    }

    #[test]
    fn errors_aggregate_as_go_prints_them() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
        assert_eq!(aggregate(&["a".into(), "a".into()]), "a");
    }
}
