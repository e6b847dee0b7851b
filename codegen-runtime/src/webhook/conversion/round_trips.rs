//! Round trips over drawn objects: objects of every version of a kind, drawn from its CRD's
//! schemas ([`super::draw`]), converted to every other version and back, each required to
//! come back unchanged; the smallest failing object found is the one reported.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use super::Conversion;
use super::draw::{self, Rng, Version};

/// The environment variable that, when set to a number, replaces [`RoundTrips`]' seed: to
/// draw other objects than the ones a test always draws, or to replay a failure.
pub const SEED_VARIABLE: &str = "KUBE_CODEGEN_ROUND_TRIP_SEED";

/// How many smaller objects a failure's shrinking tries before reporting what it has.
const SHRINK_BUDGET: usize = 2_000;

/// A property test of a [`Conversion`]: for each version of the kind, `cases` objects drawn
/// at random from that version's schema in the CRD (valid by it, defaulted, with labels and
/// annotations), each read as its version's Rust type and written back, must convert to every
/// other version and back unchanged (spoke -> hub -> spoke, hub -> spoke -> hub and spoke ->
/// other spoke -> spoke). The same seed draws the same objects, so a test is repeatable; a
/// failure names the seed, the case and the smallest failing object found by removing
/// fields from the first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundTrips {
    cases: usize,
    seed: u64,
}

impl Default for RoundTrips {
    fn default() -> Self {
        Self::new()
    }
}

impl RoundTrips {
    /// 64 objects of each version, from a fixed seed (or the one in
    /// `KUBE_CODEGEN_ROUND_TRIP_SEED`).
    pub fn new() -> Self {
        let seed = std::env::var(SEED_VARIABLE)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0x6b75_6265);
        Self { cases: 64, seed }
    }

    /// Draws `cases` objects of each version.
    #[must_use]
    pub fn cases(mut self, cases: usize) -> Self {
        self.cases = cases;
        self
    }

    /// Draws from `seed`.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Runs the round trips of `conversion` over objects of the versions of `crd` it converts.
    /// The first failure: the version, the case and seed that drew it, why, and the smallest
    /// object found that still fails.
    pub fn check(
        &self,
        conversion: &Conversion,
        crd: &CustomResourceDefinition,
    ) -> Result<(), String> {
        let group = &crd.spec.group;
        let namespaced = crd.spec.scope == "Namespaced";
        let converted = conversion.api_versions();
        let mut checked = 0;
        for served in &crd.spec.versions {
            let api_version = format!("{group}/{}", served.name);
            if !converted.contains(&api_version.as_str()) {
                continue;
            }
            let schema = served
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
                .ok_or_else(|| format!("{api_version} has no schema in the CRD"))?;
            let version = Version {
                api_version: &api_version,
                kind: &crd.spec.names.kind,
                namespaced,
                schema: &schema,
            };
            let mut rng = Rng::new(self.seed);
            for case in 0..self.cases {
                let drawn = draw::object(&version, case, &mut rng).map_err(|e| {
                    format!("no object of {api_version} could be drawn from its schema: {e}")
                })?;
                if let Err(why) = trip(conversion, &api_version, drawn.clone()) {
                    let smallest = shrink(conversion, &version, drawn);
                    return Err(format!(
                        "round trip of a drawn {api_version} object (case {case}, seed {}; \
                         {SEED_VARIABLE} draws others) failed: {why}\n  smallest failing object: {smallest}",
                        self.seed
                    ));
                }
            }
            checked += 1;
        }
        if checked < 2 {
            return Err(format!(
                "the CRD {} serves fewer than two of the versions converted ({})",
                crd.metadata.name.as_deref().unwrap_or_default(),
                converted.join(", ")
            ));
        }
        Ok(())
    }
}

/// `drawn`, of `api_version`, read as its Rust type and written back, then converted to every
/// other version and back.
fn trip(conversion: &Conversion, api_version: &str, drawn: Value) -> Result<(), String> {
    let object = conversion
        .canonical(api_version, drawn)
        .map_err(|e| format!("the object, valid by the CRD, does not read as its type: {e}"))?;
    conversion.round_trip(&object)
}

