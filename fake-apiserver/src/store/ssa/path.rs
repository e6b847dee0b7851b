//! Field paths and sets of them as structured-merge-diff keeps them, and their `FieldsV1`
//! form in `managedFields`.
//!
//! A path is a list of elements: a field name (`f:spec`), the key of an item in a keyed
//! list (`k:{"name":"nginx"}`), a value in a set (`v:"example.com/a"`) or an index
//! (`i:3`). A [`Set`] is a trie of them whose nodes may be *members* (owned paths): a node
//! that is owned and also has owned children is written with a `"."` entry.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One path element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pe {
    /// A struct field or map key.
    Field(String),
    /// An item of a keyed list: its key fields, sorted by name.
    Key(Vec<(String, Value)>),
    /// An item of a set.
    Value(Value),
    /// An item by position (only read, never written by the server).
    Index(usize),
}

fn kind_rank(pe: &Pe) -> u8 {
    match pe {
        Pe::Field(_) => 0,
        Pe::Key(_) => 1,
        Pe::Value(_) => 2,
        Pe::Index(_) => 3,
    }
}

/// structured-merge-diff's value order: numbers < strings < booleans < lists < maps < null.
pub fn cmp_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&y.as_f64().unwrap_or(0.0))
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = cmp_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let xs: Vec<_> = x.iter().collect();
            let ys: Vec<_> = y.iter().collect();
            for ((ka, va), (kb, vb)) in xs.iter().zip(&ys) {
                let c = ka.cmp(kb).then_with(|| cmp_values(va, vb));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality as structured-merge-diff sees it: numbers by value.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

impl Ord for Pe {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Pe::Field(a), Pe::Field(b)) => a.cmp(b),
            (Pe::Key(a), Pe::Key(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    let c = ka.cmp(kb).then_with(|| cmp_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Pe::Value(a), Pe::Value(b)) => cmp_values(a, b),
            (Pe::Index(a), Pe::Index(b)) => a.cmp(b),
            _ => kind_rank(self).cmp(&kind_rank(other)),
        }
    }
}

impl PartialOrd for Pe {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A JSON value as the server writes it inside `k:` and `v:`: Go's `encoding/json`, whose
/// map keys are sorted and which escapes `<`, `>` and `&`.
fn go_json(v: &Value) -> String {
    let text = match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            let parts: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), go_json(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(go_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    };
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

impl Pe {
    /// The `FieldsV1` key: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:3`.
    pub fn encode(&self) -> String {
        match self {
            Pe::Field(name) => format!("f:{name}"),
            Pe::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), go_json(v)))
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            Pe::Value(v) => format!("v:{}", go_json(v)),
            Pe::Index(i) => format!("i:{i}"),
        }
    }

    /// Reads a `FieldsV1` key; `None` for a kind of element the server does not know.
    pub fn decode(text: &str) -> Result<Option<Pe>, String> {
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| format!("invalid path element `{text}`"))?;
        Ok(Some(match kind {
            "f" => Pe::Field(rest.to_owned()),
            "k" => {
                let map: Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| format!("`{text}`: {e}"))?;
                let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Pe::Key(fields)
            }
            "v" => Pe::Value(serde_json::from_str(rest).map_err(|e| format!("`{text}`: {e}"))?),
            "i" => Pe::Index(
                rest.parse()
                    .map_err(|_| format!("invalid index `{text}`"))?,
            ),
            _ => return Ok(None),
        }))
    }

    /// The printed form in conflict messages: `.name`, `[k1=v1,k2=v2]`, `[=v]`, `[3]`.
    fn print(&self) -> String {
        let show = |v: &Value| match v {
            Value::String(s) => crate::rules::field::go_quote(s),
            other => other.to_string(),
        };
        match self {
            Pe::Field(name) => format!(".{name}"),
            Pe::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", show(v)))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            Pe::Value(v) => format!("[={}]", show(v)),
            Pe::Index(i) => format!("[{i}]"),
        }
    }
}

/// A path, root first.
pub type Path = Vec<Pe>;

/// A path printed as conflict messages print it: `.spec.containers[name="nginx"].image`.
pub fn print(path: &[Pe]) -> String {
    path.iter().map(Pe::print).collect()
}

