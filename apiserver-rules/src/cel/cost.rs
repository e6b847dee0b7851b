//! The estimated cost of a rule, as kube-apiserver computes it when a CRD is created
//! (cel-go's estimator with Kubernetes' size and call estimates), and the limits it is held
//! to: 10 000 000 per rule or message expression (times how many times the rule can run,
//! from the `maxItems` and `maxProperties` above it), 100 000 000 for a whole schema.
//!
//! Only maxima are tracked, as the real check uses only the maximum. Sizes come from the
//! schema: a string is 4 x `maxLength` (3 145 726 without), a list `maxItems` (or what
//! 3 MiB of its smallest items would hold), a map `maxProperties` (likewise).

use kube_cel::cel::IdedExpr;
use kube_cel::cel::common::ast::{EntryExpr, Expr, LiteralValue};
use serde_json::Value;

/// The largest request body, and what a string or collection without bounds may fill.
const MAX_REQUEST: u64 = 3 * 1024 * 1024;
const UNBOUNDED: u64 = MAX_REQUEST - 2;
/// Unknown size.
const UNKNOWN: u64 = u64::MAX;

/// The limit of one rule or message expression.
pub const RULE_LIMIT: u64 = 10_000_000;
/// The limit of all rules of one schema.
pub const SCHEMA_LIMIT: u64 = 100_000_000;

fn factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && xf > (u64::MAX as f64) / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

fn ty(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn int(s: &Value, k: &str) -> Option<u64> {
    s.get(k).and_then(Value::as_i64).map(|n| n.max(0) as u64)
}

fn is_map(s: &Value) -> bool {
    ty(s) == "object" && s.get("additionalProperties").is_some_and(Value::is_object)
}

/// The smallest JSON a value of `s` serializes to.
pub fn min_size(s: &Value) -> u64 {
    if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return 1;
    }
    match ty(s) {
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        },
        "boolean" => 4,
        "integer" | "number" => 1,
        "array" => 2,
        "object" if is_map(s) => 2,
        "object" => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props = s.get("properties").and_then(Value::as_object);
            2 + required
                .iter()
                .filter_map(|r| props.and_then(|p| p.get(*r)).map(|p| (r, p)))
                .filter(|(_, p)| p.get("default").is_none())
                .map(|(r, p)| r.len() as u64 + min_size(p) + 4)
                .sum::<u64>()
        }
        _ => 1,
    }
}

/// How many elements (characters, items, entries) a value of `s` may have, as the
/// estimator sees it; 0 for numbers, booleans and objects.
pub fn max_elements(s: &Value) -> u64 {
    let int_or_string = s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true);
    if int_or_string {
        return int(s, "maxLength").map_or(UNBOUNDED, |l| l.saturating_mul(4));
    }
    match ty(s) {
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("duration") | Some("date-time") => 32,
            Some("date") => 12,
            Some("byte") => int(s, "maxLength").unwrap_or(UNBOUNDED),
            _ => match int(s, "maxLength") {
                Some(l) => l.saturating_mul(4),
                None => s
                    .get("enum")
                    .and_then(Value::as_array)
                    .and_then(|e| {
                        e.iter()
                            .filter_map(Value::as_str)
                            .map(|v| v.len() as u64)
                            .max()
                    })
                    .unwrap_or(UNBOUNDED),
            },
        },
        "array" => int(s, "maxItems")
            .unwrap_or_else(|| UNBOUNDED / (s.get("items").map_or(1, min_size) + 1)),
        "object" if is_map(s) => int(s, "maxProperties")
            .unwrap_or_else(|| UNBOUNDED / (s.get("additionalProperties").map_or(1, min_size) + 6)),
        _ => 0,
    }
}

/// What an expression is, for costing: its cost, size, and the schema of its value.
#[derive(Clone, Copy)]
struct Est<'s> {
    cost: u64,
    size: u64,
    node: Option<&'s Value>,
    /// A string (or bytes), for the operators whose cost depends on it.
    text: bool,
    /// A map or object, for selections (which then cost 1).
    object: bool,
    /// A list, for `in`.
    list: bool,
}

impl<'s> Est<'s> {
    fn scalar(cost: u64) -> Self {
        Est {
            cost,
            size: 1,
            node: None,
            text: false,
            object: false,
            list: false,
        }
    }

