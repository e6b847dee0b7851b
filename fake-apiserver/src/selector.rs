//! Label and field selectors, parsed as the real server parses them.

use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part)?);
        }
        Ok(Self(reqs))
    }

    /// Whether `labels` (the object's `metadata.labels`) satisfy the selector.
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// Splits at commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn valid_key(k: &str) -> Result<String, String> {
    let ok = !k.is_empty()
        && k.len() <= 316
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(k.to_owned())
    } else {
        Err(format!("invalid label key \"{k}\""))
    }
}

fn parse_set(rest: &str) -> Result<Vec<String>, String> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("expected a parenthesised set, found \"{rest}\""))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect())
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(valid_key(key.trim())?));
    }
    if let Some((k, v)) = part.split_once("!=") {
        return Ok(Requirement::NotEquals(
            valid_key(k.trim())?,
            v.trim().to_owned(),
        ));
    }
    if let Some((k, v)) = part.split_once("==") {
        return Ok(Requirement::Equals(
            valid_key(k.trim())?,
            v.trim().to_owned(),
        ));
    }
    if let Some((k, v)) = part.split_once('=') {
        return Ok(Requirement::Equals(
            valid_key(k.trim())?,
            v.trim().to_owned(),
        ));
    }
    let words: Vec<&str> = part.splitn(3, char::is_whitespace).collect();
    match words.as_slice() {
        [k] => Ok(Requirement::Exists(valid_key(k)?)),
        [k, op, rest] if *op == "in" => Ok(Requirement::In(valid_key(k)?, parse_set(rest)?)),
        [k, op, rest] if *op == "notin" => Ok(Requirement::NotIn(valid_key(k)?, parse_set(rest)?)),
        _ => {
            // `key in(x)` without a space before the parenthesis.
            for (op, notin) in [(" notin", true), (" in", false)] {
                if let Some(i) = part.find(op) {
                    let key = valid_key(part[..i].trim())?;
                    let set = parse_set(&part[i + op.len()..])?;
                    return Ok(if notin {
                        Requirement::NotIn(key, set)
                    } else {
                        Requirement::In(key, set)
                    });
                }
            }
            Err(format!("unable to parse requirement: \"{part}\""))
        }
    }
}

/// A parsed field selector: `metadata.name=x,status.phase!=Running`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the selector and checks each field against those the kind supports.
    pub fn parse(text: &str, supported: &[String]) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            if !matches!(field, "metadata.name" | "metadata.namespace")
                && !supported.iter().any(|s| s == field)
            {
                return Err(format!("field label not supported: {field}"));
            }
            out.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(out))
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
        let labels = json!({"app": "web", "tier": "front"});
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&labels));
        assert!(m("app=web") && m("app==web") && m("app!=db") && m("app"));
        assert!(m("!missing") && m("app in (web, db)") && m("tier notin (back)"));
        assert!(m("app=web,tier in (front)") && m(""));
        assert!(!m("app=db") && !m("!app") && !m("app notin (web)") && !m("missing in (x)"));
        assert!(LabelSelector::parse("app notin (x)").unwrap().matches(None));
        assert!(LabelSelector::parse("a b c").is_err());
    }

    #[test]
    fn field_selectors_check_supported_fields() {
        let pod =
            json!({"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Running"}});
        let fields = vec!["status.phase".to_owned()];
        assert!(
            FieldSelector::parse("metadata.name=p,status.phase!=Pending", &fields)
                .unwrap()
                .matches(&pod)
        );
        assert!(
            !FieldSelector::parse("metadata.namespace=other", &fields)
                .unwrap()
                .matches(&pod)
        );
        assert_eq!(
            FieldSelector::parse("spec.bogus=1", &fields).unwrap_err(),
            "field label not supported: spec.bogus"
        );
    }
}
