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

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

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
    /// Struct names by the canonical JSON of their schema.
    by_schema: BTreeMap<String, String>,
    /// Enum names by their values.
    by_values: BTreeMap<Vec<String>, String>,
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
    /// The spec (`name` = `<Kind>Spec`) or status struct of a version from the root schema's
    /// property; `None` when that schema is not an object with properties.
    pub fn top(&mut self, name: &str, path: &str, schema: &Value) -> Option<String> {
        let obj = schema.as_object()?;
        if !is_struct(obj) {
            return None;
        }
        self.taken.insert(name.to_owned());
        Some(self.structure(name.to_owned(), path, obj))
    }

    /// Makes the struct `name` for the object schema `obj`; later identical schemas reuse it
    /// (see [`Types::named_struct`]).
    fn structure(&mut self, name: String, path: &str, obj: &Map<String, Value>) -> String {
        self.by_schema
            .entry(canonical(obj))
            .or_insert_with(|| name.clone());
        // Reserve the slot so that nested types come after their parent.
        let index = self.structs.len();
        self.structs.push(Struct {
            name: name.clone(),
            doc: None,
            markers: Vec::new(),
            fields: Vec::new(),
            exceptions: Vec::new(),
        });
        let required: BTreeSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        let mut rust_names = BTreeSet::new();
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (json, prop) in props {
                let field_path = format!("{path}.{json}");
                let mut rust = field_ident(json);
                while !rust_names.insert(rust.clone()) {
                    rust.push('_');
                }
                let prop = prop.as_object().cloned().unwrap_or_default();
                let hint = format!("{name}{}", upper_camel(json));
                let mut field = self.field(&hint, &field_path, &prop);
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
        let mut exceptions = Vec::new();
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

    fn unique(&mut self, wanted: &str) -> String {
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
        if description(s).is_some_and(|d| d.starts_with('+')) {
            exceptions.push(
                "the first line of the description starts with `+`, which reads as a marker; it is left out"
                    .to_owned(),
            );
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

    /// The type of schema `s`, pushing the markers that restore the rest of it. `items` says
    /// where `s` is inside the field: `""` for the field itself, then a step per level,
    /// `"items:"` for a list's items and `"values:"` for a map's values (see
    /// [`validation_prefix`]).
    fn ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let ty = self.ty_of(hint, path, s, markers, exceptions, items);
        // A struct's doc comment is its description; list items and map values of other
        // types have no doc comment of their own.
        let is_struct = matches!(&ty, Ty::Named(n) if self.structs.iter().any(|st| &st.name == n));
        if !items.is_empty() && !is_struct && description(s).is_some() {
            exceptions.push(
                "the description of its list items or map values is not carried over".to_owned(),
            );
        }
        ty
    }

    fn ty_of(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let ty_name = s.get("type").and_then(Value::as_str).unwrap_or("");
        let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
        for (k, _) in s {
            let int_or_string_any_of = k == "anyOf" && flag("x-kubernetes-int-or-string");
            if !KNOWN_KEYS.contains(&k.as_str()) && !int_or_string_any_of {
                exceptions.push(format!("`{k}` is not carried over"));
            }
        }
        // The keys every type may carry.
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        // A format the Rust type writes by itself is not a marker.
        if flag("x-kubernetes-int-or-string") {
            return int_or_string(s, markers, exceptions, items);
        }
        if flag("x-kubernetes-embedded-resource") && !has_properties(s) {
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:EmbeddedResource",
                "x-kubernetes-embedded-resource",
            );
            if flag("x-kubernetes-preserve-unknown-fields") {
                push_at(
                    markers,
                    exceptions,
                    items,
                    "kubebuilder:validation:XPreserveUnknownFields",
                    "x-kubernetes-preserve-unknown-fields",
                );
            }
            common(markers, exceptions, false);
            return Ty::Json;
        }
        match ty_name {
            "object" if has_properties(s) => {
                // The struct carries the object's own markers; only a default stays on the
                // field (items have no marker for one).
                let name = self.named_struct(hint, path, s);
                if let Some(d) = s.get("default") {
                    if items.is_empty() {
                        markers.push(format!("kubebuilder:default={}", json_text(d)));
                    } else {
                        exceptions.push(
                            "a `default` on list items cannot be written as a marker".to_owned(),
                        );
                    }
                }
                Ty::Named(name)
            }
            "object" if s.contains_key("additionalProperties") => {
                self.map_ty(hint, path, s, markers, exceptions, items)
            }
            "object" | "" => json_object(ty_name, s, markers, exceptions, items),
            "array" => self.array_ty(hint, path, s, markers, exceptions, items),
            "string" => self.string_ty(hint, s, markers, exceptions, items),
            t @ ("integer" | "number") => number_ty(t, s, markers, exceptions, items),
            "boolean" => {
                common(markers, exceptions, false);
                Ty::Bool
            }
            other => {
                exceptions.push(format!(
                    "type `{other}` is not a Kubernetes schema type; kept as JSON"
                ));
                Ty::Json
            }
        }
    }

    /// `additionalProperties`: a map of the values' type.
    fn map_ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let values = s
            .get("additionalProperties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut inner_markers = Vec::new();
        let mut inner_exc = Vec::new();
        let value_ty = self.ty(
            hint,
            &format!("{path}.{{}}"),
            &values,
            &mut inner_markers,
            &mut inner_exc,
            &format!("{items}values:"),
        );
        markers.extend(inner_markers);
        exceptions.extend(inner_exc);
        if let Some(mt) = s.get("x-kubernetes-map-type").and_then(Value::as_str) {
            push_at(
                markers,
                exceptions,
                items,
                &format!("mapType={mt}"),
                "x-kubernetes-map-type",
            );
        }
        if flag("x-kubernetes-preserve-unknown-fields") {
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:XPreserveUnknownFields",
                "x-kubernetes-preserve-unknown-fields",
            );
        }
        common(markers, exceptions, false);
        Ty::Map(Box::new(value_ty))
    }

    /// A list of the items' type, with its list type and keys.
    fn array_ty(
        &mut self,
        hint: &str,
        path: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let item_schema = s
            .get("items")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let item_hint = hint.to_owned();
        let item_ty = self.ty(
            &item_hint,
            &format!("{path}[]"),
            &item_schema,
            markers,
            exceptions,
            &format!("{items}items:"),
        );
        if let Some(lt) = s.get("x-kubernetes-list-type").and_then(Value::as_str) {
            push_at(
                markers,
                exceptions,
                items,
                &format!("listType={lt}"),
                "x-kubernetes-list-type",
            );
        }
        if let Some(keys) = s
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
        {
            for k in keys.iter().filter_map(Value::as_str) {
                push_at(
                    markers,
                    exceptions,
                    items,
                    &format!("listMapKey={k}"),
                    "x-kubernetes-list-map-keys",
                );
            }
        }
        common(markers, exceptions, false);
        Ty::Vec(Box::new(item_ty))
    }

    /// A string: an enum of its values, a `Time` for `date-time`, or a `String`.
    fn string_ty(
        &mut self,
        hint: &str,
        s: &Map<String, Value>,
        markers: &mut Vec<String>,
        exceptions: &mut Vec<String>,
        items: &str,
    ) -> Ty {
        let common = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, skip_enum: bool| {
            scalar_markers(s, items, markers, exceptions, skip_enum, None);
        };
        let implied = |markers: &mut Vec<String>, exceptions: &mut Vec<String>, format: &str| {
            scalar_markers(s, items, markers, exceptions, false, Some(format));
        };
        let format = s.get("format").and_then(Value::as_str);
        let values: Option<Vec<String>> = s
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.iter().map(|v| v.as_str().map(str::to_owned)).collect());
        if let Some(values) =
            values.filter(|v| !v.is_empty() && (items.is_empty() || items == "items:"))
        {
            let name = self.named_enum(hint, &values);
            common(markers, exceptions, true);
            return Ty::Named(name);
        }
        if format == Some("date-time") && !s.contains_key("enum") && !s.contains_key("default") {
            implied(markers, exceptions, "date-time");
            return Ty::Time;
        }
        common(markers, exceptions, false);
        Ty::String
    }

    fn named_struct(&mut self, hint: &str, path: &str, s: &Map<String, Value>) -> String {
        let key = canonical(s);
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

fn has_properties(s: &Map<String, Value>) -> bool {
    s.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// The prefix of a validation marker for the values at `items` inside a field: the field's
/// own (`kubebuilder:validation:`), controller-gen's `items:` form for a list's items, and
/// kube-codegen's element markers for anything deeper (`kube-codegen:validation:values:`,
/// `kube-codegen:validation:items:items:`).
fn validation_prefix(items: &str) -> String {
    match items {
        "" => "kubebuilder:validation:".to_owned(),
        "items:" => "kubebuilder:validation:items:".to_owned(),
        steps => format!("kube-codegen:validation:{steps}"),
    }
}

/// A marker on the field itself, or at `items` inside it when it is a validation marker
/// with an element form; an exception otherwise.
fn push_at(
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
    marker: &str,
    what: &str,
) {
    let element = marker
        .strip_prefix("kubebuilder:validation:")
        .filter(|m| !m.starts_with("XEmbeddedResource") && !m.starts_with("EmbeddedResource"));
    if items.is_empty() {
        markers.push(marker.to_owned());
    } else if let Some(rest) = element {
        markers.push(format!("{}{rest}", validation_prefix(items)));
    } else {
        exceptions.push(format!(
            "`{what}` on list items or map values cannot be written as a marker"
        ));
    }
}

/// Markers of the keys any schema may have: numbers, lengths, pattern, format, enum,
/// default, CEL rules, counts. Keys on items use the `items:` forms where they exist.
fn scalar_markers(
    s: &Map<String, Value>,
    items: &str,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    skip_enum: bool,
    implied_format: Option<&str>,
) {
    let on_items = !items.is_empty();
    let prefix = validation_prefix(items);
    let push = |markers: &mut Vec<String>, text: String| markers.push(format!("{prefix}{text}"));
    for (key, name) in [
        ("minimum", "Minimum"),
        ("maximum", "Maximum"),
        ("multipleOf", "MultipleOf"),
    ] {
        // A `null` is no bound (kube-apiserver reads it as absent).
        if let Some(n) = s.get(key).filter(|n| !n.is_null()) {
            push(markers, format!("{name}={}", number_text(n)));
        }
    }
    for (key, name) in [
        ("exclusiveMinimum", "ExclusiveMinimum"),
        ("exclusiveMaximum", "ExclusiveMaximum"),
    ] {
        // `false` is what an absent key says (kube-apiserver does not store it).
        if let Some(Value::Bool(true)) = s.get(key) {
            push(markers, format!("{name}=true"));
        }
    }
    for (key, name) in [
        ("minLength", "MinLength"),
        ("maxLength", "MaxLength"),
        ("minItems", "MinItems"),
        ("maxItems", "MaxItems"),
        ("minProperties", "MinProperties"),
        ("maxProperties", "MaxProperties"),
    ] {
        if let Some(n) = s.get(key).and_then(Value::as_u64) {
            push(markers, format!("{name}={n}"));
        }
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str) {
        if p.contains('`') || p.trim() != p {
            exceptions.push(
                "a `pattern` with a backtick or outer spaces cannot be written as a marker"
                    .to_owned(),
            );
        } else {
            push(markers, format!("Pattern=`{p}`"));
        }
    }
    if let Some(f) = s.get("format").and_then(Value::as_str)
        && Some(f) != implied_format
    {
        // An empty format is no format (kube-apiserver does not store it).
        if !f.is_empty() {
            push(markers, format!("Format={f}"));
        }
    }
    // An empty `enum` is no enum (kube-apiserver does not store it).
    if !skip_enum
        && let Some(values) = s
            .get("enum")
            .and_then(Value::as_array)
            .filter(|v| !v.is_empty())
    {
        let texts: Vec<String> = values.iter().map(enum_text).collect();
        if texts.iter().any(|t| t.contains(';') || t.is_empty()) {
            exceptions.push(
                "an `enum` value with `;` or an empty string cannot be written as a marker"
                    .to_owned(),
            );
        } else {
            push(markers, format!("Enum={}", texts.join(";")));
        }
    }
    if let Some(d) = s.get("default") {
        if on_items {
            exceptions.push("a `default` on list items cannot be written as a marker".to_owned());
        } else {
            markers.push(format!("kubebuilder:default={}", json_text(d)));
        }
    }
    if let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) {
        for rule in rules {
            push(markers, format!("XValidation:{}", cel_args(rule)));
        }
    }
}

/// The type-level markers of an object schema that becomes a struct.
fn object_markers(obj: &Map<String, Value>, markers: &mut Vec<String>) {
    for (key, name) in [
        ("minProperties", "MinProperties"),
        ("maxProperties", "MaxProperties"),
    ] {
        if let Some(n) = obj.get(key).and_then(Value::as_u64) {
            markers.push(format!("kubebuilder:validation:{name}={n}"));
        }
    }
    if let Some(mt) = obj.get("x-kubernetes-map-type").and_then(Value::as_str) {
        markers.push(format!("structType={mt}"));
    }
    if let Some(rules) = obj
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        for rule in rules {
            markers.push(format!(
                "kubebuilder:validation:XValidation:{}",
                cel_args(rule)
            ));
        }
    }
}