    fn of(cost: u64, node: Option<&'s Value>) -> Self {
        match node {
            Some(n) => Est {
                cost,
                size: max_elements(n),
                node: Some(n),
                text: ty(n) == "string",
                object: ty(n) == "object",
                list: ty(n) == "array",
            },
            None => Est {
                cost,
                size: UNKNOWN,
                node: None,
                text: false,
                object: false,
                list: false,
            },
        }
    }
}

struct Coster<'s> {
    scopes: Vec<(String, Est<'s>)>,
}

fn property<'s>(node: &'s Value, escaped: &str) -> Option<&'s Value> {
    if let Some(values) = node.get("additionalProperties").filter(|a| a.is_object()) {
        return Some(values);
    }
    let props = node.get("properties")?.as_object()?;
    props
        .iter()
        .find(|(k, _)| super::escape(k).as_deref() == Some(escaped))
        .map(|(_, v)| v)
}

impl<'s> Coster<'s> {
    fn lookup(&self, name: &str) -> Option<Est<'s>> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, e)| *e)
    }

    fn expr(&mut self, e: &IdedExpr) -> Est<'s> {
        match &e.expr {
            Expr::Literal(l) => {
                let mut est = Est::scalar(0);
                match l {
                    LiteralValue::String(s) => {
                        est.size = s.inner().chars().count() as u64;
                        est.text = true;
                    }
                    LiteralValue::Bytes(b) => {
                        est.size = b.inner().len() as u64;
                        est.text = true;
                    }
                    _ => {}
                }
                est
            }
            Expr::Ident(name) => match self.lookup(name) {
                Some(mut est) => {
                    est.cost = 1;
                    est
                }
                None => Est::of(1, None),
            },
            Expr::Select(s) => {
                let operand = self.expr(&s.operand);
                if s.test {
                    return Est::scalar(operand.cost);
                }
                let cost = operand.cost + u64::from(operand.object);
                let child = operand.node.and_then(|n| property(n, &s.field));
                Est::of(cost, child)
            }
            Expr::List(l) => {
                let cost = l
                    .elements
                    .iter()
                    .map(|x| self.expr(x).cost)
                    .fold(10u64, u64::saturating_add);
                Est {
                    cost,
                    size: l.elements.len() as u64,
                    node: None,
                    text: false,
                    object: false,
                    list: true,
                }
            }
            Expr::Map(m) => {
                let mut cost = 30u64;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        cost = cost
                            .saturating_add(self.expr(&me.key).cost)
                            .saturating_add(self.expr(&me.value).cost);
                    }
                }
                Est {
                    cost,
                    size: m.entries.len() as u64,
                    node: None,
                    text: false,
                    object: true,
                    list: false,
                }
            }
            Expr::Call(c) => self.call(&c.func_name, c.target.as_deref(), &c.args),
            Expr::Struct(_) | Expr::Unspecified => Est::scalar(40),
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                let item = match range.node {
                    Some(n) if ty(n) == "array" => Est::of(0, n.get("items")),
                    Some(n) if is_map(n) => Est {
                        size: 0,
                        text: true,
                        ..Est::scalar(0)
                    },
                    Some(n) if ty(n) == "object" => Est {
                        size: 0,
                        text: true,
                        ..Est::scalar(0)
                    },
                    _ => Est::of(0, None),
                };
                let init = self.expr(&c.accu_init);
                let mut accu = init;
                if init.list || init.object {
                    accu.size = range.size;
                }
                let depth = self.scopes.len();
                self.scopes.push((c.accu_var.clone(), accu));
                self.scopes.push((c.iter_var.clone(), item));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), Est::of(0, None)));
                }
                let cond = self.expr(&c.loop_cond).cost;
                let step = self.expr(&c.loop_step).cost;
                self.scopes.truncate(depth);
                self.scopes.push((c.accu_var.clone(), accu));
                let result = self.expr(&c.result);
                self.scopes.truncate(depth);
                let cost = range
                    .cost
                    .saturating_add(init.cost)
                    .saturating_add(result.cost)
                    .saturating_add(range.size.saturating_mul(step.saturating_add(cond)));
                Est { cost, ..result }
            }
        }
    }

    /// A call: what its target and arguments cost, plus the function's own cost.
    fn call(&mut self, name: &str, target: Option<&IdedExpr>, args: &[IdedExpr]) -> Est<'s> {
        let namespace = matches!(target, Some(IdedExpr { expr: Expr::Ident(n), .. }) if self.lookup(n).is_none());
        let t = match target {
            Some(t) if !namespace => Some(self.expr(t)),
            _ => None,
        };
        let a: Vec<Est<'s>> = args.iter().map(|x| self.expr(x)).collect();
        let base = a
            .iter()
            .map(|x| x.cost)
            .fold(t.map_or(0, |t| t.cost), u64::saturating_add);
        let with = |own: u64| base.saturating_add(own);
        match name {
            "_?_:_" => {
                let (x, y) = (
                    a.get(1).copied().unwrap_or(Est::scalar(0)),
                    a.get(2).copied().unwrap_or(Est::scalar(0)),
                );
                let cost = a[0].cost.saturating_add(x.cost.max(y.cost));
                let mut e = if x.size >= y.size { x } else { y };
                e.cost = cost;
                return e;
            }
            "_[_]" | "_[?_]" => {
                let child = a.first().and_then(|c| c.node).and_then(|n| {
                    n.get("items")
                        .filter(|i| i.is_object())
                        .or_else(|| n.get("additionalProperties").filter(|v| v.is_object()))
                });
                let mut e = Est::of(with(1), child);
                if child.is_none() {
                    e.size = UNKNOWN;
                }
                return e;
            }
            "dyn" => {
                let mut e = a.first().copied().unwrap_or(Est::scalar(0));
                e.cost = with(1);
                return e;
            }
            "value" | "orValue" => {
                let mut e = t.unwrap_or(Est::scalar(0));
                e.cost = with(1);
                return e;
            }
            _ => {}
        }
        let call = Call {
            name,
            t,
            a: &a,
            no_args: args.is_empty(),
        };
        let own = call
            .operator()
            .or_else(|| call.on_list())
            .or_else(|| call.on_text())
            .or_else(|| call.library())
            .unwrap_or(Own::scalar(1, 1));
        Est {
            cost: with(own.cost),
            size: own.size,
            node: None,
            text: own.text,
            object: false,
            list: own.list,
        }
    }
}

