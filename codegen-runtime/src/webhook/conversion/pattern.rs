//! Strings drawn to match a schema's `pattern`: the regular expression read into its syntax
//! tree (`regex-syntax`, which the `regex` crate kube-apiserver's rules use is built on) and
//! walked, each class giving a printable character where it has one, each repetition a few
//! rounds, each alternation one branch; anchors and word boundaries give nothing.

use regex_syntax::hir::{Class, Hir, HirKind};

use super::draw::Rng;

/// Extra rounds of an unbounded repetition, at most.
const MORE: u32 = 3;

/// A string `pattern` matches, drawn with `rng`; `None` when the pattern does not parse.
pub(crate) fn matching(pattern: &str, rng: &mut Rng) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let mut out = String::new();
    walk(&hir, rng, &mut out);
    Some(out)
}

fn walk(hir: &Hir, rng: &mut Rng, out: &mut String) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.push_str(&String::from_utf8_lossy(&literal.0)),
        HirKind::Class(class) => {
            if let Some(c) = pick(class, rng) {
                out.push(c);
            }
        }
        HirKind::Repetition(rep) => {
            let most = rep.max.unwrap_or(rep.min.saturating_add(MORE));
            let most = most.min(rep.min.saturating_add(MORE));
            let n = rng.between(i128::from(rep.min), i128::from(most));
            for _ in 0..n {
                walk(&rep.sub, rng, out);
            }
        }
        HirKind::Capture(capture) => walk(&capture.sub, rng, out),
        HirKind::Concat(parts) => {
            for part in parts {
                walk(part, rng, out);
            }
        }
        HirKind::Alternation(branches) => {
            if !branches.is_empty() {
                walk(&branches[rng.index(branches.len())], rng, out);
            }
        }
    }
}

/// A character of `class`: a printable ASCII one where the class has some, else the first
/// of one of its ranges.
fn pick(class: &Class, rng: &mut Rng) -> Option<char> {
    let ranges: Vec<(char, char)> = match class {
        Class::Unicode(u) => u.iter().map(|r| (r.start(), r.end())).collect(),
        Class::Bytes(b) => b
            .iter()
            .map(|r| (char::from(r.start()), char::from(r.end())))
            .collect(),
    };
    let printable: Vec<(u32, u32)> = ranges
        .iter()
        .filter_map(|(lo, hi)| {
            let (lo, hi) = (u32::from(*lo).max(0x21), u32::from(*hi).min(0x7e));
            (lo <= hi).then_some((lo, hi))
        })
        .collect();
    if printable.is_empty() {
        let (lo, _) = ranges.get(rng.index(ranges.len().max(1)))?;
        return Some(*lo);
    }
    let (lo, hi) = printable[rng.index(printable.len())];
    let c = rng.between(i128::from(lo), i128::from(hi));
    char::from_u32(u32::try_from(c).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_strings_match_their_patterns() {
        let patterns = [
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$",
            r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
            r"^[A-Z]{3}$",
            r"^v[0-9]+((alpha|beta)[0-9]+)?$",
            r"^https?://\S+$",
            r"[^/]+",
            r"^\d{4}-\d{2}-\d{2}$",
        ];
        let mut rng = Rng::new(3);
        for pattern in patterns {
            let schema = serde_json::json!({"type": "string", "pattern": pattern});
            for _ in 0..50 {
                let s = matching(pattern, &mut rng).unwrap();
                let mut errors = Vec::new();
                apiserver_rules::schema::validate(
                    &schema,
                    &serde_json::json!(s),
                    "s",
                    "s",
                    &mut errors,
                );
                assert!(
                    errors.is_empty(),
                    "`{s}` does not match `{pattern}`: {errors:?}"
                );
            }
        }
        assert!(matching("(", &mut rng).is_none());
    }
}