/// `rule="...",message="..."` with the marker's quoting.
fn cel_args(rule: &Value) -> String {
    let mut parts = Vec::new();
    for key in [
        "rule",
        "message",
        "messageExpression",
        "reason",
        "fieldPath",
    ] {
        if let Some(text) = rule.get(key).and_then(Value::as_str) {
            parts.push(format!("{key}={}", quoted(text)));
        }
    }
    if let Some(b) = rule.get("optionalOldSelf").and_then(Value::as_bool) {
        parts.push(format!("optionalOldSelf={b}"));
    }
    parts.join(",")
}

/// A marker argument in double quotes: `\`, `"`, newlines and tabs escaped.
pub fn quoted(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn number_text(n: &Value) -> String {
    match n {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn enum_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A default as the marker writes it: JSON.
fn json_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The description, if any.
pub fn description(s: &Map<String, Value>) -> Option<String> {
    s.get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
}

/// A stable key for structurally equal schemas.
fn canonical(obj: &Map<String, Value>) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let b: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
                serde_json::to_value(b).unwrap_or(Value::Null)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(&Value::Object(obj.clone())).to_string()
}

/// `UpperCamel` of a JSON name: `fooBar` -> `FooBar`, `foo-bar.baz` -> `FooBarBaz`.
pub fn upper_camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                out.push(c.to_ascii_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        } else {
            up = true;
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'X');
    }
    out
}