/// What a function adds to the cost of its target and arguments, and its result's size.
#[derive(Clone, Copy)]
struct Own {
    cost: u64,
    size: u64,
    /// The result is a string.
    text: bool,
    /// The result is a list.
    list: bool,
}

impl Own {
    fn scalar(cost: u64, size: u64) -> Self {
        Own {
            cost,
            size,
            text: false,
            list: false,
        }
    }

    fn text(cost: u64, size: u64) -> Self {
        Own {
            text: true,
            ..Own::scalar(cost, size)
        }
    }

    fn list(cost: u64, size: u64) -> Self {
        Own {
            list: true,
            ..Own::scalar(cost, size)
        }
    }
}

/// A call of a function whose cost is its own plus its operands': the name, the estimates
/// of its target (`None` for a global function) and arguments, and whether it has none.
/// Each group below answers for the functions it knows, in cel-go's order; a function no
/// group knows costs 1.
struct Call<'a, 's> {
    name: &'a str,
    t: Option<Est<'s>>,
    a: &'a [Est<'s>],
    no_args: bool,
}

impl Call<'_, '_> {
    /// The size of argument `i`.
    fn s(&self, i: usize) -> u64 {
        self.a.get(i).map_or(0, |x| x.size)
    }

    /// The size of the target.
    fn ts(&self) -> u64 {
        self.t.map_or(0, |t| t.size)
    }

    /// The schema of the target's elements, when it is a list of known items.
    fn items(&self) -> Option<&Value> {
        self.t.and_then(|t| t.node).and_then(|n| n.get("items"))
    }

    /// Logic, comparison, `+` and `in`.
    fn operator(&self) -> Option<Own> {
        let a = self.a;
        Some(match self.name {
            "_&&_" | "_||_" => Own::scalar(0, 1),
            "_==_" | "_!=_" => Own::scalar(factor(self.s(0).min(self.s(1)), 0.1), 1),
            "_<_" | "_<=_" | "_>_" | "_>=_" if a.iter().all(|x| x.text) => {
                Own::scalar(factor(self.s(0).min(self.s(1)), 0.1), 1)
            }
            "_+_" if a.iter().any(|x| x.text) => {
                let size = self.s(0).saturating_add(self.s(1));
                Own::text(factor(size, 0.1), size)
            }
            "_+_" if a.iter().any(|x| x.list) => Own::list(1, self.s(0).saturating_add(self.s(1))),
            "@in" => Own::scalar(
                if a.get(1).is_some_and(|l| l.list) {
                    self.s(1)
                } else {
                    1
                },
                1,
            ),
            _ => return None,
        })
    }

