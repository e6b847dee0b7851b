//! Checks kube-derive does not make: the JSON paths of `printcolumn`, `selectable` and
//! `scale` must name fields of the spec or status struct (after serde renames), and a
//! printcolumn's type must fit the field's Rust type.
//!
//! The derive sees the spec struct only, so it checks `.spec` paths; the CLI also finds the
//! status struct (and nested structs) in the same file, the same version directory, or
//! anywhere in the tree when the name is unique there.

use quote::ToTokens;
use syn::{ItemStruct, Type};

use crate::ast::{Structs, inner, json_fields, skipped_field_named};
use crate::attr::kube::{KubeAttrs, Spanned};
use crate::diag::{Ctxt, did_you_mean};
use crate::model::Resource;

fn type_name(ty: &Type) -> Option<String> {
    match inner(ty) {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Whether a printcolumn `type_` fits a Rust type (unknown types pass).
pub(crate) fn fits(column_type: &str, ty: &Type, structs: &Structs<'_>) -> bool {
    let Some(name) = type_name(ty) else {
        return true;
    };
    let ints = [
        "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "isize", "usize",
    ];
    match column_type {
        "integer" => ints.contains(&name.as_str()) || name == "IntOrString",
        "number" => {
            ints.contains(&name.as_str()) || name == "f32" || name == "f64" || name == "Quantity"
        }
        "boolean" => name == "bool",
        // A list, map or struct shown as a string is printed as its JSON, which CRDs in the
        // wild rely on (Gateway API's `.spec.hostnames`); a number or boolean is a mistake
        // for `integer`, `number` or `boolean`.
        "string" => {
            !(ints.contains(&name.as_str()) || ["f32", "f64", "bool"].contains(&name.as_str()))
        }
        "date" => {
            !(ints.contains(&name.as_str())
                || ["f32", "f64", "bool", "Vec", "BTreeMap", "HashMap"].contains(&name.as_str())
                || structs.get(&name).is_some())
        }
        _ => true,
    }
}

/// What a resource's JSON paths are resolved against.
pub(crate) struct Roots<'a, 's> {
    /// The struct with `#[kube]`: the spec, or with `no_spec` the root's properties.
    pub(crate) spec: &'a ItemStruct,
    /// The status struct, when found.
    pub(crate) status: Option<&'a ItemStruct>,
    /// Where named types are defined.
    pub(crate) structs: &'s Structs<'a>,
    /// `#[kube(no_spec)]`: `spec` holds the root's properties.
    pub(crate) no_spec: bool,
}

/// Resolves `.spec.a.b` against the spec struct (or `.status...` against the status
/// struct; with `no_spec`, `.a.b` against the struct of the root's properties); reports
/// the first segment that does not exist. Returns the leaf's type.
pub(crate) fn resolve<'a>(
    cx: &mut Ctxt,
    path: &Spanned<String>,
    roots: &Roots<'a, '_>,
    what: &str,
    kept: Option<&str>,
) -> Option<&'a Type> {
    // A path naming no field: an error, or, where kube-apiserver takes any path (printer
    // columns, scale), a warning ending with `kept`, which says what becomes of it.
    let missing = |cx: &mut Ctxt, message: String| match kept {
        Some(kept) => cx.warn(path.span, format!("{message}{kept}")),
        None => cx.error(path.span, message),
    };
    if kept == Some(KEPT_COLUMN)
        && let Some(problem) = jsonpath_problem(&path.value)
    {
        cx.error(
            path.span,
            format!(
                "{what} `{}` does not parse as a JSONPath: {problem} (kube-apiserver would store the CRD, then show neither this column nor any after it)",
                path.value
            ),
        );
        return None;
    }
    let text = path.value.trim_start_matches('.');
    // A JSONPath index or filter (`.status.conditions[?(@.type=="Ready")].status`): the
    // fields before it are checked; what it selects is not.
    let (text, indexed) = match text.find('[') {
        Some(i) => (&text[..i], true),
        None => (text, false),
    };
    let all: Vec<&str> = text.split('.').collect();
    let root = *all.first()?;
    let (mut current, rest, mut walked) = match root {
        "status" => (roots.status?, &all[1..], root.to_owned()),
        "metadata" | "" => return None,
        _ if roots.no_spec => (roots.spec, &all[..], String::new()),
        "spec" => (roots.spec, &all[1..], root.to_owned()),
        other => {
            missing(
                cx,
                format!(
                    "{what} `{}` names `.{other}`, not a field below `.spec`, `.status` or `.metadata`",
                    path.value
                ),
            );
            return None;
        }
    };
    let mut ty = None;
    for (i, seg) in rest.iter().copied().enumerate() {
        let fields = json_fields(current)?;
        let at = if walked.is_empty() {
            "the object".to_owned()
        } else {
            format!("`.{walked}`")
        };
        let Some((_, field_ty)) = fields.iter().find(|(n, _)| n == seg) else {
            if skipped_field_named(current, seg) {
                // Named, but never in the JSON: a mistake, whatever the server accepts.
                cx.error(
                    path.span,
                    format!(
                        "{what} `{}`: `{seg}` of {at} is `#[serde(skip)]`, so never in the object",
                        path.value
                    ),
                );
                return None;
            }
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            let hint = did_you_mean(seg, names.iter().copied());
            let hint = if hint.is_empty() {
                format!("; `{}` has {}", current.ident, list(&names))
            } else {
                hint
            };
            missing(
                cx,
                format!(
                    "{what} `{}`: {at} has no field `{seg}` (serde names){hint}",
                    path.value
                ),
            );
            return None;
        };
        walked = if walked.is_empty() {
            seg.to_owned()
        } else {
            format!("{walked}.{seg}")
        };
        ty = (!indexed).then_some(*field_ty);
        match type_name(field_ty).and_then(|n| roots.structs.get(&n)) {
            Some(next) => current = next,
            // A leaf, or a type defined elsewhere: deeper segments cannot be checked.
            None if i + 1 < rest.len() => return None,
            None => {}
        }
    }
    ty
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "no fields".to_owned()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a warning about a scale path adds: the subresource is kept.
pub(crate) const KEPT_SCALE: &str = " (kube-apiserver accepts any path here: the scale subresource is kept, and reads or writes nothing where the path finds nothing)";

/// What a warning about a printer column's path adds: the column is kept.
pub(crate) const KEPT_COLUMN: &str = " (kube-apiserver accepts any path here: the column is kept, empty where the path finds nothing)";

/// Checks the JSON paths of `kube` against `spec` and, when found, its status struct.
pub(crate) fn check_paths(
    cx: &mut Ctxt,
    kube: &KubeAttrs,
    spec: &ItemStruct,
    structs: &Structs<'_>,
) {
    let status = kube
        .status
        .as_ref()
        .and_then(|s| structs.get(s.value.rsplit("::").next().unwrap_or(&s.value)));
    let roots = Roots {
        spec,
        status,
        structs,
        no_spec: kube.no_spec.is_some(),
    };
    for column in &kube.printcolumns {
        let Some(path) = &column.json_path else {
            continue;
        };
        let ty = resolve(cx, path, &roots, "printcolumn json_path", Some(KEPT_COLUMN));
        if let (Some(ty), Some(col_type)) = (ty, &column.type_)
            && !fits(&col_type.value, ty, structs)
        {
            // kube-apiserver accepts any type for any path (CRDs in the wild show a count as
            // a string): a warning, and the column is kept as written.
            cx.warn(
                col_type.span,
                format!(
                    "printcolumn type `{}` does not fit `{}` (`{}`); use {} (kube-apiserver accepts it as written)",
                    col_type.value,
                    path.value,
                    inner(ty).to_token_stream().to_string().replace(' ', ""),
                    suggested_type(ty, structs)
                ),
            );
        }
    }
    for path in &kube.selectable {
        resolve(cx, path, &roots, "selectable", None);
    }
    if let Some(scale) = &kube.scale {
        for (path, what) in [
            (&scale.spec_replicas_path, "scale spec_replicas_path"),
            (&scale.status_replicas_path, "scale status_replicas_path"),
            (&scale.label_selector_path, "scale label_selector_path"),
        ] {
            if let Some(path) = path {
                resolve(cx, path, &roots, what, Some(KEPT_SCALE));
            }
        }
    }
}

fn suggested_type(ty: &Type, structs: &Structs<'_>) -> String {
    ["integer", "number", "boolean", "string"]
        .into_iter()
        .find(|t| fits(t, ty, structs))
        .map_or_else(|| "a type that fits".to_owned(), |t| format!("`{t}`"))
}

/// Runs the path checks of a resource whose spec struct is `spec`.
pub(crate) fn run(cx: &mut Ctxt, resource: &Resource, spec: &ItemStruct, structs: &Structs<'_>) {
    check_paths(cx, &resource.kube, spec, structs);
}

/// Why kube-apiserver's JSONPath parser (client-go's `util/jsonpath`, which the printer
/// columns of a CRD go through as `{<path>}`) refuses `path`, if it does. kube-apiserver
/// stores such a column, then serves no column from it onwards, so it is an error here.
/// Follows that parser's grammar: fields (`.a`, `..a`), indexes and slices (`[0]`, `[1:3]`,
/// `[*]`), keys (`['a.b']`), unions (`[0,2]`), filters (`[?(@.type=="Ready")]`).
pub(crate) fn jsonpath_problem(path: &str) -> Option<String> {
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i..].starts_with(&['[', '?', '(']) {
            match filter_len(&chars[i..]) {
                Ok(len) => i += len,
                Err(problem) => return Some(problem),
            }
            continue;
        }
        match chars[i] {
            ' ' | '@' | '$' => i += 1,
            '.' => {
                i += 1;
                while i < chars.len() && !is_terminator(chars[i]) {
                    i += 1;
                }
            }
            '[' => {
                let Some(close) = chars[i..].iter().position(|c| *c == ']') else {
                    return Some("unterminated array (`[` without `]`)".to_owned());
                };
                let inside: String = chars[i + 1..i + close].iter().collect();
                if let Some(problem) = index_problem(&inside) {
                    return Some(problem);
                }
                i += close + 1;
            }
            q @ ('"' | '\'') => match chars[i + 1..].iter().position(|c| *c == q) {
                Some(end) => i += end + 2,
                None => return Some(format!("unclosed quote `{q}`")),
            },
            c if c.is_alphanumeric() || c == '_' || c == '+' || c == '-' => {
                while i < chars.len() && !is_terminator(chars[i]) {
                    i += 1;
                }
            }
            c => return Some(format!("unrecognized character `{c}`")),
        }
    }
    None
}

