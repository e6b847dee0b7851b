//! A version's structural schema as Rust types: structs, string enums and fields, each with
//! the `+kubebuilder:` markers that give the schema back when `kube-codegen crds` (or the
//! generated `crds()`) builds the CRD from them.
//!
//! The rules, in the order a field is looked at:
//! - `x-kubernetes-int-or-string`: `Quantity` when its pattern is the quantity pattern,
//!   `IntOrString` otherwise;
//! - `x-kubernetes-preserve-unknown-fields` or `x-kubernetes-embedded-resource` without
//!   properties, and schemas without a type: `serde_json::Value`;
//! - objects with `properties`: a struct named `<Parent><Field>` (`<Kind>Spec`,
//!   `<Kind>Status` at the top), shared when two places have the same schema;
//! - objects with `additionalProperties`: `BTreeMap<String, _>`; arrays: `Vec<_>`;
//! - strings with an `enum` and nothing else odd: a Rust enum; `date-time` strings: `Time`;
//! - integers: `i32` for `int32`, `i64` otherwise; numbers: `f64` (`f32` for `float`).
//!
//! Fields the schema does not require are `Option`s. Whatever a Rust type writes that the
//! schema does not say is taken back by a marker (`+nullable=false`, `Format=""`); whatever
//! cannot be said at all is an [`Exception`], written as a comment above the field.

mod markers;
mod shape;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::doc::doc_text;
use super::names::{field_ident, upper_camel, variant_ident};
use crate::json;
use markers::object_markers;
pub use markers::quoted;

/// The pattern controller-gen writes for `resource.Quantity`.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// A Rust type of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `String`.
    String,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `bool`.
    Bool,
    /// `IntOrString`.
    IntOrString,
    /// `Quantity`.
    Quantity,
    /// `Time`.
    Time,
    /// `serde_json::Value`.
    Json,
    /// `Vec<T>`.
    Vec(Box<Ty>),
    /// `BTreeMap<String, T>`.
    Map(Box<Ty>),
    /// A struct or enum of this module.
    Named(String),
}

impl Ty {
    /// The type as Rust source.
    pub fn rust(&self) -> String {
        match self {
            Ty::String => "String".into(),
            Ty::I32 => "i32".into(),
            Ty::I64 => "i64".into(),
            Ty::F32 => "f32".into(),
            Ty::F64 => "f64".into(),
            Ty::Bool => "bool".into(),
            Ty::IntOrString => "IntOrString".into(),
            Ty::Quantity => "Quantity".into(),
            Ty::Time => "Time".into(),
            Ty::Json => "serde_json::Value".into(),
            Ty::Vec(t) => format!("Vec<{}>", t.rust()),
            Ty::Map(t) => format!("BTreeMap<String, {}>", t.rust()),
            Ty::Named(n) => n.clone(),
        }
    }

    fn uses(&self, out: &mut BTreeSet<&'static str>) {
        match self {
            Ty::IntOrString => {
                out.insert("IntOrString");
            }
            Ty::Quantity => {
                out.insert("Quantity");
            }
            Ty::Time => {
                out.insert("Time");
            }
            Ty::Vec(t) => t.uses(out),
            Ty::Map(t) => {
                out.insert("BTreeMap");
                t.uses(out);
            }
            _ => {}
        }
    }
}

/// One field of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The JSON name.
    pub json: String,
    /// The Rust name (a raw identifier for keywords).
    pub rust: String,
    /// The type, without the `Option`.
    pub ty: Ty,
    /// Not required: `Option<ty>`.
    pub optional: bool,
    /// The schema's description.
    pub doc: Option<String>,
    /// Marker lines, without `+`.
    pub markers: Vec<String>,
    /// What the schema says that the Rust type and markers cannot.
    pub exceptions: Vec<String>,
}

/// A struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// Its name.
    pub name: String,
    /// The description of its schema.
    pub doc: Option<String>,
    /// Type-level markers, without `+`.
    pub markers: Vec<String>,
    /// Its fields, in the schema's order (property names sorted).
    pub fields: Vec<Field>,
    /// Type-level exceptions.
    pub exceptions: Vec<String>,
}

/// A string enum.
#[derive(Debug, Clone, PartialEq)]
pub struct Enum {
    /// Its name.
    pub name: String,
    /// `(variant, JSON value)`.
    pub variants: Vec<(String, String)>,
}

/// Something the schema says that the imported types cannot say.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Exception {
    /// The schema path, `spec.template.items`.
    pub path: String,
    /// What is lost.
    pub what: String,
}

/// The types of one version: structs and enums in the order they were first reached.
#[derive(Debug, Default)]
pub struct Types {
    /// Structs.
    pub structs: Vec<Struct>,
    /// Enums.
    pub enums: Vec<Enum>,
    /// Every exception, with its path.
    pub exceptions: Vec<Exception>,
    /// Names taken, for unique names.
    taken: BTreeSet<String>,
    /// Struct names by the structure of their schema ([`Shapes`]).
    by_schema: BTreeMap<u32, String>,
    /// The structures of the schemas seen.
    shapes: Shapes,
    /// Enum names by their values.
    by_values: BTreeMap<Vec<String>, String>,
}

