//! CRD markers in doc comments: `+kubebuilder:...` plus the Kubernetes-wide `+optional`,
//! `+required`, `+listType`, `+listMapKey`, `+mapType`, `+structType` and `+nullable`, and
//! the spellings controller-gen reads as some of them (`+k8s:optional`, `+default=`, ...,
//! see [`ALIASES`]) and `+k8s:immutable`.
//!
//! This module only splits a marker into its name, value and `key=value` arguments, with a
//! location for each; [`crate::schema`] decides what they mean for the type they sit on.
//! Unknown `+kubebuilder:` and `+kube-codegen:` names are errors with a suggestion, so a
//! typo never passes silently; markers of other families (`+genclient`, `+groupName`, the
//! other `+k8s:` tags) are left alone.

use syn::Attribute;

use crate::attr::genclient::for_each_marker;
use crate::diag::{Ctxt, Loc, suggest};

/// Where a marker may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// On a struct field.
    Field,
    /// On a type (the spec struct for resource markers).
    Type,
    /// On a field or a type.
    Both,
}

/// The markers we interpret: name (without the `+`), where it goes, and whether it takes a
/// value after `=` (`Some(true)`), `key=value` arguments after `:` (`Some(false)`), or
/// nothing (`None`).
pub(crate) const KNOWN: &[(&str, Place, Option<bool>)] = &[
    ("kubebuilder:validation:Minimum", Place::Field, Some(true)),
    ("kubebuilder:validation:Maximum", Place::Field, Some(true)),
    (
        "kubebuilder:validation:ExclusiveMinimum",
        Place::Field,
        Some(true),
    ),
    (
        "kubebuilder:validation:ExclusiveMaximum",
        Place::Field,
        Some(true),
    ),
    (
        "kubebuilder:validation:MultipleOf",
        Place::Field,
        Some(true),
    ),
    ("kubebuilder:validation:MinLength", Place::Field, Some(true)),
    ("kubebuilder:validation:MaxLength", Place::Field, Some(true)),
    ("kubebuilder:validation:Pattern", Place::Field, Some(true)),
    ("kubebuilder:validation:MinItems", Place::Field, Some(true)),
    ("kubebuilder:validation:MaxItems", Place::Field, Some(true)),
    (
        "kubebuilder:validation:UniqueItems",
        Place::Field,
        Some(true),
    ),
    (
        "kubebuilder:validation:MinProperties",
        Place::Both,
        Some(true),
    ),
    (
        "kubebuilder:validation:MaxProperties",
        Place::Both,
        Some(true),
    ),
    ("kubebuilder:validation:Enum", Place::Field, Some(true)),
    ("kubebuilder:validation:Format", Place::Field, Some(true)),
    (
        "kubebuilder:validation:XValidation",
        Place::Both,
        Some(false),
    ),
    (
        "kubebuilder:validation:EmbeddedResource",
        Place::Field,
        None,
    ),
    ("kubebuilder:validation:Optional", Place::Field, None),
    ("kubebuilder:validation:Required", Place::Field, None),
    ("kubebuilder:validation:Type", Place::Both, Some(true)),
    ("kubebuilder:validation:Schemaless", Place::Field, None),
    (
        "kubebuilder:validation:ExactlyOneOf",
        Place::Both,
        Some(true),
    ),
    (
        "kubebuilder:validation:AtMostOneOf",
        Place::Both,
        Some(true),
    ),
    (
        "kubebuilder:validation:AtLeastOneOf",
        Place::Both,
        Some(true),
    ),
    ("kubebuilder:validation:XIntOrString", Place::Both, None),
    (
        "kubebuilder:validation:XPreserveUnknownFields",
        Place::Both,
        None,
    ),
    (
        "kubebuilder:validation:XEmbeddedResource",
        Place::Field,
        None,
    ),
    ("kubebuilder:default", Place::Field, Some(true)),
    ("kubebuilder:title", Place::Both, Some(true)),
    ("kubebuilder:example", Place::Field, Some(true)),
    ("kubebuilder:externalDocs", Place::Both, Some(false)),
    (
        "kubebuilder:pruning:PreserveUnknownFields",
        Place::Both,
        None,
    ),
    ("kubebuilder:printcolumn", Place::Type, Some(false)),
    ("kubebuilder:resource", Place::Type, Some(false)),
    ("kubebuilder:subresource:status", Place::Type, None),
    ("kubebuilder:subresource:scale", Place::Type, Some(false)),
    ("kubebuilder:selectablefield", Place::Type, Some(false)),
    ("kubebuilder:storageversion", Place::Type, None),
    // Ours: the kind's conversion webhook wiring is generated (`conversion.rs`).
    ("kube-codegen:conversion", Place::Type, None),
    // Ours: a kind someone else owns (written by `import`): clients, listers, informers and
    // apply configurations, but no CRD, docs, lint or conversion of ours.
    ("kube-codegen:consumed", Place::Type, None),
    // Ours: a `status` without the status subresource, a `listKind`, and root properties
    // kube writes itself (`metadata`, ...) in the root's `required`, as a CRD may say them.
    ("kube-codegen:noStatusSubresource", Place::Type, None),
    ("kube-codegen:listKind", Place::Type, Some(true)),
    ("kube-codegen:rootRequired", Place::Type, Some(true)),
    // Ours: a breaking change `kube-codegen compat` reports here is intended; the value
    // says why (read by the CLI's compat gate, not by the schema).
    (ACKNOWLEDGE, Place::Both, Some(true)),
    // Ours: the lint (`kube-codegen lint`, the derives' `+kube-codegen:lint` warnings) reads
    // these; `ignore=<rule> <reason>` silences a rule at a field or struct.
    ("kube-codegen:lint", Place::Type, None),
    ("kube-codegen:lint:ignore", Place::Both, Some(true)),
    ("kubebuilder:skipversion", Place::Type, None),
    ("kubebuilder:unservedversion", Place::Type, None),
    ("kubebuilder:deprecatedversion", Place::Type, Some(false)),
    ("kubebuilder:metadata:annotations", Place::Type, Some(true)),
    ("kubebuilder:metadata:labels", Place::Type, Some(true)),
    ("kubebuilder:ac:generate", Place::Type, Some(true)),
    // controller-gen's: a transition rule, the field cannot change once set.
    ("k8s:immutable", Place::Field, None),
    ("optional", Place::Field, None),
    ("required", Place::Field, None),
    ("nullable", Place::Both, Some(true)),
    ("listType", Place::Field, Some(true)),
    ("listMapKey", Place::Field, Some(true)),
    ("mapType", Place::Both, Some(true)),
    ("structType", Place::Both, Some(true)),
];

