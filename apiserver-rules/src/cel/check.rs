//! Checking rules before they run: parse errors, references to names and fields that do not
//! exist, operands that no overload takes, and results of the wrong type, reported as
//! apiextensions-apiserver reports them at CRD creation (`compilation failed: ERROR:
//! <input>:1:5: undefined field 'foo'` with the source line and a caret).
//!
//! This is a small type checker over the `cel` crate's AST, not cel-go's: it knows the
//! types a structural schema gives (`self`, `oldSelf`), the variables of macros, and the
//! result types of the common functions; what it cannot type is `dyn`, which is accepted.
//! So every rule it refuses, kube-apiserver refuses too; some it accepts, the server may not.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use kube_cel::cel::IdedExpr;
use kube_cel::cel::ParseErrors;
use kube_cel::cel::common::ast::{EntryExpr, Expr, LiteralValue};
use serde_json::Value;

use super::value::escape;
use crate::field::{ErrorType, FieldError};

/// A CEL type, as far as checking rules needs one.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `int` (`type: integer`).
    Int,
    /// `uint`.
    UInt,
    /// `double` (`type: number`).
    Double,
    /// `string`.
    String,
    /// `bool`.
    Bool,
    /// `bytes` (`format: byte`).
    Bytes,
    /// `null_type`.
    Null,
    /// `google.protobuf.Timestamp` (`format: date-time`, `date`).
    Timestamp,
    /// `google.protobuf.Duration` (`format: duration`).
    Duration,
    /// `list(T)`.
    List(Box<Ty>),
    /// `map(string, V)` (`additionalProperties`).
    Map(Box<Ty>),
    /// An object with its (escaped) field names.
    Object(Arc<BTreeMap<String, Ty>>),
    /// `optional_type(T)` (`optionalOldSelf`'s `oldSelf`, `.?` selections).
    Optional(Box<Ty>),
    /// A type name used as a value (`int`, `string`).
    Type,
    /// Anything: what the checker cannot type.
    Dyn,
}

impl Ty {
    /// The type rules see for a value of `schema`; `None` when the value is not visible to
    /// rules (a schemaless field, or a list of such).
    pub fn of_schema(schema: &Value, resource: bool) -> Option<Ty> {
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            return Some(Ty::Dyn);
        }
        let resource = resource || flag("x-kubernetes-embedded-resource");
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
        Some(match ty {
            "object" => {
                if let Some(values) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                    Ty::Map(Box::new(Ty::of_schema(values, false).unwrap_or(Ty::Dyn)))
                } else {
                    let mut fields = BTreeMap::new();
                    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                        for (k, v) in props {
                            if resource && matches!(k.as_str(), "metadata" | "apiVersion" | "kind")
                            {
                                continue;
                            }
                            if let (Some(name), Some(t)) = (escape(k), Ty::of_schema(v, false)) {
                                fields.insert(name, t);
                            }
                        }
                    }
                    if resource {
                        fields.insert("apiVersion".into(), Ty::String);
                        fields.insert("kind".into(), Ty::String);
                        let meta = [
                            ("name".to_owned(), Ty::String),
                            ("generateName".to_owned(), Ty::String),
                        ];
                        fields.insert(
                            "metadata".into(),
                            Ty::Object(Arc::new(meta.into_iter().collect())),
                        );
                    }
                    Ty::Object(Arc::new(fields))
                }
            }
            "array" => Ty::List(Box::new(Ty::of_schema(schema.get("items")?, false)?)),
            "string" => match schema.get("format").and_then(Value::as_str) {
                Some("byte") => Ty::Bytes,
                Some("duration") => Ty::Duration,
                Some("date" | "date-time") => Ty::Timestamp,
                _ => Ty::String,
            },
            "boolean" => Ty::Bool,
            "number" => Ty::Double,
            "integer" => Ty::Int,
            _ => return None,
        })
    }

    /// The family of a primitive: operands of different families never match an operator.
    fn family(&self) -> Option<&'static str> {
        match self {
            Ty::Int | Ty::UInt | Ty::Double => Some("number"),
            Ty::String => Some("string"),
            Ty::Bool => Some("bool"),
            Ty::Bytes => Some("bytes"),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::UInt => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bool => "bool",
            Ty::Bytes => "bytes",
            _ => "dyn",
        }
    }
}