/// The Rust field name of a JSON property: snake_case, a raw identifier for keywords.
pub fn field_ident(json: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = json.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if !out.is_empty() && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower))
            {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_owned();
    let out = if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("f_{out}")
    } else {
        out
    };
    if matches!(out.as_str(), "self" | "super" | "crate" | "_") {
        return format!("{out}_");
    }
    kube_codegen_core::naming::ident(&out).to_string()
}

/// The serde name of a Rust field under `rename_all = "camelCase"`: the generator's one rule.
pub fn serde_camel(rust: &str) -> String {
    kube_codegen_core::ast::renamed(rust.trim_start_matches("r#"), Some("camelCase"))
}

/// The Rust variant of a string enum value.
fn variant_ident(value: &str) -> String {
    if value.is_empty() {
        return "Empty".to_owned();
    }
    // Operators (`=`, `!=`, `=~`) spelled out rather than numbered.
    let spelled: String = if value.chars().any(|c| c.is_ascii_alphanumeric()) {
        value.to_owned()
    } else {
        value
            .chars()
            .map(|c| match c {
                '=' => " eq ",
                '!' => " not ",
                '~' => " tilde ",
                '<' => " lt ",
                '>' => " gt ",
                '+' => " plus ",
                '-' => " minus ",
                '*' => " star ",
                '/' => " slash ",
                '.' => " dot ",
                '%' => " percent ",
                '&' => " and ",
                '|' => " or ",
                _ => " ",
            })
            .collect()
    };
    let camel = upper_camel(&spelled);
    if camel == "Self" {
        return "Self_".to_owned();
    }
    camel
}