/// Other spellings controller-gen reads as the same marker: Kubernetes' declarative
/// validation tags (`+k8s:optional`) and `+default=<JSON>`. A marker written so is read as
/// the one it names (messages name that one).
const ALIASES: &[(&str, &str)] = &[
    ("k8s:optional", "optional"),
    ("k8s:required", "required"),
    ("k8s:listType", "listType"),
    ("k8s:listMapKey", "listMapKey"),
    ("default", "kubebuilder:default"),
];

/// `body` with an alias's name replaced by the marker it names, and whether it was one.
fn unaliased(body: String) -> (String, bool) {
    for (alias, name) in ALIASES {
        if let Some(rest) = body.strip_prefix(alias)
            && (rest.is_empty() || rest.starts_with([':', '=']))
        {
            return (format!("{name}{rest}"), true);
        }
    }
    (body, false)
}

/// Whether `m`, written in an alias's spelling, says what a marker of `all` written in the
/// canonical one says (`+k8s:optional` next to `+optional`), or is overruled by it
/// (`+default=` next to `+kubebuilder:default`, which wins in controller-gen).
fn said_otherwise(m: &Marker, all: &[Marker]) -> bool {
    m.alias
        && all.iter().any(|n| {
            !n.alias
                && n.name == m.name
                && n.steps == m.steps
                && (n.value == m.value || m.name == "kubebuilder:default")
        })
}

/// `+kube-codegen:compat:acknowledge="<reason>"`: on a field (or a struct), the breaking
/// changes `kube-codegen compat` reports there are acknowledged; the reason is required.
pub(crate) const ACKNOWLEDGE: &str = "kube-codegen:compat:acknowledge";

/// A marker value without the double quotes around it (`"a b"` is `a b`), trimmed.
pub(crate) fn unquoted(value: &str) -> String {
    let v = value.trim();
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(v)
        .trim()
        .to_owned()
}

/// controller-gen markers that describe Go code generation, or that another command reads
/// (`kube-codegen rbac`); accepted and ignored here.
pub(crate) const IGNORED: &[&str] = &[
    "kubebuilder:object:root",
    "kubebuilder:object:generate",
    "kubebuilder:skip",
    "kubebuilder:rbac",
];

/// controller-gen markers kube-codegen does not implement: an error that says so, rather
/// than a guess at a similar name.
pub(crate) const UNSUPPORTED: &[&str] = &["kubebuilder:ac:output"];