/// A set of paths: a trie whose nodes may be members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<Pe>,
    children: BTreeMap<Pe, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing is owned.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Adds `path` (its parents are not added).
    pub fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[Pe]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &Pe) -> bool {
        self.members.contains(pe)
    }

    /// The subtree below `pe`, if any.
    pub fn child(&self, pe: &Pe) -> Option<&Set> {
        self.children.get(pe).filter(|c| !c.is_empty())
    }

    fn prune_empty(&mut self) {
        self.children.retain(|_, c| {
            c.prune_empty();
            !c.is_empty()
        });
    }

    /// Members of either.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Members of `self` that are not members of `other` (exact paths).
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            let d = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Members of both (exact paths).
    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                let i = c.intersection(o);
                if !i.is_empty() {
                    out.children.insert(pe.clone(), i);
                }
            }
        }
        out
    }

    /// `self` without every member of `other` and everything below it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Only the members without owned children (`"."` markers dropped).
    pub fn leaves(&self) -> Set {
        let mut out = Set::new();
        for m in &self.members {
            if self.child(m).is_none() {
                out.members.insert(m.clone());
            }
        }
        for (pe, c) in &self.children {
            let l = c.leaves();
            if !l.is_empty() {
                out.children.insert(pe.clone(), l);
            }
        }
        out
    }

    /// Every member path, in pre-order: this level's members, then each child.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` form: `{"f:spec":{".":{},"f:replicas":{}}}`.
    pub fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        let mut pes: BTreeSet<&Pe> = self.members.iter().collect();
        pes.extend(self.children.keys().filter(|pe| self.child(pe).is_some()));
        for pe in pes {
            let inner = match self.child(pe) {
                Some(c) => {
                    let mut v = c.to_fields_v1();
                    if self.members.contains(pe)
                        && let Some(m) = v.as_object_mut()
                    {
                        let mut with_dot = Map::new();
                        with_dot.insert(".".into(), Value::Object(Map::new()));
                        with_dot.extend(std::mem::take(m));
                        *m = with_dot;
                    }
                    v
                }
                None => Value::Object(Map::new()),
            };
            out.insert(pe.encode(), inner);
        }
        Value::Object(out)
    }

    /// Reads a `fieldsV1` value.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let mut out = Set::new();
        let Some(map) = v.as_object() else {
            return Ok(out);
        };
        for (k, child) in map {
            if k == "." {
                continue;
            }
            let Some(pe) = Pe::decode(k)? else { continue };
            let inner = child.as_object();
            let is_member = inner.is_none_or(|m| m.is_empty() || m.contains_key("."));
            if is_member {
                out.members.insert(pe.clone());
            }
            let sub = Set::from_fields_v1(child)?;
            if !sub.is_empty() {
                out.children.insert(pe, sub);
            }
        }
        out.prune_empty();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_v1_round_trips_with_dots_keys_and_values() {
        let recorded = json!({"f:metadata":{"f:finalizers":{"v:\"example.com/a\"":{}}},
            "f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},
                "f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},
                "f:data":{}}});
        let set = Set::from_fields_v1(&recorded).unwrap();
        assert_eq!(set.to_fields_v1(), recorded);
        let port = Pe::Key(vec![
            ("containerPort".into(), json!(80)),
            ("protocol".into(), json!("TCP")),
        ]);
        let path = vec![
            Pe::Field("spec".into()),
            Pe::Field("containers".into()),
            Pe::Key(vec![("name".into(), json!("nginx"))]),
            Pe::Field("ports".into()),
            port,
        ];
        assert!(set.has(&path));
        assert_eq!(
            print(&path),
            ".spec.containers[name=\"nginx\"].ports[containerPort=80,protocol=\"TCP\"]"
        );
        assert!(set.has(&[Pe::Field("spec".into()), Pe::Field("data".into())]));
    }

    #[test]
    fn set_algebra() {
        let f = |s: &str| Pe::Field(s.into());
        let mut a = Set::new();
        a.insert(&[f("data"), f("k")]);
        a.insert(&[f("data"), f("j")]);
        let mut b = Set::new();
        b.insert(&[f("data"), f("k")]);
        b.insert(&[f("data")]);
        assert_eq!(a.intersection(&b).paths(), vec![vec![f("data"), f("k")]]);
        assert_eq!(a.difference(&b).paths(), vec![vec![f("data"), f("j")]]);
        assert!(a.recursive_difference(&b).is_empty(), "data and below go");
        assert_eq!(b.leaves().paths(), vec![vec![f("data"), f("k")]]);
    }
}