/// The length of the filter `[?(...)]` at the start of `chars` (quotes and parentheses
/// balanced), or why it has none.
fn filter_len(chars: &[char]) -> Result<usize, String> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in chars.iter().enumerate().skip(2) {
        match (quote, c) {
            (Some(q), c) if *c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(*c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, ']') if depth == 0 => return Ok(i + 1),
            _ => {}
        }
    }
    Err("unterminated filter (`[?(` without `)]`)".to_owned())
}

/// Why the text between `[` and `]` is not an index kube's parser takes.
fn index_problem(inside: &str) -> Option<String> {
    if inside == "*" {
        return None;
    }
    let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
    // A key (`'a.b'`), or an index or slice (`0`, `-1`, `1:3`, `::2`, and empty).
    let fits = |p: &str| {
        let key = p.len() >= 2
            && p.starts_with('\'')
            && p.ends_with('\'')
            && !p[1..p.len() - 1].contains('\'');
        let slice = p.split(':').count() <= 3
            && p.split(':').all(|n| {
                let n = n.strip_prefix('-').unwrap_or(n);
                n.chars().all(|c| c.is_ascii_digit())
            });
        key || slice
    };
    parts
        .iter()
        .find(|p| !fits(p))
        .map(|p| format!("invalid array index `{p}`"))
}

/// Where a field name ends in kube's parser.
fn is_terminator(c: char) -> bool {
    matches!(c, ' ' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
}

#[cfg(test)]
mod tests {
    use super::jsonpath_problem;

    #[test]
    fn jsonpaths_kube_parses_pass_and_the_rest_say_why() {
        for ok in [
            ".spec.replicas",
            ".status.conditions[?(@.type==\"Ready\")].status",
            ".metadata.labels['app.kubernetes.io/name']",
            ".spec.items[0].name",
            ".spec.items[-1:]",
            ".spec.items[*].name",
            ".spec.items[0,2]",
            "..name",
            ".metadata.creationTimestamp",
        ] {
            assert_eq!(jsonpath_problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            (".spec.version[", "unterminated array"),
            (".spec.items[a]", "invalid array index `a`"),
            (".spec.items[?(@.a==1]", "unterminated filter"),
            (".spec.a 'b", "unclosed quote"),
            (".spec.a (b)", "unrecognized character `(`"),
        ] {
            let problem = jsonpath_problem(bad).unwrap_or_default();
            assert!(problem.contains(why), "{bad}: {problem}");
        }
    }
}