/// What a rule is checked for.
pub enum Expect {
    /// A rule: must be a `bool`.
    Rule,
    /// A `messageExpression`: must be a `string`.
    Message,
}

/// Checks `source` with `self` (and `oldSelf`, optional when `optional_old`) of type
/// `self_ty`, returning the parsed expression. `Err` holds the message after the field:
/// `compilation failed: ...` or `cel expression must evaluate to a bool`, as the real server
/// words them.
pub fn check(
    source: &str,
    self_ty: &Ty,
    optional_old: bool,
    expect: Expect,
) -> Result<IdedExpr, String> {
    let prefix = match expect {
        Expect::Rule => "compilation failed: ",
        Expect::Message => "messageExpression compilation failed: ",
    };
    let expr = super::parse(source).map_err(|e| format!("{prefix}{}", parse_errors(source, &e)))?;
    let old = if optional_old {
        Ty::Optional(Box::new(self_ty.clone()))
    } else {
        self_ty.clone()
    };
    let mut c = Checker {
        source,
        scopes: vec![("self".into(), self_ty.clone()), ("oldSelf".into(), old)],
        errors: Vec::new(),
    };
    let ty = c.expr(&expr);
    if !c.errors.is_empty() {
        c.errors.sort_by_key(|(at, _)| *at);
        let all: Vec<String> = c
            .errors
            .iter()
            .map(|(at, msg)| issue(source, *at, msg))
            .collect();
        return Err(format!("{prefix}{}", all.join("\n")));
    }
    match expect {
        Expect::Rule if !matches!(ty, Ty::Bool | Ty::Dyn) => {
            Err("cel expression must evaluate to a bool".into())
        }
        Expect::Message if !matches!(ty, Ty::String | Ty::Dyn) => {
            Err("messageExpression must evaluate to a string".into())
        }
        _ => Ok(expr),
    }
}

/// cel-go's rendering of one issue: position, message, the line and a caret under it.
fn issue(source: &str, offset: usize, msg: &str) -> String {
    let before = &source[..offset.min(source.len())];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count();
    let line = source[line_start..].lines().next().unwrap_or("");
    let mut out = format!(
        "ERROR: <input>:{line_no}:{}: {msg}\n | {line}\n | ",
        col + 1
    );
    for _ in 0..col {
        out.push('.');
    }
    out.push('^');
    out
}

fn parse_errors(source: &str, errors: &ParseErrors) -> String {
    let mut out = String::new();
    for (i, e) in errors.errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (line, col) = e.pos;
        let offset = source
            .split_inclusive('\n')
            .take((line.max(1) - 1) as usize)
            .map(str::len)
            .sum::<usize>()
            + (col.max(1) - 1) as usize;
        let _ = write!(out, "{}", issue(source, offset, &e.msg));
    }
    out
}

/// Names a rule may use for types (`type(x) == int`).
const TYPE_NAMES: [&str; 10] = [
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
];