/// `x-kubernetes-int-or-string`: a `Quantity` when the pattern is the quantity pattern, an
/// `IntOrString` otherwise.
fn int_or_string(
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    let quantity = s.get("pattern").and_then(Value::as_str) == Some(QUANTITY_PATTERN);
    // The marker writes the `anyOf` kube's schema of the type lacks, wherever it is.
    markers.push(format!("{}XIntOrString", validation_prefix(items)));
    scalar_markers(s, items, markers, exceptions, false, None);
    if !items.is_empty() && !s.contains_key("description") {
        exceptions.push(
            "list items or map values of this type get the type's own description from kube"
                .to_owned(),
        );
    }
    if quantity {
        Ty::Quantity
    } else {
        Ty::IntOrString
    }
}

/// An object without properties, or no type: anything, kept as JSON.
fn json_object(
    ty_name: &str,
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    let flag = |k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
    // Anything: kept as JSON.
    if ty_name == "object" {
        push_at(
            markers,
            exceptions,
            items,
            "kubebuilder:validation:Type=object",
            "type: object",
        );
    }
    if flag("x-kubernetes-preserve-unknown-fields") {
        push_at(
            markers,
            exceptions,
            items,
            "kubebuilder:validation:XPreserveUnknownFields",
            "x-kubernetes-preserve-unknown-fields",
        );
    }
    if let Some(mt) = s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        push_at(
            markers,
            exceptions,
            items,
            &format!("mapType={mt}"),
            "x-kubernetes-map-type",
        );
    }
    scalar_markers(s, items, markers, exceptions, false, None);
    Ty::Json
}