/// The validation markers that also exist as `+kubebuilder:validation:items:<Name>`, for the
/// items of a list.
pub(crate) fn has_items_form(name: &str) -> bool {
    name.starts_with("kubebuilder:validation:")
        && !matches!(
            name,
            "kubebuilder:validation:Optional"
                | "kubebuilder:validation:Required"
                | "kubebuilder:validation:EmbeddedResource"
                | "kubebuilder:validation:XEmbeddedResource"
                | "kubebuilder:validation:ExactlyOneOf"
                | "kubebuilder:validation:AtMostOneOf"
                | "kubebuilder:validation:AtLeastOneOf"
        )
}

/// One `key=value` argument of a marker.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    /// The key as written.
    pub(crate) key: String,
    /// The value, unquoted.
    pub(crate) value: String,
    /// Where the key starts and the value ends.
    pub(crate) loc: Loc,
}

/// One step from a value to the values inside it, for validation markers that apply there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The items of a list (`items:`).
    Items,
    /// The values of a map (`values:`).
    Values,
}

/// The prefix of kube-codegen's validation markers for the values inside a field:
/// `+kube-codegen:validation:<steps>:<Name>`, each step `items:` or `values:`
/// (`+kube-codegen:validation:values:Pattern=...` on a map's values,
/// `+kube-codegen:validation:items:items:MaxLength=...` on a nested list's items).
/// controller-gen has only `+kubebuilder:validation:items:<Name>`, one list level deep.
pub(crate) const ELEMENTS_PREFIX: &str = "kube-codegen:validation:";

/// One recognised marker.
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    /// The name without the leading `+` (one of [`KNOWN`]); for
    /// `+kubebuilder:validation:items:Minimum`, `kubebuilder:validation:Minimum`.
    pub(crate) name: &'static str,
    /// Where inside the field it applies: nothing for the field itself, `[Items]` for the
    /// `items:` form, any steps for kube-codegen's [`ELEMENTS_PREFIX`] form.
    pub(crate) steps: Vec<Step>,
    /// Where it may be written.
    pub(crate) place: Place,
    /// The text after `=`, for markers that take a value.
    pub(crate) value: Option<String>,
    /// The `key=value` arguments, for markers that take them.
    pub(crate) args: Vec<Arg>,
    /// The marker's name.
    pub(crate) name_loc: Loc,
    /// The value, or the whole marker when there is none.
    pub(crate) value_loc: Loc,
    /// Written in another spelling ([`ALIASES`]): dropped when the field also carries the
    /// marker it names, as controller-gen reads both.
    pub(crate) alias: bool,
}

impl Marker {
    /// The short name users see in messages: `+kubebuilder:validation:Minimum`.
    pub(crate) fn display(&self) -> String {
        match (
            self.name.strip_prefix("kubebuilder:validation:"),
            self.steps.as_slice(),
        ) {
            (Some(base), [Step::Items]) => format!("+kubebuilder:validation:items:{base}"),
            (Some(base), steps) if !steps.is_empty() => {
                let steps: String = steps
                    .iter()
                    .map(|s| match s {
                        Step::Items => "items:",
                        Step::Values => "values:",
                    })
                    .collect();
                format!("+{ELEMENTS_PREFIX}{steps}{base}")
            }
            _ => format!("+{}", self.name),
        }
    }

    /// The argument `key`, if given.
    pub(crate) fn arg(&self, key: &str) -> Option<&Arg> {
        self.args.iter().find(|a| a.key == key)
    }
}

/// The CRD markers of `attrs` for their meaning alone, where their mistakes are reported by
/// the stage that checks the struct they sit on (`schema::check_struct`), once.
pub(crate) fn read_checked_elsewhere(attrs: &[Attribute]) -> Vec<Marker> {
    let mut cx = Ctxt::new();
    let markers = read(&mut cx, attrs);
    drop(cx.into_diagnostics());
    markers
}