/// Functions with a known result type; the rest are `dyn`.
fn result_of(name: &str, target: Option<&Ty>) -> Ty {
    match name {
        "size" | "indexOf" | "lastIndexOf" | "int" | "getHours" | "getMinutes" | "getSeconds"
        | "getMilliseconds" | "getFullYear" | "getMonth" | "getDayOfMonth" | "getDayOfWeek"
        | "getDayOfYear" | "getDate" => Ty::Int,
        "uint" => Ty::UInt,
        "double" => Ty::Double,
        "string" | "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "join"
        | "charAt" | "format" | "getHost" | "getPort" | "getScheme" | "getEscapedPath"
        | "getQuery" => match name {
            "getQuery" => Ty::Dyn,
            _ => Ty::String,
        },
        "bytes" => Ty::Bytes,
        "split" => Ty::List(Box::new(Ty::String)),
        "matches"
        | "startsWith"
        | "endsWith"
        | "contains"
        | "isSorted"
        | "hasValue"
        | "isURL"
        | "isIP"
        | "isCIDR"
        | "isQuantity"
        | "isSemver"
        | "isGreaterThan"
        | "isLessThan"
        | "containsIP"
        | "containsCIDR"
        | "isCanonical"
        | "isLoopback"
        | "isUnspecified"
        | "isGlobalUnicast"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isInteger"
        | "sign" => match name {
            "sign" => Ty::Dyn,
            _ => Ty::Bool,
        },
        "timestamp" => Ty::Timestamp,
        "duration" => Ty::Duration,
        "value" => match target {
            Some(Ty::Optional(inner)) => (**inner).clone(),
            _ => Ty::Dyn,
        },
        _ => Ty::Dyn,
    }
}

struct Checker<'s> {
    source: &'s str,
    scopes: Vec<(String, Ty)>,
    errors: Vec<(usize, String)>,
}