/// A place in a JSON value: a key of an object or an index of a list.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every removable place in `value` below `at`, outer ones first; the object's identity
/// (`apiVersion`, `kind`, `metadata.name` and `metadata.namespace`) excluded.
fn places(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let fixed = |at: &[Step], key: &str| match at {
        [] => matches!(key, "apiVersion" | "kind" | "metadata"),
        [Step::Key(m)] if m == "metadata" => matches!(key, "name" | "namespace"),
        _ => false,
    };
    match value {
        Value::Object(map) => {
            for (key, sub) in map {
                at.push(Step::Key(key.clone()));
                if !fixed(&at[..at.len() - 1], key) {
                    out.push(at.clone());
                }
                places(sub, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                at.push(Step::Index(i));
                out.push(at.clone());
                places(sub, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// `value` without what is at `place`.
fn without(value: &Value, place: &[Step]) -> Value {
    let mut out = value.clone();
    let Some((last, parents)) = place.split_last() else {
        return out;
    };
    let mut at = &mut out;
    for step in parents {
        let next = match step {
            Step::Key(k) => at.get_mut(k.as_str()),
            Step::Index(i) => at.get_mut(*i),
        };
        match next {
            Some(next) => at = next,
            None => return out,
        }
    }
    match (last, at) {
        (Step::Key(k), Value::Object(map)) => {
            map.remove(k);
        }
        (Step::Index(i), Value::Array(items)) if *i < items.len() => {
            items.remove(*i);
        }
        _ => {}
    }
    out
}

/// The smallest object found, by removing one field or item at a time, that is still valid
/// by `version`'s schema and still fails its round trip.
fn shrink(conversion: &Conversion, version: &Version<'_>, failing: Value) -> Value {
    let mut smallest = failing;
    let mut tries = 0;
    'smaller: while tries < SHRINK_BUDGET {
        let mut found = Vec::new();
        places(&smallest, &mut Vec::new(), &mut found);
        for place in found {
            tries += 1;
            if tries >= SHRINK_BUDGET {
                break 'smaller;
            }
            let mut candidate = without(&smallest, &place);
            let errors =
                apiserver_rules::schema::admit(version.schema, &mut candidate, &mut Vec::new());
            if errors.is_empty()
                && candidate != smallest
                && trip(conversion, version.api_version, candidate.clone()).is_err()
            {
                smallest = candidate;
                continue 'smaller;
            }
        }
        break;
    }
    smallest
}

/// The path of the first place where `a` and `b` differ (`spec.items[2].name`), `None` when
/// they are equal; a field only one of them has counts as a difference.
pub(super) fn difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .find_map(|(k, v)| match y.get(k) {
                Some(w) => difference(v, w, &at(k)),
                None => Some(at(k)),
            })
            .or_else(|| y.keys().find(|k| !x.contains_key(*k)).map(|k| at(k))),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| difference(v, w, &format!("{path}[{i}]"))),
        _ => (a != b).then(|| path.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn differences_are_found_either_way() {
        let a = json!({"spec": {"x": 1, "list": [1, 2]}});
        assert_eq!(difference(&a, &a, ""), None);
        let b = json!({"spec": {"x": 1, "list": [1, 3]}});
        assert_eq!(difference(&a, &b, "").as_deref(), Some("spec.list[1]"));
        let c = json!({"spec": {"x": 1, "list": [1, 2], "y": true}});
        assert_eq!(difference(&a, &c, "").as_deref(), Some("spec.y"));
        assert_eq!(difference(&c, &a, "").as_deref(), Some("spec.y"));
    }

    #[test]
    fn places_leave_the_identity_alone() {
        let object = json!({"apiVersion": "v", "kind": "K",
            "metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"list": [1]}});
        let mut found = Vec::new();
        places(&object, &mut Vec::new(), &mut found);
        let shown: Vec<String> = found.iter().map(|p| format!("{p:?}")).collect();
        assert_eq!(
            shown,
            [
                r#"[Key("metadata"), Key("labels")]"#,
                r#"[Key("metadata"), Key("labels"), Key("x")]"#,
                r#"[Key("spec")]"#,
                r#"[Key("spec"), Key("list")]"#,
                r#"[Key("spec"), Key("list"), Index(0)]"#,
            ]
        );
        assert_eq!(
            without(&object, &found[4]),
            json!({"apiVersion": "v", "kind": "K",
                "metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"list": []}})
        );
    }
}