/// The schema of a property that is not an object: no keys.
fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Keys of a schema that the conversion reads; any other key is an exception.
const KNOWN_KEYS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "format",
    "enum",
    "default",
    "nullable",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
];

impl Types {
    /// No types yet, none named as any of `taken` (the other kinds' names in a version: the
    /// version's apply configurations share one module).
    pub fn reserving(taken: BTreeSet<String>) -> Self {
        Self {
            taken,
            ..Self::default()
        }
    }

    /// Every name taken: the reserved ones and those of these types.
    pub fn taken(&self) -> &BTreeSet<String> {
        &self.taken
    }

    /// The spec (`name` = `<Kind>Spec`) or status struct of a version from the root schema's
    /// property; `None` when that schema is not an object with properties.
    pub fn top(&mut self, name: &str, path: &str, schema: &Value) -> Option<String> {
        let obj = schema.as_object()?;
        if !is_struct(obj) {
            return None;
        }
        self.taken.insert(name.to_owned());
        self.shapes.forget_addresses();
        let made = self.structure(name.to_owned(), path, obj);
        self.shapes.forget_addresses();
        Some(made)
    }

    /// Makes the struct `name` for the object schema `obj`; later identical schemas reuse it
    /// (see [`Types::named_struct`]).
    fn structure(&mut self, name: String, path: &str, obj: &Map<String, Value>) -> String {
        let key = self.shapes.object(obj);
        self.by_schema.entry(key).or_insert_with(|| name.clone());
        // Reserve the slot so that nested types come after their parent.
        let index = self.structs.len();
        self.structs.push(Struct {
            name: name.clone(),
            doc: None,
            markers: Vec::new(),
            fields: Vec::new(),
            exceptions: Vec::new(),
        });
        let required: BTreeSet<&str> = json::strings(obj.get("required")).collect();
        let mut fields = Vec::new();
        let mut rust_names = BTreeSet::new();
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (json, prop) in props {
                let field_path = format!("{path}.{json}");
                let mut rust = field_ident(json);
                while !rust_names.insert(rust.clone()) {
                    rust.push('_');
                }
                let prop = prop.as_object().unwrap_or(empty());
                let hint = format!("{name}{}", upper_camel(json));
                let mut field = self.field(&hint, &field_path, prop);
                field.json = json.clone();
                field.rust = rust;
                let nullable = prop.get("nullable").and_then(Value::as_bool) == Some(true);
                let is_required = required.contains(json.as_str());
                field.optional = !is_required || nullable;
                if nullable {
                    field.markers.push("nullable".into());
                    if is_required {
                        // Serde needs an `Option` to read a null; the schema still requires it.
                        field.markers.push("required".into());
                    }
                } else if field.optional {
                    // kube writes `nullable: true` for every `Option`; this schema has none.
                    field.markers.push("nullable=false".into());
                }
                fields.push(field);
            }
        }
        for r in &required {
            if !obj
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(*r))
            {
                self.note(
                    path,
                    format!("`required` names `{r}`, which is not a property"),
                );
            }
        }
        let mut markers = Vec::new();
        let mut exceptions = description_notes(obj);
        object_markers(obj, &mut markers);
        for (k, _) in obj {
            if !KNOWN_KEYS.contains(&k.as_str()) {
                exceptions.push(format!("`{k}` is not carried over"));
            }
        }
        if obj.contains_key("additionalProperties") {
            exceptions
                .push("`additionalProperties` beside `properties` is not carried over".to_owned());
        }
        if obj.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            markers.push("kubebuilder:pruning:PreserveUnknownFields".into());
        }
        if obj.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
            exceptions.push(
                "`x-kubernetes-embedded-resource` on an object with properties is not carried over"
                    .to_owned(),
            );
        }
        for e in &exceptions {
            self.note(path, e.clone());
        }
        for f in &fields {
            for e in &f.exceptions {
                self.note(&format!("{path}.{}", f.json), e.clone());
            }
        }
        let s = &mut self.structs[index];
        s.doc = description(obj);
        s.markers = markers;
        s.fields = fields;
        s.exceptions = exceptions;
        name
    }

    fn note(&mut self, path: &str, what: String) {
        let e = Exception {
            path: path.to_owned(),
            what,
        };
        if !self.exceptions.contains(&e) {
            self.exceptions.push(e);
        }
    }

    /// `wanted`, or `wanted2`, `wanted3`, ... when it is taken; taken from then on.
    pub fn unique(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_owned();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{wanted}{n}");
            n += 1;
        }
        name
    }

    /// A field's type and markers from its schema; `hint` names a struct or enum it needs.
    fn field(&mut self, hint: &str, path: &str, s: &Map<String, Value>) -> Field {
        let mut markers = Vec::new();
        let mut exceptions = Vec::new();
        let ty = self.ty(hint, path, s, &mut markers, &mut exceptions, "");
        // A struct's description is the struct's, which notes what of it differs.
        if !is_struct(s) {
            exceptions.extend(description_notes(s));
        }
        Field {
            json: String::new(),
            rust: String::new(),
            ty,
            optional: false,
            doc: description(s),
            markers,
            exceptions,
        }
    }

    fn named_struct(&mut self, hint: &str, path: &str, s: &Map<String, Value>) -> String {
        let key = self.shapes.object(s);
        if let Some(existing) = self.by_schema.get(&key) {
            return existing.clone();
        }
        let name = self.unique(hint);
        self.structure(name, path, s)
    }

    fn named_enum(&mut self, hint: &str, values: &[String]) -> String {
        if let Some(existing) = self.by_values.get(values) {
            return existing.clone();
        }
        let name = self.unique(hint);
        let mut taken = BTreeSet::new();
        let variants = values
            .iter()
            .map(|v| {
                let mut ident = variant_ident(v);
                while !taken.insert(ident.clone()) {
                    ident.push('_');
                }
                (ident, v.clone())
            })
            .collect();
        self.by_values.insert(values.to_vec(), name.clone());
        self.enums.push(Enum {
            name: name.clone(),
            variants,
        });
        name
    }

    /// The imports a module of these types needs.
    pub fn uses(&self) -> BTreeSet<&'static str> {
        let mut out = BTreeSet::new();
        for s in &self.structs {
            for f in &s.fields {
                f.ty.uses(&mut out);
            }
        }
        out
    }
}