/// An integer or a number: the narrow or the wide Rust type, by the format each writes.
fn number_ty(
    t: &str,
    s: &Map<String, Value>,
    markers: &mut Vec<String>,
    exceptions: &mut Vec<String>,
    items: &str,
) -> Ty {
    // The narrow and the wide Rust type, by the format each writes.
    let ((narrow, narrow_ty), (wide, wide_ty)) = if t == "integer" {
        (("int32", Ty::I32), ("int64", Ty::I64))
    } else {
        (("float", Ty::F32), ("double", Ty::F64))
    };
    // An empty format is no format.
    match s
        .get("format")
        .and_then(Value::as_str)
        .filter(|f| !f.is_empty())
    {
        Some(f) if f == narrow => {
            scalar_markers(s, items, markers, exceptions, false, Some(f));
            narrow_ty
        }
        Some(f) if f == wide => {
            scalar_markers(s, items, markers, exceptions, false, Some(f));
            wide_ty
        }
        None => {
            scalar_markers(s, items, markers, exceptions, false, None);
            push_at(
                markers,
                exceptions,
                items,
                "kubebuilder:validation:Format=\"\"",
                "(no format)",
            );
            wide_ty
        }
        Some(_) => {
            scalar_markers(s, items, markers, exceptions, false, None);
            wide_ty
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_become_rust_names_that_serde_maps_back_or_renames() {
        for (json, rust, renamed) in [
            ("deploymentName", "deployment_name", false),
            ("isCA", "is_ca", true),
            ("network-policy", "network_policy", true),
            ("X-Forwarded-For", "x_forwarded_for", true),
            ("type", "r#type", false),
            ("self", "self_", false),
            ("2fa", "f_2fa", true),
            ("apiVersion", "api_version", false),
        ] {
            assert_eq!(field_ident(json), rust, "{json}");
            assert_eq!(serde_camel(&field_ident(json)) != json, renamed, "{json}");
        }
    }

    #[test]
    fn enum_values_become_variants() {
        for (value, variant) in [
            ("Never", "Never"),
            ("server auth", "ServerAuth"),
            ("=", "Eq"),
            ("!~", "NotTilde"),
            ("", "Empty"),
            ("1x", "X1x"),
        ] {
            assert_eq!(variant_ident(value), variant, "{value:?}");
        }
    }

    #[test]
    fn marker_arguments_are_quoted_as_the_marker_parser_reads_them() {
        assert_eq!(
            quoted("a \"b\"\n\\c\td"),
            r#""a \"b\"\n\\c\td""#,
            "quotes, newlines, backslashes and tabs escaped"
        );
    }

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
