//! What a client acting as a user carries into the server with each request ([`Acting`]):
//! the user it is authenticated as, and the log its requests are recorded in
//! ([`AccessLog`]), and the least-privilege report made from it ([`AccessReport`]): the
//! grants its requests used, the grants they never used, and the requests refused.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::rbac::{self, Policy, PolicyRule, Source};
use super::types::{Attributes, User, denial};

/// The identity a handle of the server sends its requests with, and where they are
/// recorded. The HTTP layer finds it in a request's extensions.
#[derive(Debug)]
pub struct Acting {
    /// The authenticated user.
    pub user: User,
    /// Every request made as the user, before authorization.
    pub log: Arc<AccessLog>,
}

/// The distinct requests a client made, each with how often, in the order first made
/// (memory grows with the distinct requests, not with their number).
#[derive(Debug, Default)]
pub struct AccessLog(Mutex<Log>);

#[derive(Debug, Default)]
struct Log {
    order: Vec<(Attributes, u64)>,
    index: HashMap<Attributes, usize>,
}

impl AccessLog {
    /// Records one request.
    pub fn record(&self, a: &Attributes) {
        let mut log = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match log.index.get(a).copied() {
            Some(i) => log.order[i].1 += 1,
            None => {
                let at = log.order.len();
                log.order.push((a.clone(), 1));
                log.index.insert(a.clone(), at);
            }
        }
    }

    /// The requests recorded, each with its count, in the order first made.
    pub fn entries(&self) -> Vec<(Attributes, u64)> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .order
            .clone()
    }

    /// Forgets what was recorded.
    pub fn clear(&self) {
        let mut log = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        log.order.clear();
        log.index.clear();
    }
}

/// One grant of a rule: a verb on a resource of a group (or on a path), from a binding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    /// The verb (`*` when the rule says so).
    pub verb: String,
    /// The API group (`""`: the core group); `""` for a path.
    pub api_group: String,
    /// The resource (`pods/status`), or the path (`/healthz`).
    pub resource: String,
    /// The names it is limited to, if any.
    pub resource_names: Vec<String>,
    /// The binding and role that grant it, as the real server names them in a reason.
    pub source: String,
}

impl std::fmt::Display for Grant {
    /// `list deployments.apps (by ClusterRoleBinding "x" of ClusterRole "x" to ...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.api_group.as_str() {
            "" => self.resource.clone(),
            group => format!("{}.{group}", self.resource),
        };
        write!(f, "{} {what}", self.verb)?;
        if !self.resource_names.is_empty() {
            write!(f, " {:?}", self.resource_names)?;
        }
        write!(f, " ({})", self.source)
    }
}

/// What a user's requests used of the rules granted to it: the least-privilege check of a
/// test. The server's default bindings (discovery, self reviews) are left out: they are
/// not the user's to trim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessReport {
    /// The user.
    pub user: String,
    /// The grants some request used, each with how many requests used it.
    pub used: Vec<(Grant, u64)>,
    /// The grants no request used: candidates for removal.
    pub unused: Vec<Grant>,
    /// The requests that were refused (403), each with how often.
    pub denied: Vec<(Attributes, u64)>,
}

impl AccessReport {
    /// The report for `user` over the requests of `log`, against the RBAC objects of
    /// `policy` as they are now.
    pub fn new(policy: &dyn Policy, user: &User, log: &AccessLog) -> Self {
        let entries = log.entries();
        let mut namespaces: Vec<&str> = entries.iter().map(|(a, _)| a.namespace.as_str()).collect();
        namespaces.push("");
        namespaces.sort_unstable();
        namespaces.dedup();
        let mut grants: BTreeMap<Grant, u64> = BTreeMap::new();
        for ns in namespaces {
            for (source, rule) in rbac::rules_for(policy, user, ns).0 {
                if !source.default {
                    for (grant, _) in expand(&source, &rule) {
                        grants.entry(grant).or_insert(0);
                    }
                }
            }
        }
        let mut denied = Vec::new();
        for (a, count) in &entries {
            if user.privileged() {
                continue;
            }
            let (rules, _) = rbac::rules_for(policy, user, &a.namespace);
            let Some((source, rule)) = rules.iter().find(|(_, r)| r.allows(a)) else {
                denied.push((a.clone(), *count));
                continue;
            };
            for (grant, single) in expand(source, rule) {
                if single.allows(a)
                    && let Some(n) = grants.get_mut(&grant)
                {
                    *n += count;
                }
            }
        }
        let (used, unused): (Vec<_>, Vec<_>) = grants.into_iter().partition(|(_, n)| *n > 0);
        Self {
            user: user.name.clone(),
            used,
            unused: unused.into_iter().map(|(g, _)| g).collect(),
            denied,
        }
    }
}

impl std::fmt::Display for AccessReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "access of {}:", self.user)?;
        for (grant, n) in &self.used {
            writeln!(f, "  used ({n}x): {grant}")?;
        }
        for grant in &self.unused {
            writeln!(f, "  granted, never used: {grant}")?;
        }
        for (a, n) in &self.denied {
            writeln!(
                f,
                "  denied ({n}x): {}",
                denial(&User::named(&self.user), a)
            )?;
        }
        Ok(())
    }
}

/// A rule as single grants (one verb, group and resource, or one verb and path), each with
/// the one-grant rule that tests it.
fn expand(source: &Source, rule: &PolicyRule) -> Vec<(Grant, PolicyRule)> {
    let one = |v: &str| vec![v.to_owned()];
    let mut out = Vec::new();
    for verb in &rule.verbs {
        for group in &rule.api_groups {
            for resource in &rule.resources {
                let grant = Grant {
                    verb: verb.clone(),
                    api_group: group.clone(),
                    resource: resource.clone(),
                    resource_names: rule.resource_names.clone(),
                    source: source.to_string(),
                };
                let single = PolicyRule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    resource_names: rule.resource_names.clone(),
                    non_resource_urls: Vec::new(),
                };
                out.push((grant, single));
            }
        }
        for url in &rule.non_resource_urls {
            let grant = Grant {
                verb: verb.clone(),
                api_group: String::new(),
                resource: url.clone(),
                resource_names: Vec::new(),
                source: source.to_string(),
            };
            let single = PolicyRule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..PolicyRule::default()
            };
            out.push((grant, single));
        }
    }
    out
}