impl Checker<'_> {
    fn lookup(&self, name: &str) -> Option<&Ty> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
    }

    /// Where `needle` first occurs outside string literals (0 when it does not): the
    /// position an issue is reported at, as the AST keeps no offsets.
    fn find(&self, needle: &str, word: bool) -> usize {
        let bytes = self.source.as_bytes();
        let mut quote: Option<u8> = None;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if let Some(q) = quote {
                if b == b'\\' {
                    i += 2;
                    continue;
                }
                if b == q {
                    quote = None;
                }
            } else if b == b'\'' || b == b'"' {
                quote = Some(b);
            } else if self.source[i..].starts_with(needle) {
                let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
                let before_ok = !word || i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == b'.');
                let after = bytes.get(i + needle.len()).copied();
                let after_ok = !(word || needle.starts_with('.')) || !after.is_some_and(ident);
                let after_op_ok =
                    word || !after.is_some_and(|c| c == b'=' && !needle.ends_with('='));
                if before_ok && after_ok && after_op_ok {
                    return i;
                }
            }
            i += 1;
        }
        0
    }

    fn error(&mut self, at: usize, msg: String) {
        if !self.errors.iter().any(|(a, m)| *a == at && *m == msg) {
            self.errors.push((at, msg));
        }
    }

    fn expr(&mut self, e: &IdedExpr) -> Ty {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::UInt,
            },
            Expr::Ident(name) => {
                if let Some(t) = self.lookup(name) {
                    return t.clone();
                }
                if TYPE_NAMES.contains(&name.as_str()) {
                    return Ty::Type;
                }
                let at = self.find(name, true);
                self.error(
                    at,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Ty::Dyn
            }
            Expr::Select(s) => {
                let operand = self.expr(&s.operand);
                let ty = self.field(&operand, &s.field);
                if s.test { Ty::Bool } else { ty }
            }
            Expr::Call(c) => self.call(&c.func_name, c.target.as_deref(), &c.args),
            Expr::List(l) => {
                let types: Vec<Ty> = l.elements.iter().map(|x| self.expr(x)).collect();
                let elem = match types.split_first() {
                    Some((first, rest)) if rest.iter().all(|t| t == first) => first.clone(),
                    _ => Ty::Dyn,
                };
                Ty::List(Box::new(elem))
            }
            Expr::Map(m) => {
                let mut values = Vec::new();
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.expr(&me.key);
                        values.push(self.expr(&me.value));
                    }
                }
                let value = match values.split_first() {
                    Some((first, rest)) if rest.iter().all(|t| t == first) => first.clone(),
                    _ => Ty::Dyn,
                };
                Ty::Map(Box::new(value))
            }
            Expr::Struct(_) | Expr::Unspecified => Ty::Dyn,
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range);
                let item = match (&range, &c.iter_var2) {
                    (Ty::List(t), None) => (**t).clone(),
                    (Ty::Map(_), None) => Ty::String,
                    _ => Ty::Dyn,
                };
                let accu = self.expr(&c.accu_init);
                let depth = self.scopes.len();
                self.scopes.push((c.accu_var.clone(), accu));
                self.scopes.push((c.iter_var.clone(), item));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), Ty::Dyn));
                }
                self.expr(&c.loop_cond);
                let step = self.expr(&c.loop_step);
                self.scopes.truncate(depth);
                self.scopes.push((c.accu_var.clone(), step));
                let result = self.expr(&c.result);
                self.scopes.truncate(depth);
                result
            }
        }
    }

    /// The type of `operand.field`.
    fn field(&mut self, operand: &Ty, field: &str) -> Ty {
        match operand {
            Ty::Object(fields) => match fields.get(field) {
                Some(t) => t.clone(),
                None => {
                    let at = self.find(&format!(".{field}"), false);
                    self.error(at, format!("undefined field '{field}'"));
                    Ty::Dyn
                }
            },
            Ty::Map(v) => (**v).clone(),
            _ => Ty::Dyn,
        }
    }

    fn call(&mut self, name: &str, target: Option<&IdedExpr>, args: &[IdedExpr]) -> Ty {
        // `optional.of(x)`, `math.greatest(...)`: a namespace, not a variable.
        let target_ty = match target {
            Some(IdedExpr {
                expr: Expr::Ident(ns),
                ..
            }) if self.lookup(ns).is_none() => None,
            Some(t) => Some(self.expr(t)),
            None => None,
        };
        if name == "_?._" {
            let operand = args.first().map(|a| self.expr(a)).unwrap_or(Ty::Dyn);
            let inner = match args.get(1).map(|a| &a.expr) {
                Some(Expr::Literal(LiteralValue::String(f))) => self.field(&operand, f),
                _ => Ty::Dyn,
            };
            return Ty::Optional(Box::new(inner));
        }
        let types: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
        let op = match name {
            "_==_" => Some("=="),
            "_!=_" => Some("!="),
            "_<_" => Some("<"),
            "_<=_" => Some("<="),
            "_>_" => Some(">"),
            "_>=_" => Some(">="),
            "_+_" => Some("+"),
            "_-_" => Some("-"),
            "_*_" => Some("*"),
            "_/_" => Some("/"),
            "_%_" => Some("%"),
            _ => None,
        };
        if let (Some(op), [a, b]) = (op, types.as_slice()) {
            if let (Some(fa), Some(fb)) = (a.family(), b.family())
                && fa != fb
            {
                let at = self.find(op, false);
                self.error(
                    at,
                    format!(
                        "found no matching overload for '{name}' applied to '({}, {})'",
                        a.name(),
                        b.name()
                    ),
                );
                return Ty::Dyn;
            }
            return match op {
                "==" | "!=" | "<" | "<=" | ">" | ">=" => Ty::Bool,
                _ if a == b && !matches!(a, Ty::Null) => a.clone(),
                _ => Ty::Dyn,
            };
        }
        match name {
            "_&&_" | "_||_" | "!_" | "@in" | "@not_strictly_false" => Ty::Bool,
            "-_" => types.first().cloned().unwrap_or(Ty::Dyn),
            "_[_]" | "_[?_]" => {
                let elem = match types.first() {
                    Some(Ty::List(t)) | Some(Ty::Map(t)) => (**t).clone(),
                    _ => Ty::Dyn,
                };
                if name == "_[?_]" {
                    Ty::Optional(Box::new(elem))
                } else {
                    elem
                }
            }
            "_?_:_" => match types.as_slice() {
                [_, a, b] if a == b => a.clone(),
                _ => Ty::Dyn,
            },
            other => result_of(other, target_ty.as_ref()),
        }
    }
}