/// Reads the CRD markers of `attrs`' doc comments; reports unknown `+kubebuilder:` names and
/// malformed values.
pub(crate) fn read(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<Marker> {
    let mut out = Vec::new();
    for_each_marker(attrs, |text, loc| {
        // The lint's markers are checked here and read by the lint alone.
        if let Some(m) = parse(cx, text, loc).filter(|m| !m.name.starts_with("kube-codegen:lint")) {
            out.push(m);
        }
    });
    let all = out.clone();
    out.retain(|m| !said_otherwise(m, &all));
    out
}

fn parse(cx: &mut Ctxt, text: &str, loc: &dyn Fn(usize, usize) -> Loc) -> Option<Marker> {
    let full = &text[1..];
    // `kubebuilder:validation:items:Minimum` is `kubebuilder:validation:Minimum` on items;
    // `kube-codegen:validation:values:items:Minimum` on the items of a map's values.
    let (body, steps) = element_steps(full);
    let (body, alias) = unaliased(body);
    let items = !steps.is_empty();
    let body = body.as_str();
    let found = KNOWN
        .iter()
        .filter(|(name, _, _)| {
            body.strip_prefix(name)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '=']))
        })
        .filter(|(name, _, _)| !items || has_items_form(name))
        .max_by_key(|(name, _, _)| name.len());
    let Some(&(name, place, takes)) = found else {
        if webhook_marker(cx, text, loc) {
            return None;
        }
        let word = full.split('=').next().unwrap_or(full);
        if matches!(word.split(':').next(), Some("kubebuilder" | "kube-codegen"))
            && !IGNORED.iter().any(|i| word.starts_with(i))
        {
            cx.error_at(&loc(0, 1 + word.len()), unknown_marker(word));
        }
        return None;
    };
    // Offsets below are into `text`, whose end is `rest` whatever form the name had (an
    // element form, an alias).
    let rest = &body[name.len()..];
    let start = 1 + full.len() - rest.len();
    let name_loc = loc(0, start);
    let mut marker = Marker {
        name,
        steps,
        place,
        value: None,
        args: Vec::new(),
        name_loc: name_loc.clone(),
        value_loc: loc(0, text.len()),
        alias,
    };
    match takes {
        None => {
            if !rest.is_empty() {
                cx.error_at(
                    &loc(start, text.len()),
                    format!("`+{name}` takes no value; remove `{rest}`"),
                );
            }
        }
        Some(true) if name == ACKNOWLEDGE => {
            let value = rest.strip_prefix('=').map(unquoted).unwrap_or_default();
            if value.is_empty() {
                let at = if rest.is_empty() {
                    name_loc
                } else {
                    loc(start, text.len())
                };
                cx.error_at(
                    &at,
                    format!("`+{name}` needs a reason: `+{name}=\"<why this breaking change is intended>\"`"),
                );
                return None;
            }
            marker.value = Some(value);
            marker.value_loc = loc(start + 1, text.len());
        }
        Some(true) => match rest.strip_prefix('=') {
            Some(value) if !value.trim().is_empty() => {
                marker.value = Some(value.trim().to_owned());
                marker.value_loc = loc(start + 1, text.len());
            }
            _ if matches!(
                name,
                "kubebuilder:validation:ExclusiveMinimum"
                    | "kubebuilder:validation:ExclusiveMaximum"
                    | "kubebuilder:validation:UniqueItems"
                    // `+nullable=false` takes back the `nullable: true` kube writes for an
                    // `Option`; `+nullable` alone is `true`.
                    | "nullable"
            ) && rest.is_empty() =>
            {
                marker.value = Some("true".to_owned());
            }
            _ => {
                cx.error_at(
                    &name_loc,
                    format!("`+{name}` needs a value: `+{name}=<value>`"),
                );
                return None;
            }
        },
        Some(false) => {
            if let Some(args) = rest.strip_prefix(':') {
                marker.args = split_args(cx, args, &|s, e| loc(start + 1 + s, start + 1 + e));
            } else if !rest.is_empty()
                || !(name.ends_with("scale") || name == "kubebuilder:deprecatedversion")
            {
                cx.error_at(
                    &name_loc,
                    format!("`+{name}` needs arguments: `+{name}:key=value,...`"),
                );
                return None;
            }
        }
    }
    Some(marker)
}

