//! The one walk of the CRDs' schemas both renderers share: pages (one per group and version),
//! their kinds, each kind's printer columns and objects, each object's fields with their
//! types, links and checks, as plain values that know nothing of Markdown or HTML.
//!
//! Everything here is third-party text (the CRDs' names, descriptions, values) except what
//! the model says itself; the renderers escape all of it. What is markup-neutral is decided
//! here, once for both formats:
//! - a description is prose in paragraphs, where only the user's `code` spans (backticks
//!   paired as CommonMark pairs them) are kept as code: emphasis, links and HTML a doc
//!   comment may hold are shown as written, never rendered;
//! - each heading's anchor is the one mdBook (and, for ASCII names, GitHub) gives the
//!   heading's text, numbered `-1`, `-2`, ... in page order when two headings would share one,
//!   and a field links to its own object's anchor;
//! - a link's destination is never one that runs script ([`href`]).

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

/// A piece of inline text: prose, or code (a name, a value, a rule) shown as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span {
    /// Prose, as written.
    Text(String),
    /// Code: `backups`, `self.replicas <= 3`, `"a"`.
    Code(String),
}

/// Inline text: a run of spans.
pub type Inline = Vec<Span>;

fn text_span(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn code_span(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

/// One page: the kinds of one group and version.
#[derive(Debug)]
pub struct Page {
    /// API group, `backup.example.com`.
    pub group: String,
    /// Version, `v1alpha1`.
    pub version: String,
    /// The anchor of the page's title.
    pub anchor: String,
    /// Its kinds, in the order of the CRDs.
    pub kinds: Vec<Kind>,
}

impl Page {
    /// The page's file name without extension: `<group>_<version>`.
    pub fn stem(&self) -> String {
        format!("{}_{}", self.group, self.version)
    }

    /// The page's title: `<group>/<version>`.
    pub fn title(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
}

/// One kind in one version.
#[derive(Debug)]
pub struct Kind {
    /// The kind, `Backup`.
    pub name: String,
    /// The anchor of the kind's heading (unique in its page).
    pub anchor: String,
    /// Its apiVersion, scope, resource, short names, subresources, storage and deprecation.
    pub summary: Inline,
    /// Its printer columns.
    pub columns: Option<Vec<Column>>,
    /// The objects of its schema, outermost first; the first is the root.
    pub objects: Vec<Object>,
}

/// One printer column.
#[derive(Debug)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Column type.
    pub ty: String,
    /// Its JSONPath.
    pub json_path: String,
    /// Its description.
    pub description: String,
}

/// One object schema with properties.
#[derive(Debug)]
pub struct Object {
    /// Where it is: `Backup`, `Backup.spec`, `Backup.status.conditions[]`; a field whose
    /// name would read as more than one step is quoted: `Backup.spec["a.b"]`.
    pub path: String,
    /// The heading's anchor, unique in its page (the kind's own for the root).
    pub anchor: String,
    /// Whether it is the kind's root (shown under the kind's heading, without its own).
    pub root: bool,
    /// Its description (empty for the root, whose description is kube's).
    pub description: String,
    /// Its CEL rules with their messages.
    pub rules: Vec<Inline>,
    /// Its fields, by name.
    pub fields: Vec<Field>,
}

/// One field of an object.
#[derive(Debug)]
pub struct Field {
    /// The JSON name.
    pub name: String,
    /// Its type as a reader wants it: `integer (int32)`, `[]object`.
    pub ty: String,
    /// The anchor of the object its type leads to, if any.
    pub link: Option<String>,
    /// The index, in its kind's objects, of the object its type leads to.
    target: Option<usize>,
    /// Its description.
    pub description: String,
    /// What it checks: required, default, bounds, pattern, enum values, rules.
    pub checks: Vec<Inline>,
}

/// The pages of the CRDs, by group and version.
pub fn pages(crds: &[Value]) -> Vec<Page> {
    let mut by_page: BTreeMap<(String, String), Vec<Kind>> = BTreeMap::new();
    for crd in crds {
        let group = text(&crd["spec"]["group"]);
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let key = (group.clone(), text(&version["name"]));
            by_page.entry(key).or_default().push(kind(crd, version));
        }
    }
    by_page
        .into_iter()
        .map(|((group, version), kinds)| {
            let mut page = Page {
                group,
                version,
                anchor: String::new(),
                kinds,
            };
            number_anchors(&mut page);
            page
        })
        .collect()
}

/// Gives the page's headings their anchors in the order the page shows them (its title, then
/// each kind's heading and its objects' headings) as mdBook numbers repeats, and points each
/// field at the anchor of its own object.
fn number_anchors(page: &mut Page) {
    let mut used = HashSet::new();
    page.anchor = unique(anchor(&page.title()), &mut used);
    for kind in &mut page.kinds {
        kind.anchor = unique(anchor(&kind.name), &mut used);
        let anchors: Vec<String> = kind
            .objects
            .iter()
            .map(|o| {
                if o.root {
                    kind.anchor.clone()
                } else {
                    unique(anchor(&o.path), &mut used)
                }
            })
            .collect();
        for (object, own) in kind.objects.iter_mut().zip(&anchors) {
            object.anchor = own.clone();
            for field in &mut object.fields {
                field.link = field.target.and_then(|i| anchors.get(i).cloned());
            }
        }
    }
}

/// A JSON string's text, empty when it is not one.
pub fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// `text` on one line, as a heading or a table cell shows it: control characters (line
/// breaks included) as spaces, runs of white space as one space, none at either end.
pub fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The anchor mdBook gives a heading whose text is `title` (shown on one line): lowercase,
/// letters, digits, `_` and `-` kept, spaces as `-`, everything else dropped. GitHub gives
/// the same to ASCII titles.
pub fn anchor(title: &str) -> String {
    one_line(title)
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// `id`, or the first of `id-1`, `id-2`, ... not in `used`, as mdBook numbers headings that
/// would share an anchor (and GitHub does, but for an `x-1` written as such); the result
/// joins `used`.
pub fn unique(id: String, used: &mut HashSet<String>) -> String {
    let mut candidate = id.clone();
    let mut n = 0u32;
    while used.contains(&candidate) {
        n += 1;
        candidate = format!("{id}-{n}");
    }
    used.insert(candidate.clone());
    candidate
}

/// A link's destination as the pages write it, or `None` when a browser would run it: a
/// `javascript:`, `vbscript:` or `data:` URL, read as a browser reads a scheme (case
/// ignored, leading spaces and control characters dropped, tabs and line breaks inside
/// ignored). What is kept has the characters that could end or bend a Markdown or HTML
/// destination (spaces, control characters, `()<>"'\&` and backticks) percent-encoded.
pub fn href(destination: &str) -> Option<String> {
    let scheme: String = destination
        .trim_start_matches(|c: char| c <= ' ' || c.is_control())
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take_while(|c| *c != ':')
        .collect::<String>()
        .to_ascii_lowercase();
    let has_scheme = destination.contains(':');
    if has_scheme && matches!(scheme.as_str(), "javascript" | "vbscript" | "data") {
        return None;
    }
    let mut out = String::with_capacity(destination.len());
    for c in destination.chars() {
        if c <= ' ' || c.is_control() || "()<>\"'\\&`".contains(c) {
            percent_encode(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// `name` as one segment of a relative URL: everything but ASCII letters, digits and `-._~`
/// percent-encoded (so a page's name can never read as a scheme or a path).
pub fn url_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || "-._~".contains(c) {
            out.push(c);
        } else {
            percent_encode(c, &mut out);
        }
    }
    out
}

/// Appends `c` to `out` as `%XX` escapes of its UTF-8 bytes.
fn percent_encode(c: char, out: &mut String) {
    let mut bytes = [0u8; 4];
    for b in c.encode_utf8(&mut bytes).bytes() {
        out.push_str(&format!("%{b:02X}"));
    }
}

/// A description as paragraphs (split at blank lines, each on one line) of prose and the
/// `code` spans its backticks make: a run of backticks opens a span that the next run of
/// the same length closes (one space stripped from each end when both have one, as
/// CommonMark does); a run that nothing closes is prose.
pub fn prose(text: &str) -> Vec<Inline> {
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in text.lines().chain([""]) {
        if line.trim().is_empty() {
            let paragraph = one_line(&current);
            if !paragraph.is_empty() {
                paragraphs.push(code_spans(&paragraph));
            }
            current.clear();
        } else {
            current.push(' ');
            current.push_str(line);
        }
    }
    paragraphs
}

/// One paragraph's prose and code spans.
fn code_spans(paragraph: &str) -> Inline {
    let bytes = paragraph.as_bytes();
    let run_at = |at: usize| bytes[at..].iter().take_while(|b| **b == b'`').count();
    let mut out = Vec::new();
    let (mut text_from, mut at) = (0, 0);
    while at < bytes.len() {
        if bytes[at] != b'`' {
            at += 1;
            continue;
        }
        let open = run_at(at);
        let content_from = at + open;
        let mut scan = content_from;
        let mut close = None;
        while scan < bytes.len() {
            if bytes[scan] != b'`' {
                scan += 1;
                continue;
            }
            let run = run_at(scan);
            if run == open {
                close = Some(scan);
                break;
            }
            scan += run;
        }
        match close {
            Some(end) => {
                if text_from < at {
                    out.push(text_span(&paragraph[text_from..at]));
                }
                let code = &paragraph[content_from..end];
                let stripped = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                    Some(inner) if !code.trim_matches(' ').is_empty() => inner,
                    _ => code,
                };
                out.push(code_span(stripped));
                at = end + open;
                text_from = at;
            }
            None => at = content_from,
        }
    }
    if text_from < bytes.len() {
        out.push(text_span(&paragraph[text_from..]));
    }
    out
}

fn kind(crd: &Value, version: &Value) -> Kind {
    let names = &crd["spec"]["names"];
    let name = text(&names["kind"]);
    let columns = version["additionalPrinterColumns"]
        .as_array()
        .map(|columns| {
            columns
                .iter()
                .map(|c| Column {
                    name: text(&c["name"]),
                    ty: text(&c["type"]),
                    json_path: text(&c["jsonPath"]),
                    description: text(&c["description"]),
                })
                .collect()
        });
    let mut found = Vec::new();
    collect_objects(
        &name,
        &version["schema"]["openAPIV3Schema"],
        true,
        &mut found,
    );
    Kind {
        summary: summary(crd, version),
        columns,
        objects: found.iter().map(object).collect(),
        anchor: String::new(),
        name,
    }
}

/// What the CRD says of a kind in one sentence.
fn summary(crd: &Value, version: &Value) -> Inline {
    let names = &crd["spec"]["names"];
    let mut out = vec![
        code_span(format!(
            "apiVersion: {}/{}",
            text(&crd["spec"]["group"]),
            text(&version["name"])
        )),
        text_span(format!(", {}, resource ", text(&crd["spec"]["scope"]))),
        code_span(text(&names["plural"])),
    ];
    let list = |out: &mut Inline, lead: &str, items: Vec<String>| {
        for (i, item) in items.into_iter().enumerate() {
            out.push(text_span(if i == 0 { lead } else { ", " }));
            out.push(code_span(item));
        }
    };
    let short = names["shortNames"].as_array().into_iter().flatten();
    list(&mut out, ", short names ", short.map(text).collect());
    let subresources = version["subresources"].as_object().into_iter().flatten();
    list(
        &mut out,
        ", subresources ",
        subresources.map(|(k, _)| k.clone()).collect(),
    );
    if version["storage"] == Value::Bool(true) {
        out.push(text_span(", the storage version"));
    }
    if version["deprecated"] == Value::Bool(true) {
        out.push(text_span(", deprecated"));
    }
    out.push(text_span("."));
    out
}

/// An object schema found under a kind's schema.
struct Found<'a> {
    /// Its path, `Backup.spec`.
    path: String,
    /// Whether it is the kind's root.
    root: bool,
    /// Its schema.
    schema: &'a Value,
    /// The index of the object each of its fields leads to, by field name.
    targets: BTreeMap<String, usize>,
}

/// Every object schema under `schema` with properties, by path (`Backup.spec`), outermost
/// first; the index of the one `schema` itself leads to, if any.
fn collect_objects<'a>(
    path: &str,
    schema: &'a Value,
    root: bool,
    out: &mut Vec<Found<'a>>,
) -> Option<usize> {
    if let Some(items) = schema.get("items") {
        return collect_objects(&format!("{path}[]"), items, false, out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return collect_objects(&format!("{path}{{}}"), values, false, out);
    }
    let properties = schema["properties"].as_object()?;
    let at = out.len();
    out.push(Found {
        path: path.to_owned(),
        root,
        schema,
        targets: BTreeMap::new(),
    });
    for (name, property) in properties {
        if root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        let child = format!("{path}{}", step(name));
        if let Some(target) = collect_objects(&child, property, false, out)
            && let Some(found) = out.get_mut(at)
        {
            found.targets.insert(name.clone(), target);
        }
    }
    Some(at)
}

/// A field's step in a path: `.name`, or `["a.b"]` (JSON-quoted) for a name that would
/// read as more than one step or none (empty, or with a dot, bracket, brace, quote or
/// white space).
fn step(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.chars().any(|c| {
            matches!(c, '.' | '[' | ']' | '{' | '}' | '"') || c.is_whitespace() || c.is_control()
        });
    if plain {
        format!(".{name}")
    } else {
        format!("[{}]", Value::from(name))
    }
}

/// One object and its fields.
fn object(found: &Found) -> Object {
    let Found {
        path,
        root,
        schema,
        targets,
    } = found;
    let root = *root;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let fields = schema["properties"].as_object().into_iter().flatten();
    let fields = fields
        .map(|(name, field)| {
            let mut checks = validations(field);
            if required.contains(&name.as_str()) {
                checks.insert(0, vec![text_span("required")]);
            }
            Field {
                name: name.clone(),
                ty: type_name(field),
                link: None,
                target: targets.get(name).copied(),
                description: text(&field["description"]),
                checks,
            }
        })
        .collect();
    Object {
        path: path.clone(),
        anchor: String::new(),
        root,
        description: if root {
            String::new()
        } else {
            text(&schema["description"])
        },
        rules: rules(schema),
        fields,
    }
}

/// A schema's type as a reader wants it: `string`, `integer (int32)`, `[]object`,
/// `map[string]string`, `int-or-string`.
fn type_name(schema: &Value) -> String {
    if schema["x-kubernetes-int-or-string"] == Value::Bool(true) {
        return "int-or-string".to_owned();
    }
    if let Some(items) = schema.get("items") {
        return format!("[]{}", type_name(items));
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return format!("map[string]{}", type_name(values));
    }
    let base = schema["type"].as_str().unwrap_or("any");
    match schema["format"].as_str() {
        Some(format) => format!("{base} ({format})"),
        None => base.to_owned(),
    }
}

/// What the schema of a field checks, each as a short phrase.
fn validations(schema: &Value) -> Vec<Inline> {
    let mut out = Vec::new();
    if let Some(default) = schema.get("default") {
        out.push(vec![text_span("default "), code_span(default.to_string())]);
    }
    for (key, shown) in [
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("multipleOf", "multiple of"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("minProperties", "min properties"),
        ("maxProperties", "max properties"),
    ] {
        if let Some(v) = schema.get(key).map(number) {
            let exclusive = match key {
                "minimum" => schema["exclusiveMinimum"] == Value::Bool(true),
                "maximum" => schema["exclusiveMaximum"] == Value::Bool(true),
                _ => false,
            };
            let tail = if exclusive { " (exclusive)" } else { "" };
            out.push(vec![text_span(format!("{shown} {v}{tail}"))]);
        }
    }
    if let Some(pattern) = schema["pattern"].as_str() {
        out.push(vec![text_span("pattern "), code_span(pattern)]);
    }
    if let Some(values) = schema["enum"].as_array() {
        let mut check = Vec::new();
        for (i, v) in values.iter().enumerate() {
            check.push(text_span(if i == 0 { "one of " } else { ", " }));
            check.push(code_span(v.to_string()));
        }
        out.push(check);
    }
    if let Some(list) = schema["x-kubernetes-list-type"].as_str() {
        let mut check = vec![text_span("list type "), code_span(list)];
        let keys = schema["x-kubernetes-list-map-keys"].as_array();
        for (i, key) in keys.into_iter().flatten().enumerate() {
            check.push(text_span(if i == 0 { ", keys " } else { ", " }));
            check.push(code_span(text(key)));
        }
        out.push(check);
    }
    if schema["nullable"] == Value::Bool(true) {
        out.push(vec![text_span("nullable")]);
    }
    out.extend(rules(schema));
    out
}

/// A number as written in a marker: `1`, not the `1.0` YAML may read back.
fn number(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => v.to_string(),
    }
}

/// The CEL rules of a schema with their messages: ``rule `self.a <= self.b`: "message"``.
fn rules(schema: &Value) -> Vec<Inline> {
    let rules = schema["x-kubernetes-validations"].as_array();
    rules
        .into_iter()
        .flatten()
        .map(|r| {
            let mut rule = vec![text_span("rule "), code_span(text(&r["rule"]))];
            if let Some(message) = r["message"].as_str() {
                rule.push(text_span(format!(": \"{message}\"")));
            } else if let Some(expression) = r["messageExpression"].as_str() {
                rule.push(text_span(": message "));
                rule.push(code_span(expression));
            }
            rule
        })
        .collect()
}
