//! A CRD version's structural schema, reduced to what rule evaluation needs and with every
//! `x-kubernetes-validations` rule parsed once, when the CRD is installed.

use std::collections::BTreeMap;

use kube_cel::cel::IdedExpr;
use kube_cel::cel::common::ast::{EntryExpr, Expr};
use serde_json::Value;

/// How the items of a list are matched to the items of the old list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ListKind {
    /// Not correlated (atomic lists and sets).
    Uncorrelated,
    /// `x-kubernetes-list-type: map`: by the values of its keys.
    Map(Vec<String>),
}

/// One schema node.
#[derive(Debug)]
pub(crate) struct Node {
    /// `type` (`""` when absent: int-or-string, preserve-unknown-fields).
    pub ty: String,
    pub format: String,
    pub int_or_string: bool,
    pub preserve: bool,
    pub embedded: bool,
    /// The resource's root (rules see `apiVersion`, `kind`, `metadata.name`).
    pub root: bool,
    pub list: ListKind,
    pub props: BTreeMap<String, Node>,
    pub items: Option<Box<Node>>,
    pub values: Option<Box<Node>>,
    pub rules: Vec<Rule>,
    /// Whether this node or one below it has rules (other subtrees are not walked).
    pub has_rules: bool,
}

/// One `x-kubernetes-validations` entry.
#[derive(Debug)]
pub(crate) struct Rule {
    pub source: String,
    /// The parsed rule, or the parser's message.
    pub expr: Result<IdedExpr, String>,
    pub message: String,
    pub message_expr: Option<IdedExpr>,
    pub reason: Option<String>,
    /// `fieldPath` as a path below the node (`tier`, `a[b]`), empty when absent.
    pub field_path: String,
    pub uses_old_self: bool,
    pub optional_old_self: bool,
}

impl Node {
    pub(crate) fn build(schema: &Value, root: bool) -> Node {
        let str_of = |k: &str| {
            schema
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
        let list = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("map") => ListKind::Map(
                schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|keys| {
                        keys.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListKind::Uncorrelated,
        };
        let props: BTreeMap<String, Node> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter(|(k, _)| {
                        !(root && matches!(k.as_str(), "metadata" | "apiVersion" | "kind"))
                    })
                    .map(|(k, v)| (k.clone(), Node::build(v, false)))
                    .collect()
            })
            .unwrap_or_default();
        let items = schema
            .get("items")
            .filter(|i| i.is_object())
            .map(|i| Box::new(Node::build(i, false)));
        let values = schema
            .get("additionalProperties")
            .filter(|a| a.is_object())
            .map(|a| Box::new(Node::build(a, false)));
        let rules: Vec<Rule> = schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(|rules| rules.iter().map(Rule::parse).collect())
            .unwrap_or_default();
        let has_rules = !rules.is_empty()
            || props.values().any(|p| p.has_rules)
            || items.as_ref().is_some_and(|i| i.has_rules)
            || values.as_ref().is_some_and(|v| v.has_rules);
        Node {
            ty: str_of("type"),
            format: str_of("format"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve: flag("x-kubernetes-preserve-unknown-fields"),
            embedded: flag("x-kubernetes-embedded-resource"),
            root,
            list,
            props,
            items,
            values,
            rules,
            has_rules,
        }
    }
}

impl Rule {
    fn parse(rule: &Value) -> Rule {
        let get = |k: &str| rule.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let source = get("rule");
        let expr = super::parse(&source).map_err(|e| e.to_string());
        let uses_old_self = expr.as_ref().is_ok_and(|e| mentions(e, "oldSelf"));
        let message_expr = Some(get("messageExpression"))
            .filter(|m| !m.trim().is_empty())
            .and_then(|m| super::parse(&m).ok());
        Rule {
            source,
            expr,
            message: get("message"),
            message_expr,
            reason: rule
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            field_path: normalize_field_path(&get("fieldPath")),
            uses_old_self,
            optional_old_self: rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true),
        }
    }

    /// The rule as error messages name it: its message, or else its source, trimmed.
    pub(crate) fn error_string(&self) -> &str {
        if self.message.is_empty() {
            self.source.trim()
        } else {
            self.message.trim()
        }
    }
}

/// `.spec.a['b.c']` as Go's field paths print it below the rule's node: `spec.a[b.c]`.
fn normalize_field_path(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            out.push('[');
            out.push_str(&r[..end].replace("\\'", "'"));
            out.push(']');
            rest = r.get(end + 2..).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest = &r[end..];
        } else {
            break;
        }
    }
    out
}

/// Whether the expression names the identifier `name` (a variable, not a field).
pub(crate) fn mentions(e: &IdedExpr, name: &str) -> bool {
    match &e.expr {
        Expr::Ident(i) => i == name,
        Expr::Call(c) => {
            c.target.as_deref().is_some_and(|t| mentions(t, name))
                || c.args.iter().any(|a| mentions(a, name))
        }
        Expr::Select(s) => mentions(&s.operand, name),
        Expr::List(l) => l.elements.iter().any(|x| mentions(x, name)),
        Expr::Map(m) => m.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(me) => mentions(&me.key, name) || mentions(&me.value, name),
            EntryExpr::StructField(f) => mentions(&f.value, name),
        }),
        Expr::Struct(s) => s.entries.iter().any(|x| match &x.expr {
            EntryExpr::MapEntry(me) => mentions(&me.key, name) || mentions(&me.value, name),
            EntryExpr::StructField(f) => mentions(&f.value, name),
        }),
        Expr::Comprehension(c) => {
            mentions(&c.iter_range, name)
                || mentions(&c.accu_init, name)
                || mentions(&c.loop_cond, name)
                || mentions(&c.loop_step, name)
                || mentions(&c.result, name)
        }
        Expr::Literal(_) | Expr::Unspecified => false,
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_field_path;

    #[test]
    fn field_paths_print_as_go_prints_them() {
        assert_eq!(normalize_field_path(".tier"), "tier");
        assert_eq!(normalize_field_path(".a.b"), "a.b");
        assert_eq!(normalize_field_path(".a['b.c']"), "a[b.c]");
        assert_eq!(normalize_field_path(""), "");
    }
}
