//! Label and field selectors, parsed by the real server's grammar and answered with its
//! error messages (every message here is a `400 BadRequest` as it is).

use serde_json::Value;

use crate::resource::FieldLabels;
use crate::rules::field::{FieldError, aggregate};
use crate::rules::names;

/// What a requirement asks of a label.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
}

/// A parsed label selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq)]
enum Token {
    End,
    Ident(String),
    Comma,
    OpenPar,
    ClosePar,
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    In,
    NotIn,
    Error(String),
}

impl Token {
    /// The literal the real parser prints in its messages.
    fn literal(&self) -> String {
        match self {
            Token::End => String::new(),
            Token::Ident(s) | Token::Error(s) => s.clone(),
            Token::Comma => ",".into(),
            Token::OpenPar => "(".into(),
            Token::ClosePar => ")".into(),
            Token::Not => "!".into(),
            Token::Eq => "=".into(),
            Token::DoubleEq => "==".into(),
            Token::NotEq => "!=".into(),
            Token::Gt => ">".into(),
            Token::Lt => "<".into(),
            Token::In => "in".into(),
            Token::NotIn => "notin".into(),
        }
    }

    /// In value position `in` and `notin` are plain identifiers.
    fn into_value(self) -> Token {
        match self {
            Token::In => Token::Ident("in".into()),
            Token::NotIn => Token::Ident("notin".into()),
            other => other,
        }
    }
}