/// `full` (a marker without its `+`) as the validation marker it names and the steps to
/// where it applies; no steps for any other marker.
fn element_steps(full: &str) -> (String, Vec<Step>) {
    if let Some(rest) = full.strip_prefix("kubebuilder:validation:items:") {
        return (format!("kubebuilder:validation:{rest}"), vec![Step::Items]);
    }
    let Some(mut rest) = full.strip_prefix(ELEMENTS_PREFIX) else {
        return (full.to_owned(), Vec::new());
    };
    let mut steps = Vec::new();
    loop {
        if let Some(r) = rest.strip_prefix("items:") {
            steps.push(Step::Items);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("values:") {
            steps.push(Step::Values);
            rest = r;
        } else {
            break;
        }
    }
    if steps.is_empty() {
        return (full.to_owned(), steps);
    }
    (format!("kubebuilder:validation:{rest}"), steps)
}

/// Checks a `+kubebuilder:webhook:` or `+kubebuilder:webhookconfiguration:` marker written
/// on a type, as `kube-codegen webhooks` reads it, each mistake at its argument; `false` for
/// any other marker. (The configurations themselves are written by that command.)
fn webhook_marker(cx: &mut Ctxt, text: &str, loc: &dyn Fn(usize, usize) -> Loc) -> bool {
    use crate::webhook::{CONFIGURATION, WEBHOOK, parse as parse_webhook, parse_configuration};
    let (prefix, mistakes) = if let Some(body) = text.strip_prefix(WEBHOOK) {
        (WEBHOOK, parse_webhook(body).err())
    } else if let Some(body) = text.strip_prefix(CONFIGURATION) {
        (CONFIGURATION, parse_configuration(body).err())
    } else {
        return false;
    };
    for (offset, why) in mistakes.unwrap_or_default() {
        let start = prefix.len() + offset;
        let end = text[start..].find(',').map_or(text.len(), |e| start + e);
        cx.error_at(&loc(start, end.max(start + 1).min(text.len())), why);
    }
    true
}

/// The error for a `+kubebuilder:` marker that is not one kube-codegen reads: controller-gen
/// markers it does not implement say so, others get a suggestion from their own family
/// (`+kubebuilder:validation:Minimun` -> `Minimum`) or the family's list.
fn unknown_marker(word: &str) -> String {
    let family = word.rsplit_once(':').map_or("", |(f, _)| f);
    let siblings: Vec<&str> = KNOWN
        .iter()
        .map(|(n, _, _)| *n)
        .filter(|n| n.rsplit_once(':').map_or("", |(f, _)| f) == family)
        .collect();
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`+{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(u) = UNSUPPORTED.iter().find(|u| word.starts_with(*u)) {
        let supported: Vec<&str> = KNOWN
            .iter()
            .map(|(n, _, _)| *n)
            .filter(|n| n.starts_with("kubebuilder:"))
            .collect();
        return format!(
            "`+{u}` is a controller-gen marker kube-codegen does not support; supported: {}",
            list(&supported)
        );
    }
    match suggest(word, siblings.iter().copied()) {
        Some(s) => format!("unknown marker `+{word}`; did you mean `+{s}`?"),
        None if !siblings.is_empty() => format!(
            "unknown marker `+{word}`; the `+{family}:` markers are {}",
            list(&siblings)
        ),
        None => format!(
            "unknown marker `+{word}`; see the marker reference, docs/src/reference/markers.md"
        ),
    }
}

/// Splits `a=1,b="x, y",c=p;q` into arguments; quoted values may contain commas and `\"`.
fn split_args(cx: &mut Ctxt, text: &str, loc: &dyn Fn(usize, usize) -> Loc) -> Vec<Arg> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let key_start = i;
        while i < bytes.len() && bytes[i] != b'=' && bytes[i] != b',' {
            i += 1;
        }
        let key = text[key_start..i].trim().to_owned();
        if i >= bytes.len() || bytes[i] != b'=' {
            cx.error_at(
                &loc(key_start, i),
                format!("expected `{key}=<value>` in the marker's arguments"),
            );
            i += 1;
            continue;
        }
        i += 1;
        let value;
        if bytes.get(i) == Some(&b'"') || bytes.get(i) == Some(&b'`') {
            let quote = bytes[i];
            i += 1;
            let mut s = String::new();
            let mut closed = false;
            while i < bytes.len() {
                let c = text[i..].chars().next().unwrap_or('\0');
                if c as u32 == u32::from(quote) {
                    closed = true;
                    i += 1;
                    break;
                }
                if c == '\\' && quote == b'"' && i + 1 < bytes.len() {
                    let next = text[i + 1..].chars().next().unwrap_or('\0');
                    s.push(match next {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                    i += 1 + next.len_utf8();
                    continue;
                }
                s.push(c);
                i += c.len_utf8();
            }
            if !closed {
                cx.error_at(&loc(key_start, text.len()), "unterminated quoted value");
                return out;
            }
            value = s;
        } else {
            let value_start = i;
            while i < bytes.len() && bytes[i] != b',' {
                i += 1;
            }
            value = text[value_start..i].trim().to_owned();
        }
        out.push(Arg {
            key,
            value,
            loc: loc(key_start, i),
        });
        // Skip the separator.
        if i < bytes.len() && bytes[i] == b',' {
            i += 1;
        }
    }
    out
}
