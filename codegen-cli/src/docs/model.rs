//! The one walk of the CRDs' schemas both renderers share: pages (one per group and version),
//! their kinds, each kind's printer columns and objects, each object's fields with their
//! types, links and checks, as plain values that know nothing of Markdown or HTML.

use std::collections::BTreeMap;

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
    /// Its kinds, in the order of the CRDs.
    pub kinds: Vec<Kind>,
}

impl Page {
    /// The page's file name without extension: `<group>_<version>`.
    pub fn stem(&self) -> String {
        format!("{}_{}", self.group, self.version)
    }
}

/// One kind in one version.
#[derive(Debug)]
pub struct Kind {
    /// The kind, `Backup`.
    pub name: String,
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
    /// Where it is: `Backup`, `Backup.spec`, `Backup.status.conditions[]`.
    pub path: String,
    /// The heading's anchor.
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
        .map(|((group, version), kinds)| Page {
            group,
            version,
            kinds,
        })
        .collect()
}

/// A JSON string's text, empty when it is not one.
pub fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The anchor mdBook and GitHub give a heading made of `title`.
pub fn anchor(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
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
    collect_objects(&name, &version["schema"]["openAPIV3Schema"], &mut found);
    Kind {
        summary: summary(crd, version),
        columns,
        objects: found.into_iter().map(|(p, o)| object(&p, o)).collect(),
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

/// Every object schema under `schema` with properties, by path (`Backup.spec`), outermost
/// first.
fn collect_objects<'a>(path: &str, schema: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    if let Some(items) = schema.get("items") {
        return collect_objects(&format!("{path}[]"), items, out);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return collect_objects(&format!("{path}{{}}"), values, out);
    }
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    out.push((path.to_owned(), schema));
    for (name, property) in properties {
        if path.contains('.') || !matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            collect_objects(&format!("{path}.{name}"), property, out);
        }
    }
}

/// The path of the object a field's schema leads to, if it leads to one.
fn object_path(path: &str, schema: &Value) -> Option<String> {
    if let Some(items) = schema.get("items") {
        return object_path(&format!("{path}[]"), items);
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return object_path(&format!("{path}{{}}"), values);
    }
    schema["properties"].is_object().then(|| path.to_owned())
}

/// One object and its fields.
fn object(path: &str, schema: &Value) -> Object {
    let root = !path.contains('.');
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let fields = schema["properties"].as_object().into_iter().flatten();
    let fields = fields
        .map(|(name, field)| {
            let link = object_path(&format!("{path}.{name}"), field)
                .filter(|_| !(root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata")))
                .map(|target| anchor(&target));
            let mut checks = validations(field);
            if required.contains(&name.as_str()) {
                checks.insert(0, vec![text_span("required")]);
            }
            Field {
                name: name.clone(),
                ty: type_name(field),
                link,
                description: text(&field["description"]),
                checks,
            }
        })
        .collect();
    Object {
        path: path.to_owned(),
        anchor: anchor(path),
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