/// Checks every rule of a CRD version's schema at `p` (`spec.validation.openAPIV3Schema`),
/// as the real server does once the schema itself is valid: rules and message expressions
/// that do not compile or type-check, `oldSelf` where no old value can be correlated, and
/// `optionalOldSelf` on rules without `oldSelf`.
pub fn crd_rules(root: &Value, p: &str) -> Vec<FieldError> {
    let mut walk = Walk::default();
    walk.node(root, p, true, None, Some(1));
    let Walk { total, mut errors } = walk;
    if total.sum > super::cost::SCHEMA_LIMIT {
        for (path, _) in &total.most_expensive {
            errors.push(FieldError::forbidden(
                path.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errors.push(FieldError::forbidden(
            p,
            super::cost::over_budget(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.sum,
                super::cost::SCHEMA_LIMIT,
            ),
        ));
    }
    errors
}

/// The estimated cost of a whole schema, and its four most expensive expressions.
#[derive(Default)]
struct Total {
    sum: u64,
    most_expensive: Vec<(String, u64)>,
}

impl Total {
    fn observe(&mut self, path: String, cost: u64) {
        self.sum = self.sum.saturating_add(cost);
        if cost < 1_000_000 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// How many of a node's children its own value may hold (`None`: unbounded).
fn max_children(s: &Value) -> Option<u64> {
    let n = |k: &str| s.get(k).and_then(Value::as_i64).map(|n| n.max(0) as u64);
    match s.get("type").and_then(Value::as_str) {
        Some("array") => n("maxItems"),
        Some("object") if s.get("additionalProperties").is_some_and(Value::is_object) => {
            n("maxProperties")
        }
        _ => Some(1),
    }
}

/// The walk over a schema's rules: the cost so far and the errors found.
#[derive(Default)]
struct Walk {
    total: Total,
    errors: Vec<FieldError>,
}

/// A node whose rules are being checked, with what its rules depend on.
struct Site<'a> {
    /// The node's schema.
    s: &'a Value,
    /// The type of `self` in its rules.
    self_ty: Ty,
    /// The list without map keys the node is in, if any, where `oldSelf` cannot be used.
    uncorrelatable: Option<&'a str>,
    /// How many times a rule here may run (`None`: below an unbounded list or map).
    card: Option<u64>,
}

impl Walk {
    /// Children first, then the node's own rules, as the real server's schema walk reports
    /// them (it visits properties in Go's map order; here they come sorted). `card` is how
    /// many times a rule here may run (`None`: below an unbounded list or map).
    fn node(
        &mut self,
        s: &Value,
        p: &str,
        resource: bool,
        uncorrelatable: Option<&str>,
        card: Option<u64>,
    ) {
        let child_card = match (card, max_children(s)) {
            (Some(c), Some(m)) => Some(c.saturating_mul(m)),
            _ => None,
        };
        if let Some(values) = s.get("additionalProperties").filter(|a| a.is_object()) {
            let at = format!("{p}.additionalProperties");
            self.node(values, &at, false, uncorrelatable, child_card);
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                if resource && k == "metadata" {
                    continue;
                }
                let at = format!("{p}.properties[{k}]");
                self.node(v, &at, false, uncorrelatable, child_card);
            }
        }
        if let Some(items) = s.get("items").filter(|i| i.is_object()) {
            let map_list = s.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
            let here = (!map_list && uncorrelatable.is_none()).then(|| p.to_owned());
            let next = uncorrelatable.or(here.as_deref());
            self.node(items, &format!("{p}.items"), false, next, child_card);
        }
        let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
            return;
        };
        let site = Site {
            s,
            self_ty: Ty::of_schema(s, resource).unwrap_or(Ty::Dyn),
            uncorrelatable,
            card,
        };
        for (i, r) in rules.iter().enumerate() {
            self.rule(&site, r, &format!("{p}.x-kubernetes-validations[{i}]"));
        }
    }

    /// One rule `r` at `at`: it compiles within the cost limit, its message expression
    /// too, and it uses `oldSelf` only where it may (and `optionalOldSelf` only with it).
    fn rule(&mut self, site: &Site<'_>, r: &Value, at: &str) {
        let rule = r.get("rule").and_then(Value::as_str).unwrap_or("");
        let optional = r.get("optionalOldSelf").and_then(Value::as_bool);
        let compiled = check(rule, &site.self_ty, optional == Some(true), Expect::Rule);
        let cost = match &compiled {
            Ok(expr) => {
                let times = site
                    .card
                    .unwrap_or_else(|| super::cost::unbounded_cardinality(site.s));
                super::cost::estimate(expr, site.s).saturating_mul(times)
            }
            Err(_) => 0,
        };
        if cost > super::cost::RULE_LIMIT {
            self.errors.push(FieldError::forbidden(
                format!("{at}.rule"),
                super::cost::over_budget("estimated rule cost", cost, super::cost::RULE_LIMIT),
            ));
        }
        self.total.observe(format!("{at}.rule"), cost);
        let expr = match compiled {
            Ok(expr) => expr,
            Err(detail) => {
                self.errors
                    .push(invalid_rule(r, format!("{at}.rule"), detail));
                return;
            }
        };
        self.message(site, r, at, optional == Some(true));
        let uses_old = super::node::mentions(&expr, "oldSelf");
        if let (Some(path), true) = (site.uncorrelatable, uses_old) {
            self.errors.push(FieldError::invalid_str(
                format!("{at}.rule"),
                rule,
                format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {path}"),
            ));
        } else if let (Some(o), false) = (optional, uses_old) {
            self.errors.push(FieldError::invalid(
                format!("{at}.optionalOldSelf"),
                &Value::Bool(o),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }

    /// The `messageExpression` of rule `r` at `at`, when it has one: it compiles to a
    /// string within the cost limit.
    fn message(&mut self, site: &Site<'_>, r: &Value, at: &str, optional: bool) {
        let message = r
            .get("messageExpression")
            .and_then(Value::as_str)
            .unwrap_or("");
        if message.trim().is_empty() {
            return;
        }
        match check(message, &site.self_ty, optional, Expect::Message) {
            Err(detail) => {
                self.errors
                    .push(invalid_rule(r, format!("{at}.messageExpression"), detail))
            }
            Ok(parsed) => {
                let cost = super::cost::estimate(&parsed, site.s);
                if cost > super::cost::RULE_LIMIT {
                    self.errors.push(FieldError::forbidden(
                        format!("{at}.messageExpression"),
                        super::cost::over_budget(
                            "estimated messageExpression cost",
                            cost,
                            super::cost::RULE_LIMIT,
                        ),
                    ));
                }
                self.total.observe(format!("{at}.messageExpression"), cost);
            }
        }
    }
}

/// `Invalid value` at `field` with the whole rule `r` shown as the server shows it.
fn invalid_rule(r: &Value, field: String, detail: String) -> FieldError {
    FieldError {
        kind: ErrorType::Invalid,
        field,
        value: rule_json(r),
        detail,
    }
}

/// A rule as the real server shows it in these errors: Go's internal struct, marshalled
/// without JSON tags (and with `<`, `>`, `&` escaped as Go escapes them).
fn rule_json(r: &Value) -> String {
    let s = |k: &str| go_json_string(r.get(k).and_then(Value::as_str).unwrap_or(""));
    let reason = match r.get("reason").and_then(Value::as_str) {
        Some(x) => go_json_string(x),
        None => "null".into(),
    };
    let optional = match r.get("optionalOldSelf").and_then(Value::as_bool) {
        Some(b) => b.to_string(),
        None => "null".into(),
    };
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{reason},\"FieldPath\":{},\"OptionalOldSelf\":{optional}}}",
        s("rule"),
        s("message"),
        s("messageExpression"),
        s("fieldPath"),
    )
}

/// A JSON string as Go's `encoding/json` writes it (HTML characters escaped).
fn go_json_string(s: &str) -> String {
    let json = Value::String(s.to_owned()).to_string();
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}
