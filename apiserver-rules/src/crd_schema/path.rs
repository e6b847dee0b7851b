//! Simple JSON paths (`.spec.a`, `.spec['a.b']`) into a structural schema, as the server
//! resolves selectable fields and CEL field paths.

use super::{Obj, sub};

/// Resolves a simple JSON path (`.spec.a`, `.spec['a.b']`) in a structural schema, as the
/// server resolves selectable fields and CEL field paths; `brackets` allows `['key']`.
pub fn resolve<'a>(root: &'a Obj, path: &str, brackets: bool) -> Result<&'a Obj, String> {
    let mut node = root;
    let mut rest = path;
    if rest.is_empty() {
        return Err("unexpected end of JSON path".into());
    }
    while !rest.is_empty() {
        let key: String;
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err("unexpected end of JSON path".into());
            }
            key = r[..end].to_owned();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            if !brackets {
                return Err("array notation is not allowed".into());
            }
            let Some(r) = r.strip_prefix('\'') else {
                let tok = r.split([']', '.']).next().unwrap_or("");
                return Err(format!("expected single quoted string but got {tok}"));
            };
            let Some(end) = r.find('\'') else {
                return Err(format!("invalid string literal: '{r}"));
            };
            key = r[..end].to_owned();
            let after = &r[end + 1..];
            let Some(after) = after.strip_prefix(']') else {
                let tok = after.chars().next().map(String::from).unwrap_or_default();
                return Err(format!("expected ] but got {tok}"));
            };
            rest = after;
        } else {
            let tok = rest.split(['.', '[']).next().unwrap_or(rest);
            return Err(format!("expected [ or . but got: {tok}"));
        }
        node = match sub(node, "properties").and_then(|p| sub(p, &key)) {
            Some(next) => next,
            None => match sub(node, "additionalProperties") {
                Some(next) => next,
                None => return Err("does not refer to a valid field".into()),
            },
        };
    }
    Ok(node)
}