/// Whether an object schema becomes a struct.
fn is_struct(obj: &Map<String, Value>) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("object") && has_properties(obj)
}

/// Whether a schema has at least one property.
fn has_properties(s: &Map<String, Value>) -> bool {
    s.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// The description, if any, as doc text that reads as no marker ([`doc_text`]).
pub fn description(s: &Map<String, Value>) -> Option<String> {
    raw_description(s).map(|d| doc_text(d).text)
}

/// What of the description the doc text cannot say as the schema does ([`doc_text`]).
pub fn description_notes(s: &Map<String, Value>) -> Vec<String> {
    raw_description(s).map_or_else(Vec::new, |d| doc_text(d).notes)
}

/// The description as the schema has it, trimmed, if any.
fn raw_description(s: &Map<String, Value>) -> Option<&str> {
    s.get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
}

/// Structural ids of JSON values: two values have the same id when they are equal, key
/// order aside. Each object's id is remembered by its address while one schema is read
/// ([`Shapes::forget_addresses`] after it), so a schema nested `n` deep costs `n`, not
/// `n * n` as serializing each struct's subtree did.
#[derive(Debug, Default)]
struct Shapes {
    ids: std::collections::HashMap<Shape, u32>,
    by_address: std::collections::HashMap<usize, u32>,
}

/// A JSON value with its children as [`Shapes`] ids.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Shape {
    Scalar(String),
    Array(Vec<u32>),
    Object(Vec<(String, u32)>),
}

impl Shapes {
    fn object(&mut self, obj: &Map<String, Value>) -> u32 {
        let address = std::ptr::from_ref(obj) as usize;
        if let Some(id) = self.by_address.get(&address) {
            return *id;
        }
        let mut entries: Vec<(String, u32)> = obj
            .iter()
            .map(|(k, v)| (k.clone(), self.value(v)))
            .collect();
        entries.sort();
        let id = self.intern(Shape::Object(entries));
        self.by_address.insert(address, id);
        id
    }

    fn value(&mut self, v: &Value) -> u32 {
        match v {
            Value::Object(obj) => self.object(obj),
            Value::Array(items) => {
                let ids = items.iter().map(|i| self.value(i)).collect();
                self.intern(Shape::Array(ids))
            }
            other => self.intern(Shape::Scalar(other.to_string())),
        }
    }

    fn intern(&mut self, shape: Shape) -> u32 {
        let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
        *self.ids.entry(shape).or_insert(next)
    }

    /// Addresses are good while the schema they point into is: forgotten when it is done.
    fn forget_addresses(&mut self) {
        self.by_address.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_object_schemas_share_one_struct_and_others_get_unique_names() {
        let schema: Value = serde_json::json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"x": {"type": "string"}}},
                "b": {"type": "object", "properties": {"x": {"type": "string"}}},
                "c": {"type": "object", "properties": {"y": {"type": "string"}}},
            }
        });
        let mut types = Types::default();
        types.top("FooSpec", "spec", &schema).unwrap();
        let names: Vec<&str> = types.structs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["FooSpec", "FooSpecA", "FooSpecC"]);
        let fields = &types.structs[0].fields;
        assert_eq!(
            fields[1].ty,
            Ty::Named("FooSpecA".into()),
            "b reuses a's struct"
        );
    }
}