fn special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn symbol(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosePar,
        "," => Token::Comma,
        "!" => Token::Not,
        "==" => Token::DoubleEq,
        "=" => Token::Eq,
        ">" => Token::Gt,
        "<" => Token::Lt,
        "!=" => Token::NotEq,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn lex(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
        }
        if i >= b.len() {
            out.push(Token::End);
            return out;
        }
        if special(b[i]) {
            // The longest run of symbols that still names an operator.
            let start = i;
            let mut last: Option<(Token, usize)> = None;
            while i < b.len() && special(b[i]) {
                match symbol(&text[start..=i]) {
                    Some(t) => last = Some((t, i + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                i += 1;
            }
            match last {
                Some((t, end)) => {
                    i = end;
                    out.push(t);
                }
                None => out.push(Token::Error(format!(
                    "error expected: keyword found '{}'",
                    &text[start..i]
                ))),
            }
        } else {
            let start = i;
            while i < b.len() && !special(b[i]) && !matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
                i += 1;
            }
            let word = &text[start..i];
            out.push(match word {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Ident(word.to_owned()),
            });
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek_value(&self) -> Token {
        self.tokens[self.pos.min(self.tokens.len() - 1)]
            .clone()
            .into_value()
    }

    fn next_value(&mut self) -> Token {
        let t = self.peek_value();
        self.pos += 1;
        t
    }

    fn next_operator(&mut self) -> Token {
        let t = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        self.pos += 1;
        t
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut out = Vec::new();
        loop {
            match self.peek_value() {
                Token::Ident(_) | Token::Not => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    out.push(r);
                    match self.next_value() {
                        Token::End => return Ok(out),
                        Token::Comma => {
                            let t = self.peek_value();
                            if !matches!(t, Token::Ident(_) | Token::Not) {
                                return Err(format!(
                                    "found '{}', expected: identifier after ','",
                                    t.literal()
                                ));
                            }
                        }
                        t => {
                            return Err(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                t.literal()
                            ));
                        }
                    }
                }
                Token::End => return Ok(out),
                t => {
                    return Err(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        t.literal()
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let mut tok = self.next_value();
        let negated = tok == Token::Not;
        if negated {
            tok = self.next_value();
        }
        let Token::Ident(key) = tok else {
            return Err(format!("found '{}', expected: identifier", tok.literal()));
        };
        let key_errors = names::qualified_name(&key);
        if !key_errors.is_empty() {
            return Err(FieldError::invalid_str("<nil>", &key, key_errors.join("; ")).to_string());
        }
        if matches!(self.peek_value(), Token::End | Token::Comma) || negated {
            let op = if negated {
                Op::DoesNotExist
            } else {
                Op::Exists
            };
            return Ok(Requirement { key, op });
        }
        let op = self.next_operator();
        let values = match op {
            Token::In | Token::NotIn => self.set()?,
            Token::Eq | Token::DoubleEq | Token::NotEq | Token::Gt | Token::Lt => {
                vec![self.exact()?]
            }
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.literal()
                ));
            }
        };
        let mut errors = Vec::new();
        let number = |v: &str| v.parse::<i64>().ok();
        if matches!(op, Token::Gt | Token::Lt) && number(&values[0]).is_none() {
            errors.push(FieldError::invalid_str(
                "values[0]",
                &values[0],
                "for 'Gt', 'Lt' operators, the value must be an integer",
            ));
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = names::label_value(v);
            if !msgs.is_empty() {
                errors.push(FieldError::invalid_str(
                    format!("values[{i}][{key}]"),
                    v,
                    msgs.join("; ").replace("bytes", "characters"),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(aggregate(&errors));
        }
        let op = match op {
            Token::In => Op::In(values),
            Token::NotIn => Op::NotIn(values),
            Token::NotEq => Op::NotIn(values),
            Token::Gt => Op::Gt(number(&values[0]).unwrap_or_default()),
            Token::Lt => Op::Lt(number(&values[0]).unwrap_or_default()),
            _ => Op::In(values),
        };
        Ok(Requirement { key, op })
    }

    /// `(a, b, c)`: empty entries are the empty string, and `()` is `("")`.
    fn set(&mut self) -> Result<Vec<String>, String> {
        let t = self.next_value();
        if t != Token::OpenPar {
            return Err(format!("found '{}' expected: '('", t.literal()));
        }
        let first = self.peek_value();
        match first {
            Token::ClosePar => {
                self.pos += 1;
                Ok(vec![String::new()])
            }
            Token::Ident(_) | Token::Comma => {
                let mut values: Vec<String> = Vec::new();
                let add = |v: String, values: &mut Vec<String>| {
                    if !values.contains(&v) {
                        values.push(v);
                    }
                };
                loop {
                    match self.next_value() {
                        Token::Ident(v) => {
                            add(v, &mut values);
                            match self.peek_value() {
                                Token::Comma => {}
                                Token::ClosePar => break,
                                t => {
                                    return Err(format!(
                                        "found '{}', expected: ',' or ')'",
                                        t.literal()
                                    ));
                                }
                            }
                        }
                        Token::Comma => {
                            if values.is_empty() {
                                add(String::new(), &mut values);
                            }
                            match self.peek_value() {
                                Token::ClosePar => {
                                    add(String::new(), &mut values);
                                    break;
                                }
                                Token::Comma => add(String::new(), &mut values),
                                _ => {}
                            }
                        }
                        t => {
                            return Err(format!(
                                "found '{}', expected: ',', or identifier",
                                t.literal()
                            ));
                        }
                    }
                }
                if self.next_value() != Token::ClosePar {
                    return Err(format!("found '{}', expected: ')'", first.literal()));
                }
                values.sort();
                Ok(values)
            }
            t => Err(format!(
                "found '{}', expected: ',', ')' or identifier",
                t.literal()
            )),
        }
    }

    fn exact(&mut self) -> Result<String, String> {
        if matches!(self.peek_value(), Token::End | Token::Comma) {
            return Ok(String::new());
        }
        match self.next_value() {
            Token::Ident(v) => Ok(v),
            t => Err(format!("found '{}', expected: identifier", t.literal())),
        }
    }
}

impl LabelSelector {
    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`; the error is the real server's
    /// message.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parser = Parser {
            tokens: lex(text),
            pos: 0,
        };
        parser.parse().map(Self)
    }

    /// Whether `labels` (the object's `metadata.labels`) satisfy the selector.
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match &r.op {
            Op::In(vs) => get(&r.key).is_some_and(|x| vs.iter().any(|v| v == x)),
            Op::NotIn(vs) => get(&r.key).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Op::Exists => get(&r.key).is_some(),
            Op::DoesNotExist => get(&r.key).is_none(),
            Op::Gt(n) => get(&r.key)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            Op::Lt(n) => get(&r.key)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// A parsed field selector: `metadata.name=x,status.phase!=Running`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

fn split_terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            c => out.push(c),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

impl FieldSelector {
    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses the selector and checks each field against those the kind supports
    /// (`supported`, besides `metadata.name` and, for namespaced kinds, `metadata.namespace`).
    pub fn parse(
        text: &str,
        supported: &[String],
        style: FieldLabels,
        kind: &str,
    ) -> Result<Self, String> {
        let mut terms = if text.is_empty() {
            Vec::new()
        } else {
            split_terms(text)
        };
        terms.sort_unstable();
        let mut out = Vec::new();
        for term in terms.into_iter().filter(|t| !t.is_empty()) {
            let split = term.char_indices().find_map(|(i, _)| {
                ["!=", "==", "="]
                    .iter()
                    .find(|op| term[i..].starts_with(**op))
                    .map(|op| (&term[..i], *op, &term[i + op.len()..]))
            });
            let Some((field, op, value)) = split else {
                return Err(format!(
                    "invalid selector: '{text}'; can't understand '{term}'"
                ));
            };
            let value = unescape(value)?;
            let known = matches!(field, "metadata.name" | "metadata.namespace")
                || supported.iter().any(|s| s == field);
            if !known {
                return Err(match style {
                    FieldLabels::MetaOnly => format!(
                        "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                    ),
                    FieldLabels::Listed => format!("field label not supported: {field}"),
                    FieldLabels::Job => format!("field label \"{field}\" not supported for {kind}"),
                });
            }
            out.push((field.to_owned(), op != "!=", value));
        }
        Ok(Self(out))
    }

    /// A selector of one object by name.
    pub fn name(name: &str) -> Self {
        Self(vec![("metadata.name".into(), true, name.into())])
    }

    /// Whether the object satisfies the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = field
                .split('.')
                .try_fold(obj, |v, k| v.get(k))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                });
            let actual = actual.unwrap_or_default();
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_operators() {
        let labels = json!({"app": "web", "tier": "front", "n": "5"});
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&labels));
        assert!(m("app=web") && m("app==web") && m("app!=db") && m("app"));
        assert!(m("!missing") && m("app in (web, db)") && m("tier notin (back)"));
        assert!(m("app=web,tier in (front)") && m("") && m("n>4") && m("n<6"));
        assert!(!m("app=db") && !m("!app") && !m("app notin (web)") && !m("missing in (x)"));
        assert!(
            LabelSelector::parse("in in (in, notin)").is_ok(),
            "keywords are values inside a set"
        );
        assert!(LabelSelector::parse("app notin (x)").unwrap().matches(None));
        assert!(
            LabelSelector::parse("a in ()").is_ok(),
            "the real server accepts it"
        );
        assert!(LabelSelector::parse("a=").is_ok());
    }

    #[test]
    fn label_errors_are_the_real_servers() {
        let e = |s: &str| LabelSelector::parse(s).unwrap_err();
        assert_eq!(
            e("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(e("a,"), "found '', expected: identifier after ','");
        assert_eq!(
            e(",a"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            e("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            e("a in (b c)"),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
        assert_eq!(e("x=y z"), "found 'z', expected: ',' or 'end of string'");
        assert!(e("a/b/c").starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key"
        ));
        assert!(e("a=b/c").starts_with(
            "unable to parse requirement: values[0][a]: Invalid value: \"b/c\": a valid label must be"
        ));
        assert_eq!(
            e("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
    }

    #[test]
    fn field_selectors_check_supported_fields() {
        let pod =
            json!({"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Running"}});
        let fields = vec!["status.phase".to_owned()];
        let parse = |s: &str| FieldSelector::parse(s, &fields, FieldLabels::Listed, "Pod");
        assert!(
            parse("metadata.name=p,status.phase!=Pending")
                .unwrap()
                .matches(&pod)
        );
        assert!(!parse("metadata.namespace=other").unwrap().matches(&pod));
        assert_eq!(
            parse("spec.bogus=1").unwrap_err(),
            "field label not supported: spec.bogus"
        );
        assert_eq!(
            FieldSelector::parse("data.k=v", &[], FieldLabels::MetaOnly, "ConfigMap").unwrap_err(),
            "\"data.k\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(
            parse("a=b=c").unwrap_err(),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            parse("abc").unwrap_err(),
            "invalid selector: 'abc'; can't understand 'abc'"
        );
    }
}