    /// The methods of lists: searches and aggregates over their items, `join`.
    fn on_list(&self) -> Option<Own> {
        let ts = self.ts();
        Some(match self.name {
            "indexOf" | "lastIndexOf" | "isSorted" | "sum" | "max" | "min"
                if self.t.is_some_and(|t| t.list) =>
            {
                let elem = self.items().map_or(0, max_elements);
                let text = self.items().is_some_and(|i| ty(i) == "string");
                Own::scalar(
                    ts.saturating_mul(if text { 1 + factor(elem, 0.1) } else { 1 }),
                    1,
                )
            }
            "join" => {
                let elem = self.items().map_or(UNKNOWN, max_elements);
                let size = ts
                    .saturating_mul(elem)
                    .saturating_add(self.s(0).saturating_mul(ts.saturating_sub(1)));
                Own::text(factor(size, 0.1), size)
            }
            _ => return None,
        })
    }

    /// The functions of strings: prefixes, regular expressions, searches, case,
    /// replacement, splitting, formatting, and those whose result has no size estimate.
    fn on_text(&self) -> Option<Own> {
        let (name, t, ts) = (self.name, self.t, self.ts());
        Some(match name {
            "startsWith" | "endsWith" => Own::scalar(factor(self.s(0), 0.1), 1),
            "matches" | "find" | "findAll" if t.is_some() => {
                let size = if name == "matches" { 1 } else { ts };
                Own::scalar(
                    factor(ts.saturating_add(1), 0.1).saturating_mul(factor(self.s(0), 0.25)),
                    size,
                )
            }
            "contains" if t.is_some_and(|t| t.text) => {
                Own::scalar(factor(ts, 0.1).saturating_mul(factor(self.s(0), 0.1)), 1)
            }
            "indexOf" | "lastIndexOf" => Own::scalar(factor(ts, 0.1), 1),
            "lowerAscii" | "upperAscii" | "substring" | "trim" => Own::text(factor(ts, 0.1), ts),
            "replace" => Own::text(factor(ts, 0.2), UNKNOWN),
            "split" => Own::list(factor(ts, 0.2), ts),
            "format" if t.is_some() => Own::text(factor(ts, 0.1), UNKNOWN),
            // Functions whose string result has no size estimate.
            "string" | "charAt" | "getScheme" | "getHost" | "getHostname" | "getPort"
            | "getEscapedPath" | "quote" => Own::text(1, UNKNOWN),
            "reverse" => Own::scalar(1, UNKNOWN),
            _ => return None,
        })
    }

    /// Kubernetes' libraries: URLs, quantities, semantic versions, IPs and CIDRs, and
    /// `validate` (of formats).
    fn library(&self) -> Option<Own> {
        Some(match self.name {
            "url" | "quantity" | "isQuantity" | "semver" | "isSemver" | "ip" | "cidr" | "isIP"
            | "isCIDR" => {
                let arg = if self.t.is_some() && self.no_args {
                    self.ts()
                } else {
                    self.s(0)
                };
                Own::scalar(factor(arg, 0.1), if self.name == "url" { arg } else { 1 })
            }
            "validate" => Own::scalar(factor(factor(self.s(0), 0.1), 32.0), 1),
            _ => return None,
        })
    }
}

/// The estimated cost of `expr` with `self` (and `oldSelf`) of schema `node`.
pub fn estimate(expr: &IdedExpr, node: &Value) -> u64 {
    let me = Est::of(0, Some(node));
    let mut c = Coster {
        scopes: vec![("self".into(), me), ("oldSelf".into(), me)],
    };
    c.expr(expr).cost
}

/// How many times a rule on a node of `min` serialized size may run when a list or map
/// above it is unbounded.
pub fn unbounded_cardinality(node: &Value) -> u64 {
    MAX_REQUEST / (min_size(node) + 1)
}

/// `exceeds budget by factor of ...` as the real server words it.
pub fn over_budget(what: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_owned()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}
