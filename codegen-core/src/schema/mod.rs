//! What the CRD markers mean: checked against the Rust types they sit on and turned into
//! [`Patch`]es on the CRD that kube's `CustomResourceExt::crd()` builds.
//!
//! kube and schemars write the schema; markers only add what they cannot express
//! (`+kubebuilder:validation:Pattern`, `+listType=map`, CEL rules, printer columns, ...).
//! Paths are JSON property names after serde renames: `spec.items.[].name`, where `[]` is an
//! array's items and `{}` a map's values.

mod resource;

use std::collections::{BTreeMap, BTreeSet};

use quote::ToTokens;
use serde_json::{Map, Value, json};
use syn::{Attribute, ItemEnum, ItemStruct, Type};

use apiserver_rules::cel::check::{Expect, Ty, check as cel_check};

use crate::ast::{self, Shape, Structs, generic_args, is_option, shape};
use crate::attr::kube::KubeAttrs;
use crate::attr::marker::{self, Marker, Place, Step};

use crate::diag::{Ctxt, Loc, did_you_mean};
use crate::model::Resource;

/// One change to the CRD.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// Sets keys on the schema at `path`; `x-kubernetes-validations` is appended to.
    Schema {
        /// Property names from the root schema; `[]` items, `{}` map values.
        path: Vec<String>,
        /// The keys to set.
        set: Map<String, Value>,
    },
    /// Adds `field` to, or removes it from, `required` of the object schema at `path`.
    Required {
        /// The object's path.
        path: Vec<String>,
        /// The property.
        field: String,
        /// Required (`+required`) or optional (`+optional`).
        required: bool,
    },
    /// Deep-merges `value` into the CRD at a JSON pointer; arrays are appended to.
    Merge {
        /// `/spec/names` or `/spec/versions/0`.
        pointer: &'static str,
        /// The value to merge.
        value: Value,
    },
    /// The markers of the struct at `path` were read (so marker lines in its fields'
    /// descriptions are accounted for when the CRD is built).
    Read {
        /// The struct's path.
        path: Vec<String>,
    },
}

/// A field whose type the front end cannot see. The derive's generated code asks that
/// type for its markers when the CRD is built (`kube_codegen_runtime::crd::probe`).
#[derive(Debug, Clone)]
pub struct Probe {
    /// Where the type's schema is: property names, `[]`, `{}`.
    pub path: Vec<String>,
    /// The type as written.
    pub ty: Type,
}

/// Which marker a patch came from, so that a problem found in the built CRD can be shown
/// at the marker.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The schema path the marker's patch applies to (empty for resource markers).
    pub path: Vec<String>,
    /// The schema keyword it sets, when it sets one.
    pub key: Option<String>,
    /// The marker.
    pub loc: Loc,
}

/// What the markers of one resource (or one struct) give: the patches, the fields to probe
/// at run time, and where each patch came from.
#[derive(Debug, Clone, Default)]
pub struct Markers {
    /// The patches, coalesced: one `Schema` patch per path.
    pub patches: Vec<Patch>,
    /// Fields whose types may carry markers the front end cannot see (the derive only).
    pub probes: Vec<Probe>,
    /// The marker behind each schema keyword.
    pub origins: Vec<Origin>,
    /// `+kubebuilder:skipversion`: this version is left out of the kind's CRD.
    pub skip_version: bool,
}

/// What a marker may sit on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    Numeric,
    Text,
    TextOrNumeric,
    List,
    Object,
    Struct,
    Scalar,
    Anything,
}

fn needs(name: &str) -> Needs {
    match name.rsplit(':').next().unwrap_or(name) {
        "Minimum" | "Maximum" | "ExclusiveMinimum" | "ExclusiveMaximum" | "MultipleOf" => {
            Needs::Numeric
        }
        "MinLength" | "MaxLength" | "Pattern" => Needs::Text,
        "Format" => Needs::TextOrNumeric,
        "MinItems" | "MaxItems" | "UniqueItems" | "listType" | "listMapKey" => Needs::List,
        "MinProperties"
        | "MaxProperties"
        | "mapType"
        | "PreserveUnknownFields"
        | "XPreserveUnknownFields"
        | "EmbeddedResource"
        | "XEmbeddedResource" => Needs::Object,
        "structType" => Needs::Struct,
        "Enum" => Needs::Scalar,
        _ => Needs::Anything,
    }
}

/// The k8s-openapi struct a Rust type names, from the built-in types table: by its full path
/// (`k8s_openapi::api::core::v1::Container`), or, when the whole tree was searched and no
/// file of it defines the name (`bare`), by a name only one struct of the table has
/// (`Container` imported with `use`). The derive sees one item, so a bare name there may be
/// the user's own type: only full paths are checked.
fn k8s_openapi_type(ty: &syn::Type, bare: bool) -> Option<&'static apiserver_rules::builtin::Type> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let segments: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let types = apiserver_rules::builtin::types();
    if segments.first().is_some_and(|s| s == "k8s_openapi") && segments.len() > 2 {
        return types.get(&format!("io.k8s.{}", segments[1..].join(".")));
    }
    let [name] = segments.as_slice() else {
        return None;
    };
    if !bare {
        return None;
    }
    let mut found = types.all().filter(|t| t.go_name() == name.as_str());
    let first = found.next()?;
    // Several versions of one struct (`Condition` of several groups) may share a name; their
    // fields agree or the check is skipped.
    found
        .all(|t| t.fields.keys().eq(first.fields.keys()) && t.required == first.required)
        .then_some(first)
}

/// A value validation (bounds, lengths, pattern, format, counts): kube-apiserver accepts one
/// on a field of a type it does not apply to, and ignores it there, as CRDs in the wild have
/// (Karpenter's `values` list carries `maxLength` and `pattern`). Structural markers
/// (`listType`, `mapType`, ...) on the wrong type it refuses. An `Enum` there is kept as well,
/// though the server applies it: see [`kept_note`].
fn is_value_validation(name: &str) -> bool {
    matches!(
        name.rsplit(':').next().unwrap_or(name),
        "Minimum"
            | "Maximum"
            | "ExclusiveMinimum"
            | "ExclusiveMaximum"
            | "MultipleOf"
            | "MinLength"
            | "MaxLength"
            | "Pattern"
            | "Format"
            | "MinItems"
            | "MaxItems"
            | "MinProperties"
            | "MaxProperties"
            | "Enum"
    )
}

/// What a warning about a value validation on a field of another type adds.
fn kept_note(name: &str) -> &'static str {
    if name.ends_with("Enum") {
        ": kube-apiserver accepts it as written, and then refuses every value the list does not hold"
    } else {
        ": kube-apiserver accepts it there and ignores it"
    }
}

fn fits(needs: Needs, shape: &Shape<'_>) -> bool {
    let unit_enum =
        matches!(shape, Shape::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()));
    match (needs, shape) {
        (Needs::Anything, _) | (_, Shape::Unknown) => true,
        (Needs::Numeric, s) => matches!(s, Shape::Integer | Shape::Number),
        (Needs::Text, s) => matches!(s, Shape::String) || unit_enum,
        (Needs::TextOrNumeric, s) => {
            matches!(s, Shape::String | Shape::Integer | Shape::Number) || unit_enum
        }
        (Needs::List, s) => matches!(s, Shape::Array(_)),
        (Needs::Object, s) => matches!(s, Shape::Map(_) | Shape::Struct(_) | Shape::Any),
        (Needs::Struct, s) => matches!(s, Shape::Struct(_) | Shape::Any),
        (Needs::Scalar, s) => matches!(
            s,
            Shape::String | Shape::Integer | Shape::Number | Shape::Bool | Shape::Any
        ),
    }
}

fn needs_text(needs: Needs) -> &'static str {
    match needs {
        Needs::Numeric => "integers and numbers",
        Needs::Text => "strings",
        Needs::TextOrNumeric => "strings and numbers",
        Needs::List => "lists (`Vec<_>`)",
        Needs::Object => "maps and structs",
        Needs::Struct => "structs",
        Needs::Scalar => "strings, numbers and booleans",
        Needs::Anything => "any field",
    }
}

/// The keys of `#[schemars(...)]`, `#[validate(...)]` and `#[garde(...)]` on a field, as
/// `range.min`, `length.max`, `regex`, ...: the validation schemars already writes.
fn schemars_keys(attrs: &[Attribute]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for attr in attrs {
        let Some(ident) = attr.path().get_ident() else {
            continue;
        };
        if !["schemars", "validate", "garde"].contains(&ident.to_string().as_str()) {
            continue;
        }
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if meta.input.peek(syn::token::Paren) {
                let mut inner_keys = Vec::new();
                let _ = meta.parse_nested_meta(|inner| {
                    inner_keys.push(
                        inner
                            .path
                            .get_ident()
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                    );
                    if inner.input.peek(syn::Token![=]) {
                        inner.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                });
                if inner_keys.is_empty() {
                    out.insert(key.clone());
                }
                for k in inner_keys {
                    out.insert(format!("{key}.{k}"));
                }
            } else {
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                out.insert(key);
            }
            Ok(())
        });
    }
    out
}

/// The schemars keys a marker would clash with.
fn clashes(name: &str) -> &'static [&'static str] {
    match name.rsplit(':').next().unwrap_or(name) {
        "Minimum" => &["range.min"],
        "Maximum" => &["range.max"],
        "MinLength" | "MinItems" => &["length.min", "length.equal"],
        "MaxLength" | "MaxItems" => &["length.max", "length.equal"],
        "Pattern" => &[
            "regex",
            "regex.path",
            "regex.pattern",
            "pattern",
            "contains",
        ],
        "Format" => &["email", "url", "ip", "ipv4", "ipv6"],
        _ => &[],
    }
}

fn serde_default(attrs: &[Attribute]) -> bool {
    ast::serde_flag(attrs, "default")
}

/// A marker value as JSON of the field's shape, or an error message.
fn typed_value(text: &str, shape: &Shape<'_>) -> Result<Value, String> {
    let unquoted = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    match shape {
        Shape::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not an integer")),
        Shape::Number => text
            .parse::<f64>()
            .ok()
            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
            .ok_or_else(|| format!("`{text}` is not a number")),
        Shape::Bool => text
            .parse::<bool>()
            .map(Value::from)
            .map_err(|_| format!("`{text}` is not `true` or `false`")),
        // A JSON string (`"a \"b\""`) is read as JSON; anything else as written.
        Shape::String => Ok(serde_json::from_str::<String>(text)
            .map_or_else(|_| Value::from(unquoted), Value::from)),
        Shape::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()) => {
            Ok(Value::from(unquoted))
        }
        Shape::Array(_) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Array(_)) => Ok(v),
            _ => Err(format!("`{text}` is not a JSON list such as `[\"a\"]`")),
        },
        Shape::Map(_) | Shape::Struct(_) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(format!(
                "`{text}` is not a JSON object such as `{{\"a\":1}}`"
            )),
        },
        _ => Ok(serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::from(unquoted))),
    }
}

/// A number for Minimum/Maximum/MultipleOf: an integer when it is one.
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

/// The patches of one struct, relative to where it appears, and the structs below it.
#[derive(Default)]
struct Own<'a> {
    patches: Vec<Patch>,
    children: Vec<(Vec<String>, &'a ItemStruct)>,
    probes: Vec<(Vec<String>, &'a Type)>,
    origins: Vec<Origin>,
}

impl Own<'_> {
    /// A patch and the marker it came from.
    fn push(&mut self, patch: Patch, m: &Marker) {
        let (path, key) = match &patch {
            Patch::Schema { path, set } => (path.clone(), set.keys().next().cloned()),
            Patch::Required { path, field, .. } => {
                let mut p = path.clone();
                p.push(field.clone());
                (p, Some("required".to_owned()))
            }
            Patch::Merge { .. } | Patch::Read { .. } => (Vec::new(), None),
        };
        let loc = if m.value.is_some() {
            m.value_loc.clone()
        } else {
            m.name_loc.clone()
        };
        self.origins.push(Origin { path, key, loc });
        self.patches.push(patch);
    }
}

/// Each struct's own patches, checked once however often (and from wherever) it is used:
/// the CLI fills it file by file, so that a struct's mistakes are reported in its own file.
#[derive(Default)]
pub struct Memo<'a> {
    own: BTreeMap<usize, Own<'a>>,
    enums_checked: BTreeSet<usize>,
}

fn key_of<T>(item: &T) -> usize {
    std::ptr::from_ref(item) as usize
}

/// Walks the spec and status structs and everything below them that the source shows.
struct Walker<'s, 'm, 'a> {
    structs: &'s Structs<'a>,
    memo: &'m mut Memo<'a>,
    /// Record fields of types the source does not show, for run-time probes (the derive).
    probe: bool,
}

/// Whether `s` is a spec: its type-level markers are resource markers.
fn is_spec(s: &ItemStruct) -> bool {
    s.attrs.iter().any(|a| a.path().is_ident("kube"))
}

impl<'a> Walker<'_, '_, 'a> {
    fn expand(
        &mut self,
        cx: &mut Ctxt,
        s: &'a ItemStruct,
        at: &[String],
        out: &mut Markers,
        depth: usize,
    ) {
        if depth > 16 {
            return;
        }
        let key = key_of(s);
        if !self.memo.own.contains_key(&key) {
            let own = self.own(cx, s);
            self.memo.own.insert(key, own);
        }
        let own = &self.memo.own[&key];
        let children = own.children.clone();
        out.patches.push(Patch::Read { path: at.to_vec() });
        for p in &own.patches {
            out.patches.push(rebase(p, at));
        }
        let join = |rel: &[String]| at.iter().chain(rel).cloned().collect::<Vec<_>>();
        for (rel, ty) in &own.probes {
            out.probes.push(Probe {
                path: join(rel),
                ty: (*ty).clone(),
            });
        }
        for o in &own.origins {
            out.origins.push(Origin {
                path: join(&o.path),
                key: o.key.clone(),
                loc: o.loc.clone(),
            });
        }
        for (rel, child) in children {
            let path: Vec<String> = at.iter().cloned().chain(rel).collect();
            self.expand(cx, child, &path, out, depth + 1);
        }
    }

    /// The struct's own patches, checked once however often it appears.
    fn own(&mut self, cx: &mut Ctxt, s: &'a ItemStruct) -> Own<'a> {
        let mut own = Own::default();
        for m in marker::read(cx, &s.attrs) {
            match m.place {
                Place::Field => cx.error_at(
                    &m.name_loc,
                    format!(
                        "`{}` goes on a field, not on the struct `{}`",
                        m.display(),
                        s.ident
                    ),
                ),
                // Resource markers are read from the spec struct by `resource_patches`.
                Place::Type if is_spec(s) => {}
                Place::Type => cx.error_at(
                    &m.name_loc,
                    format!(
                        "`{}` goes on the spec struct (the one with `#[kube(...)]`), not on `{}`",
                        m.display(),
                        s.ident
                    ),
                ),
                Place::Both => {
                    if let Some(p) = field_patch(cx, &m, &Shape::Struct(s), self.structs, &[]) {
                        own.push(p, &m);
                    }
                }
            }
        }
        let container = ast::Container::read(s);
        for field in &container.fields {
            let f = field.syn;
            let markers = marker::read(cx, &f.attrs);
            if field.flatten {
                if let Some(m) = markers.first() {
                    cx.error_at(&m.name_loc, format!("`{}` on a `#[serde(flatten)]` field has no schema of its own; put it on the fields of the flattened struct", m.display()));
                }
                if let Shape::Struct(inner) = shape(&f.ty, self.structs) {
                    own.children.push((Vec::new(), inner));
                }
                continue;
            }
            let Some(name) = field.json.clone() else {
                if let Some(m) = markers.first() {
                    cx.error_at(
                        &m.name_loc,
                        format!(
                            "`{}` on a `#[serde(skip)]` field: the field is not in the schema",
                            m.display()
                        ),
                    );
                }
                continue;
            };
            let field_shape = shape(&f.ty, self.structs);
            self.check_enum(cx, &field_shape);
            self.field(
                cx,
                &mut own,
                f,
                &name,
                &field_shape,
                &markers,
                container.default,
            );
            // The structs below this field.
            let mut rel = vec![name.clone()];
            let mut sh = field_shape;
            for _ in 0..8 {
                match sh {
                    Shape::Array(t) => {
                        rel.push("[]".to_owned());
                        sh = shape(t, self.structs);
                    }
                    Shape::Map(t) => {
                        rel.push("{}".to_owned());
                        sh = shape(t, self.structs);
                    }
                    Shape::Enum(_) => {
                        self.check_enum(cx, &sh);
                        break;
                    }
                    Shape::Struct(inner) => {
                        own.children.push((rel, inner));
                        break;
                    }
                    Shape::Unknown if self.probe => {
                        if let Some(ty) = probe_type(&f.ty) {
                            own.probes.push((rel, ty));
                        }
                        break;
                    }
                    _ => break,
                }
            }
        }
        own
    }

    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        cx: &mut Ctxt,
        own: &mut Own<'a>,
        f: &syn::Field,
        name: &str,
        field_shape: &Shape<'a>,
        markers: &[Marker],
        container_default: bool,
    ) {
        let taken = schemars_keys(&f.attrs);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut optional = None;
        let mut required = None;
        for m in markers {
            if m.place == Place::Type {
                cx.error_at(
                    &m.name_loc,
                    format!("`{}` goes on the spec struct, not on a field", m.display()),
                );
                continue;
            }
            let repeatable = matches!(m.name, "kubebuilder:validation:XValidation" | "listMapKey");
            if !repeatable && !seen.insert(m.display()) {
                cx.error_at(
                    &m.name_loc,
                    format!("duplicate `{}` on `{name}`", m.display()),
                );
                continue;
            }
            let need = needs(m.name);
            if !m.steps.is_empty() {
                // `+kubebuilder:validation:items:<Name>` (the list's items) or kube-codegen's
                // `+kube-codegen:validation:<steps>:<Name>` (a map's values, nested lists):
                // the same marker on the values inside the field.
                let mut inner = *field_shape;
                let mut what = format!("`{name}`");
                let mut path = vec![name.to_owned()];
                let mut reached = true;
                for step in &m.steps {
                    let (expects, segment, noun) = match step {
                        Step::Items => ("the items of a list", "[]", "items"),
                        Step::Values => ("the values of a map", "{}", "values"),
                    };
                    inner = match (step, inner) {
                        (Step::Items, Shape::Array(t)) | (Step::Values, Shape::Map(t)) => {
                            shape(t, self.structs)
                        }
                        (_, Shape::Unknown) => Shape::Unknown,
                        (_, other) => {
                            cx.error_at(
                                &m.name_loc,
                                format!(
                                    "`{}` applies to {expects}, but {what} is {}",
                                    m.display(),
                                    other.describe()
                                ),
                            );
                            reached = false;
                            break;
                        }
                    };
                    what = format!("the {noun} of {what}");
                    path.push(segment.to_owned());
                }
                if !reached {
                    continue;
                }
                if !fits(need, &inner) {
                    let message = format!(
                        "`{}` applies to {}, but {what} are {}",
                        m.display(),
                        needs_text(need),
                        inner.describe()
                    );
                    if !is_value_validation(m.name) {
                        cx.error_at(&m.name_loc, message);
                        continue;
                    }
                    cx.warn_at(&m.name_loc, format!("{message}{}", kept_note(m.name)));
                }
                if let Some(p) = field_patch(cx, m, &inner, self.structs, &path) {
                    own.push(p, m);
                }
                continue;
            }
            if !fits(need, field_shape) {
                let message = format!(
                    "`{}` applies to {}, but `{name}` is {} (`{}`)",
                    m.display(),
                    needs_text(need),
                    field_shape.describe(),
                    f.ty.to_token_stream().to_string().replace(' ', "")
                );
                if !is_value_validation(m.name) {
                    cx.error_at(&m.name_loc, message);
                    continue;
                }
                // Kept in the CRD as written, as controller-gen and the real server keep it.
                cx.warn_at(&m.name_loc, format!("{message}{}", kept_note(m.name)));
            }
            if let Some(clash) = clashes(m.name).iter().find(|c| taken.contains(**c)) {
                let (attr, key) = clash.split_once('.').unwrap_or((clash, ""));
                let written = if key.is_empty() {
                    attr.to_owned()
                } else {
                    format!("{attr}({key} = ...)")
                };
                cx.error_at(
                    &m.name_loc,
                    format!("`{}` conflicts with `#[schemars({written})]` (or `validate`/`garde`) on `{name}`, which already sets it; keep one", m.display()),
                );
                continue;
            }
            match m.name {
                "optional" | "kubebuilder:validation:Optional" => optional = Some(m),
                "required" | "kubebuilder:validation:Required" => required = Some(m),
                "kubebuilder:validation:Enum" if matches!(field_shape, Shape::Enum(_)) => {
                    cx.error_at(
                        &m.name_loc,
                        format!(
                            "`{}` on `{name}`: its Rust enum already fixes the values",
                            m.display()
                        ),
                    );
                }
                "listMapKey" => {}
                _ => {
                    if let Some(p) =
                        field_patch(cx, m, field_shape, self.structs, &[name.to_owned()])
                    {
                        own.push(p, m);
                    }
                }
            }
        }
        self.list_map(cx, own, name, field_shape, markers);
        check_default(cx, own, name, field_shape, markers);
        default_on_nullable(cx, f, name, markers);
        match (optional, required) {
            (Some(o), Some(_)) => cx.error_at(
                &o.name_loc,
                format!("`{name}` is marked both optional and required; keep one"),
            ),
            (Some(o), None) => {
                if !is_option(&f.ty) && !serde_default(&f.attrs) && !container_default {
                    cx.error_at(
                        &o.name_loc,
                        format!("`{}` on `{name}`, which serde requires: objects without it would be accepted by the API server but fail to deserialize; make it `Option<_>` or add `#[serde(default)]`", o.display()),
                    );
                } else {
                    let patch = Patch::Required {
                        path: Vec::new(),
                        field: name.to_owned(),
                        required: false,
                    };
                    own.push(patch, o);
                }
            }
            (None, Some(r)) => {
                let patch = Patch::Required {
                    path: Vec::new(),
                    field: name.to_owned(),
                    required: true,
                };
                own.push(patch, r);
            }
            (None, None) => {}
        }
    }

    /// `+listType=map` with its `+listMapKey`s.
    fn list_map(
        &mut self,
        cx: &mut Ctxt,
        own: &mut Own<'a>,
        name: &str,
        field_shape: &Shape<'a>,
        markers: &[Marker],
    ) {
        let keys: Vec<&Marker> = markers.iter().filter(|m| m.name == "listMapKey").collect();
        let list_type = markers.iter().find(|m| m.name == "listType");
        let is_map = list_type.is_some_and(|m| m.value.as_deref() == Some("map"));
        if !is_map {
            if let Some(k) = keys.first() {
                cx.error_at(
                    &k.name_loc,
                    format!("`+listMapKey` on `{name}` needs `+listType=map`"),
                );
            }
            if let (Some(lt), Shape::Array(item)) = (list_type, field_shape)
                && lt.value.as_deref() == Some("set")
                && matches!(
                    shape(item, self.structs),
                    Shape::Struct(_) | Shape::Map(_) | Shape::Array(_)
                )
            {
                cx.error_at(&lt.value_loc, format!("`+listType=set` on `{name}` needs scalar items; use `+listType=map` with `+listMapKey` for structs"));
            }
            return;
        }
        let Some(lt) = list_type else { return };
        if keys.is_empty() {
            cx.error_at(
                &lt.value_loc,
                format!("`+listType=map` on `{name}` needs at least one `+listMapKey=<field>`"),
            );
            return;
        }
        let item = match field_shape {
            Shape::Array(t) => shape(t, self.structs),
            _ => Shape::Unknown,
        };
        if let Shape::Struct(s) = item
            && let Some(fields) = ast::json_fields(s)
        {
            for k in &keys {
                let key = k.value.as_deref().unwrap_or_default();
                if let Some(why) = key_not_required(s, key) {
                    cx.error_at(
                        &k.value_loc,
                        format!("`+listMapKey={key}`: `{}.{key}` {why}; kube-apiserver rejects list-map keys that are neither required nor defaulted: make it non-`Option`, or add `+kubebuilder:default`", s.ident),
                    );
                }
                if !fields.iter().any(|(n, _)| n == key) {
                    let names = fields.iter().map(|(n, _)| n.as_str());
                    cx.error_at(
                        &k.value_loc,
                        format!(
                            "`+listMapKey={key}`: `{}` has no field `{key}` (serde names){}",
                            s.ident,
                            did_you_mean(key, names)
                        ),
                    );
                }
            }
        } else if let (Shape::Unknown, Shape::Array(item_ty)) = (item, field_shape)
            && let Some(ty) = k8s_openapi_type(item_ty, self.structs.sees_tree())
        {
            // Items of a k8s-openapi type: its fields from the built-in types table.
            for k in &keys {
                let key = k.value.as_deref().unwrap_or_default();
                let go = ty.go_name();
                match ty.fields.get(key) {
                    None => cx.error_at(
                        &k.value_loc,
                        format!(
                            "`+listMapKey={key}`: k8s-openapi's `{go}` has no field `{key}`{}",
                            did_you_mean(key, ty.fields.keys().map(String::as_str))
                        ),
                    ),
                    Some(f) if f.default.is_none() && !ty.required.iter().any(|r| r == key) => {
                        cx.error_at(
                            &k.value_loc,
                            format!("`+listMapKey={key}`: `{go}.{key}` is optional in k8s-openapi's schema and has no default; kube-apiserver rejects list-map keys that are neither required nor defaulted"),
                        );
                    }
                    Some(_) => {}
                }
            }
        } else if !matches!(item, Shape::Unknown) {
            cx.error_at(
                &lt.value_loc,
                format!("`+listType=map` on `{name}` needs struct items"),
            );
        }
        let values: Vec<Value> = keys
            .iter()
            .filter_map(|k| k.value.clone())
            .map(Value::from)
            .collect();
        let mut set = Map::new();
        set.insert("x-kubernetes-list-map-keys".into(), Value::Array(values));
        let patch = Patch::Schema {
            path: vec![name.to_owned()],
            set,
        };
        own.push(patch, keys[0]);
    }

    /// Enums that kube's structural-schema rewriter cannot express (it panics on them).
    fn check_enum(&mut self, cx: &mut Ctxt, s: &Shape<'a>) {
        let Shape::Enum(e) = s else { return };
        if !self.memo.enums_checked.insert(key_of(*e)) {
            return;
        }
        check_enum(cx, e);
    }
}

/// Why the field of `s` named `key` (its JSON name) is neither required nor defaulted in
/// the schema, or `None` when it is one of them (or is not there).
fn key_not_required(s: &ItemStruct, key: &str) -> Option<&'static str> {
    let container = ast::Container::read(s);
    let f = container.field(key)?.syn;
    let markers = marker::read_checked_elsewhere(&f.attrs);
    let has = |names: &[&str]| markers.iter().any(|m| names.contains(&m.name));
    let defaulted = has(&["kubebuilder:default"]) || serde_default(&f.attrs) || container.default;
    if defaulted || has(&["required", "kubebuilder:validation:Required"]) {
        return None;
    }
    if has(&["optional", "kubebuilder:validation:Optional"]) {
        return Some("is marked optional and has no default");
    }
    is_option(&f.ty).then_some("is an `Option` without a default")
}

/// A `+kubebuilder:default` on an `Option` that serde writes as `null` when `None`: kube's
/// schema makes the field `nullable`, and kube-apiserver keeps a `null` of a nullable field
/// instead of defaulting it, so the default never applies to objects written from Rust.
/// Legal (YAML that leaves the field out is defaulted), hence a warning.
fn default_on_nullable(cx: &mut Ctxt, f: &syn::Field, name: &str, markers: &[Marker]) {
    let Some(dm) = markers.iter().find(|m| m.name == "kubebuilder:default") else {
        return;
    };
    let not_nullable = markers
        .iter()
        .any(|m| m.name == "nullable" && m.value.as_deref() == Some("false"));
    let skips_none = ast::serde_value(&f.attrs, "skip_serializing_if").is_some();
    if is_option(&f.ty) && !not_nullable && !skips_none {
        cx.warn_at(
            &dm.name_loc,
            format!("`+kubebuilder:default` on `{name}`, an `Option` serde writes as `null` when `None`: kube-apiserver keeps the `null` of a nullable field and never applies the default to objects written from Rust; add `#[serde(skip_serializing_if = \"Option::is_none\")]` (or `+nullable=false`)"),
        );
    }
}

/// A `+kubebuilder:default` that breaks the field's own markers or its Rust enum: the API
/// server validates defaults against their schema and rejects the CRD. Patterns are left to
/// the check of the built CRD (`kube_codegen_runtime::crd`), which has a regex engine.
fn check_default(cx: &mut Ctxt, own: &Own<'_>, name: &str, shape: &Shape<'_>, markers: &[Marker]) {
    let Some(dm) = markers.iter().find(|m| m.name == "kubebuilder:default") else {
        return;
    };
    let mut schema = Map::new();
    for p in &own.patches {
        if let Patch::Schema { path, set } = p
            && path.len() == 1
            && path[0] == name
        {
            schema.extend(set.clone());
        }
    }
    let Some(default) = schema.get("default") else {
        return;
    };
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut why = Vec::new();
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(default)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        why.push(format!(
            "is not one of `+kubebuilder:validation:Enum` ({})",
            list.join(", ")
        ));
    }
    if let (Shape::Enum(e), Value::String(text)) = (shape, default)
        && e.variants.iter().all(|v| v.fields.is_empty())
    {
        let rule = ast::serde_value(&e.attrs, "rename_all");
        let names: Vec<String> = e
            .variants
            .iter()
            .map(|v| {
                ast::serde_value(&v.attrs, "rename")
                    .unwrap_or_else(|| ast::renamed_variant(&v.ident.to_string(), rule.as_deref()))
            })
            .collect();
        if !names.contains(text) {
            why.push(format!(
                "is not a variant of `{}` ({}){}",
                e.ident,
                names.join(", "),
                did_you_mean(text, names.iter().map(String::as_str))
            ));
        }
    }
    if let Some(d) = default.as_f64() {
        if let Some(min) = num("minimum") {
            if flag("exclusiveMinimum") && d <= min {
                why.push(format!("is not greater than the exclusive minimum {min}"));
            } else if d < min {
                why.push(format!(
                    "is less than `+kubebuilder:validation:Minimum={min}`"
                ));
            }
        }
        if let Some(max) = num("maximum") {
            if flag("exclusiveMaximum") && d >= max {
                why.push(format!("is not less than the exclusive maximum {max}"));
            } else if d > max {
                why.push(format!(
                    "is greater than `+kubebuilder:validation:Maximum={max}`"
                ));
            }
        }
        if let Some(m) = num("multipleOf")
            && m > 0.0
            && ((d / m) - (d / m).round()).abs() > 1e-9
        {
            why.push(format!("is not a multiple of {m}"));
        }
    }
    let count = match default {
        Value::String(t) => Some(("Length", t.chars().count())),
        Value::Array(a) => Some(("Items", a.len())),
        Value::Object(o) => Some(("Properties", o.len())),
        _ => None,
    };
    if let Some((what, n)) = count {
        let key = |prefix: &str| format!("{prefix}{what}");
        if let Some(min) = schema.get(&key("min")).and_then(Value::as_u64)
            && (n as u64) < min
        {
            why.push(format!(
                "is shorter than `+kubebuilder:validation:Min{what}={min}`"
            ));
        }
        if let Some(max) = schema.get(&key("max")).and_then(Value::as_u64)
            && (n as u64) > max
        {
            why.push(format!(
                "is longer than `+kubebuilder:validation:Max{what}={max}`"
            ));
        }
    }
    if !why.is_empty() {
        cx.error_at(
            &dm.value_loc,
            format!(
                "the default of `{name}` ({default}) {}: kube-apiserver rejects a CRD whose default breaks the field's own schema",
                why.join(", and ")
            ),
        );
    }
}

/// Reports an enum that kube's `crd()` would panic on: internally or adjacently tagged, or
/// externally tagged with both unit and data variants.
pub fn check_enum(cx: &mut Ctxt, e: &ItemEnum) {
    if ast::serde_flag(&e.attrs, "untagged") || e.variants.len() < 2 {
        return;
    }
    if let Some(tag) = ast::serde_value(&e.attrs, "tag") {
        cx.error(
            e.ident.span(),
            format!("`{}` is tagged with `#[serde(tag = \"{tag}\")]`: a CRD's structural schema cannot express that (each variant gives `{tag}` a different schema, and kube's `crd()` panics); use an externally tagged enum (serde's default) with data in every variant, or a struct with optional fields", e.ident),
        );
        return;
    }
    let unit = e.variants.iter().find(|v| v.fields.is_empty());
    let data = e.variants.iter().find(|v| !v.fields.is_empty());
    if let (Some(u), Some(d)) = (unit, data) {
        cx.error(
            u.ident.span(),
            format!("`{}` mixes unit variants (`{}`, a string) with data variants (`{}`, an object): a CRD's structural schema needs one type, and kube's `crd()` panics; give every variant data, or none", e.ident, u.ident, d.ident),
        );
    }
}

fn rebase(p: &Patch, at: &[String]) -> Patch {
    let join = |path: &[String]| at.iter().chain(path).cloned().collect::<Vec<_>>();
    match p {
        Patch::Schema { path, set } => Patch::Schema {
            path: join(path),
            set: set.clone(),
        },
        Patch::Required {
            path,
            field,
            required,
        } => Patch::Required {
            path: join(path),
            field: field.clone(),
            required: *required,
        },
        Patch::Read { path } => Patch::Read { path: join(path) },
        Patch::Merge { .. } => p.clone(),
    }
}

/// The innermost type of a field (below `Option`, `Vec`, maps, `Box`) when it names a type
/// that may derive `CrdMarkers`: a path without references or trait objects.
fn probe_type(ty: &Type) -> Option<&Type> {
    let mut ty = ast::inner(ty);
    for _ in 0..8 {
        let Type::Path(p) = ty else {
            return None;
        };
        let last = p.path.segments.last()?;
        let args = generic_args(ty);
        ty = match last.ident.to_string().as_str() {
            "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => ast::inner(args.first()?),
            "HashMap" | "BTreeMap" => ast::inner(args.get(1)?),
            _ => return p.qself.is_none().then_some(ty),
        };
    }
    None
}

/// The number of a `Minimum`, `Maximum` or `MultipleOf` marker, or `None` (reported) when
/// `value` is not one. What kube-apiserver 1.36 stores although JSON Schema frowns on it (a
/// fraction on an integer, a `MultipleOf` not above 0) is kept, with a warning.
fn bound(cx: &mut Ctxt, m: &Marker, value: &str, s: &Shape<'_>) -> Option<Value> {
    let Some(n) = number(value) else {
        cx.error_at(
            &m.value_loc,
            format!("`{}`: `{value}` is not a number", m.display()),
        );
        return None;
    };
    if matches!(s, Shape::Integer) && !n.is_i64() {
        cx.warn_at(
            &m.value_loc,
            format!(
                "`{}`: `{value}` is not an integer, and the field is; kube-apiserver accepts it as written",
                m.display()
            ),
        );
    }
    if m.name.ends_with("MultipleOf") && n.as_f64().is_some_and(|f| f <= 0.0) {
        cx.warn_at(
            &m.value_loc,
            format!(
                "`{}`: `{value}` is not greater than 0, as JSON Schema wants; kube-apiserver accepts it as written",
                m.display()
            ),
        );
    }
    Some(n)
}

/// The values of an `Enum` marker as the field's type reads them. kube-apiserver 1.36
/// accepts a value of another type (no value of the field can equal it): kept as JSON reads
/// it, with a warning.
fn enum_values(cx: &mut Ctxt, m: &Marker, value: &str, s: &Shape<'_>) -> Value {
    let mut values = Vec::new();
    for v in value.split(';').filter(|v| !v.is_empty()) {
        let text = v.trim();
        match typed_value(text, s) {
            Ok(v) => values.push(v),
            Err(e) => {
                cx.warn_at(
                    &m.value_loc,
                    format!(
                        "`{}`: {e}; kube-apiserver accepts it as written, and no value of the field equals it",
                        m.display()
                    ),
                );
                values.push(
                    serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::from(text)),
                );
            }
        }
    }
    Value::Array(values)
}

/// The schema keys one field (or type-level) marker sets.
fn field_patch(
    cx: &mut Ctxt,
    m: &Marker,
    s: &Shape<'_>,
    structs: &Structs<'_>,
    path: &[String],
) -> Option<Patch> {
    let value = m.value.as_deref().unwrap_or_default();
    let bad = |cx: &mut Ctxt, what: String| {
        cx.error_at(&m.value_loc, format!("`{}`: {what}", m.display()));
        None::<Patch>
    };
    let key_value: (&str, Value) = match m.name.rsplit(':').next().unwrap_or(m.name) {
        k @ ("Minimum" | "Maximum" | "MultipleOf") => {
            let key = match k {
                "Minimum" => "minimum",
                "Maximum" => "maximum",
                _ => "multipleOf",
            };
            (key, bound(cx, m, value, s)?)
        }
        k @ ("ExclusiveMinimum" | "ExclusiveMaximum") => {
            let Ok(b) = value.parse::<bool>() else {
                return bad(cx, format!("`{value}` is not `true` or `false`"));
            };
            (
                if k == "ExclusiveMinimum" {
                    "exclusiveMinimum"
                } else {
                    "exclusiveMaximum"
                },
                Value::from(b),
            )
        }
        k @ ("MinLength" | "MaxLength" | "MinItems" | "MaxItems" | "MinProperties"
        | "MaxProperties") => {
            let Ok(n) = value.parse::<u64>() else {
                return bad(cx, format!("`{value}` is not a non-negative integer"));
            };
            let key = match k {
                "MinLength" => "minLength",
                "MaxLength" => "maxLength",
                "MinItems" => "minItems",
                "MaxItems" => "maxItems",
                "MinProperties" => "minProperties",
                _ => "maxProperties",
            };
            (key, Value::from(n))
        }
        "UniqueItems" => {
            let Ok(b) = value.parse::<bool>() else {
                return bad(cx, format!("`{value}` is not `true` or `false`"));
            };
            if !b {
                return None;
            }
            // Kubernetes rejects `uniqueItems: true` in structural schemas; a set list is
            // how the API server enforces unique items.
            if let Shape::Array(_) = s {
                ("x-kubernetes-list-type", Value::from("set"))
            } else {
                return None;
            }
        }
        "Pattern" => (
            "pattern",
            Value::from(
                value
                    .strip_prefix('`')
                    .and_then(|v| v.strip_suffix('`'))
                    .unwrap_or(value),
            ),
        ),
        // `Format=""`: no format, not even the one the Rust type implies (`int64` for
        // `i64`), as in a schema that says only `type: integer`.
        "Format" if value == "\"\"" => ("format", Value::Null),
        "Format" => ("format", Value::from(value)),
        "Enum" => ("enum", enum_values(cx, m, value, s)),
        "default" => match typed_value(value, s) {
            Ok(v) => ("default", v),
            Err(e) => return bad(cx, e),
        },
        "XValidation" => {
            return xvalidation(cx, m, &crate::cel_type::at_marker(s, structs)).map(|rule| {
                let mut set = Map::new();
                set.insert("x-kubernetes-validations".into(), Value::Array(vec![rule]));
                Patch::Schema {
                    path: path.to_vec(),
                    set,
                }
            });
        }
        "EmbeddedResource" | "XEmbeddedResource" => {
            ("x-kubernetes-embedded-resource", Value::from(true))
        }
        "PreserveUnknownFields" | "XPreserveUnknownFields" => {
            ("x-kubernetes-preserve-unknown-fields", Value::from(true))
        }
        "Type" => {
            const TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "object", "array"];
            if !TYPES.contains(&value) {
                return bad(
                    cx,
                    format!(
                        "`{value}` is not one of {}{}",
                        TYPES.join(", "),
                        did_you_mean(value, TYPES)
                    ),
                );
            }
            ("type", Value::from(value))
        }
        "XIntOrString" => {
            // An int-or-string schema has no type of its own (a JSON null drops the key).
            let mut set = Map::new();
            set.insert("x-kubernetes-int-or-string".into(), Value::from(true));
            set.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
            set.insert("type".into(), Value::Null);
            set.insert("format".into(), Value::Null);
            return Some(Patch::Schema {
                path: path.to_vec(),
                set,
            });
        }
        "nullable" => match value {
            "true" => ("nullable", Value::from(true)),
            // Drops the `nullable: true` kube writes for every `Option`.
            "false" => ("nullable", Value::Null),
            other => return bad(cx, format!("`{other}` is not `true` or `false`")),
        },
        k @ ("listType" | "mapType" | "structType") => {
            let allowed: &[&str] = if k == "listType" {
                &["atomic", "set", "map"]
            } else {
                &["atomic", "granular"]
            };
            if !allowed.contains(&value) {
                return bad(
                    cx,
                    format!(
                        "`{value}` is not one of {}{}",
                        allowed.join(", "),
                        did_you_mean(value, allowed.iter().copied())
                    ),
                );
            }
            // `+structType` is written as `x-kubernetes-map-type` too.
            let key = if k == "listType" {
                "x-kubernetes-list-type"
            } else {
                "x-kubernetes-map-type"
            };
            (key, Value::from(value))
        }
        _ => return None,
    };
    let mut set = Map::new();
    set.insert(key_value.0.into(), key_value.1);
    if m.name.ends_with("EmbeddedResource") {
        // The API server wants an embedded object's schema to be an object.
        set.insert("type".into(), Value::from("object"));
    }
    Some(Patch::Schema {
        path: path.to_vec(),
        set,
    })
}

const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

fn xvalidation(cx: &mut Ctxt, m: &Marker, self_ty: &Ty) -> Option<Value> {
    let mut rule = Map::new();
    for arg in &m.args {
        let key = match arg.key.as_str() {
            "rule" => "rule",
            "message" => "message",
            "messageExpression" => "messageExpression",
            "fieldPath" => "fieldPath",
            "reason" => {
                if !REASONS.contains(&arg.value.as_str()) {
                    cx.error_at(
                        &arg.loc,
                        format!(
                            "`reason={}` is not one of {}{}",
                            arg.value,
                            REASONS.join(", "),
                            did_you_mean(&arg.value, REASONS.iter().copied())
                        ),
                    );
                    return None;
                }
                "reason"
            }
            "optionalOldSelf" => {
                let Ok(b) = arg.value.parse::<bool>() else {
                    cx.error_at(&arg.loc, "`optionalOldSelf` is `true` or `false`");
                    return None;
                };
                rule.insert("optionalOldSelf".into(), Value::from(b));
                continue;
            }
            other => {
                let keys = [
                    "rule",
                    "message",
                    "messageExpression",
                    "reason",
                    "fieldPath",
                    "optionalOldSelf",
                ];
                cx.error_at(
                    &arg.loc,
                    format!(
                        "unknown key `{other}` in `+kubebuilder:validation:XValidation`{}",
                        did_you_mean(other, keys)
                    ),
                );
                return None;
            }
        };
        rule.insert(key.into(), Value::from(arg.value.clone()));
    }
    if !rule.contains_key("rule") {
        cx.error_at(
            &m.name_loc,
            "`+kubebuilder:validation:XValidation` needs `rule=\"<CEL>\"`",
        );
        return None;
    }
    // Compiled and type-checked here, as the API server does when the CRD is created.
    let optional = rule.get("optionalOldSelf") == Some(&Value::Bool(true));
    for (key, expect) in [
        ("rule", Expect::Rule),
        ("messageExpression", Expect::Message),
    ] {
        let Some(source) = rule.get(key).and_then(Value::as_str) else {
            continue;
        };
        if let Err(why) = cel_check(source, self_ty, optional, expect) {
            let at = m
                .args
                .iter()
                .find(|a| a.key == key)
                .map_or(&m.name_loc, |a| &a.loc);
            cx.error_at(
                at,
                format!("`{key}` of `+kubebuilder:validation:XValidation` would be refused by the API server: {why}"),
            );
            return None;
        }
    }
    Some(Value::Object(rule))
}

/// Every patch of one resource: its resource markers and the markers of its spec, status
/// and the structs below them. `structs` is what the source shows (the derive: the spec).
/// With `probe` (the derive), fields of types the source does not show are recorded as
/// [`Probe`]s, and so is a status type it does not show.
pub fn resource_patches<'a>(
    cx: &mut Ctxt,
    spec: &'a ItemStruct,
    resource: &Resource,
    structs: &Structs<'a>,
    memo: &mut Memo<'a>,
    probe: bool,
) -> Markers {
    let kube = &resource.kube;
    let mut out = Markers::default();
    let mut walker = Walker {
        structs,
        memo,
        probe,
    };
    // With `no_spec` the struct's fields are the object's root properties.
    let root: Vec<String> = if kube.no_spec.is_some() {
        Vec::new()
    } else {
        vec!["spec".to_owned()]
    };
    walker.expand(cx, spec, &root, &mut out, 0);
    let status_name = kube
        .status
        .as_ref()
        .map(|s| s.value.rsplit("::").next().unwrap_or(&s.value).to_owned());
    let status = status_name.as_deref().and_then(|name| structs.get(name));
    if let Some(status) = status {
        walker.expand(cx, status, &["status".to_owned()], &mut out, 0);
    } else if probe
        && let Some(s) = &kube.status
        && let Ok(ty) = syn::parse_str::<Type>(&s.value)
    {
        out.probes.push(Probe {
            path: vec!["status".to_owned()],
            ty,
        });
    }
    let markers = marker::read_checked_elsewhere(&spec.attrs);
    out.skip_version = markers.iter().any(|m| m.name == "kubebuilder:skipversion");
    for m in &markers {
        if m.place == Place::Type
            && let Some(p) = resource::patch(
                cx,
                m,
                &resource::Context {
                    kube,
                    resource,
                    spec,
                    status,
                    structs,
                },
            )
        {
            out.origins.push(Origin {
                path: Vec::new(),
                key: None,
                loc: m.name_loc.clone(),
            });
            out.patches.push(p);
        }
    }
    check_approval(cx, kube, resource, &out.patches);
    out.patches = coalesce(out.patches);
    out
}

/// Checks the markers of `s` (any struct of an API tree) and keeps its patches in `memo`,
/// reporting mistakes to `cx`, the context of the file that defines it.
pub fn check_struct<'a>(
    cx: &mut Ctxt,
    s: &'a ItemStruct,
    structs: &Structs<'a>,
    memo: &mut Memo<'a>,
) {
    let key = key_of(s);
    if memo.own.contains_key(&key) {
        return;
    }
    let mut walker = Walker {
        structs,
        memo,
        probe: false,
    };
    let own = walker.own(cx, s);
    walker.memo.own.insert(key, own);
}

/// The markers of a struct that derives `CrdMarkers`, relative to where it appears.
pub fn struct_markers(cx: &mut Ctxt, s: &ItemStruct) -> Markers {
    let structs = Structs::new([], Some(s));
    let mut memo = Memo::default();
    let mut out = Markers::default();
    let mut walker = Walker {
        structs: &structs,
        memo: &mut memo,
        probe: true,
    };
    walker.expand(cx, s, &[], &mut out, 0);
    out.patches = coalesce(out.patches);
    out
}

/// Whether kube-apiserver wants the `api-approved.kubernetes.io` annotation on CRDs of
/// `group`: `k8s.io`, `kubernetes.io` and their subdomains.
pub fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

const APPROVAL: &str = "api-approved.kubernetes.io";

/// A CRD of a protected group without the approval annotation is rejected by the API
/// server: say so where the group is written.
fn check_approval(cx: &mut Ctxt, kube: &KubeAttrs, resource: &Resource, patches: &[Patch]) {
    if resource.builtin || !is_protected_group(&resource.group) {
        return;
    }
    let by_marker = patches.iter().any(|p| {
        matches!(p, Patch::Merge { pointer: "/metadata", value } if value.pointer("/annotations/api-approved.kubernetes.io").is_some())
    });
    let by_kube = kube.annotations.iter().any(|(k, _)| k.value == APPROVAL);
    if by_marker || by_kube {
        return;
    }
    let span = kube.group.as_ref().map_or(resource.span, |g| g.span);
    cx.error(
        span,
        format!(
            "group `{}` is protected: kube-apiserver rejects its CRD without the `{APPROVAL}` annotation; add `/// +kubebuilder:metadata:annotations=\"{APPROVAL}=<URL of the API review>\"` to the spec struct, or `=unapproved, <reason>` for an API Kubernetes did not review",
            resource.group
        ),
    );
}

/// One `Schema` patch per path (the first one's place), keys in marker order.
fn coalesce(patches: Vec<Patch>) -> Vec<Patch> {
    let mut out: Vec<Patch> = Vec::new();
    for p in patches {
        if let Patch::Schema { path, set } = &p
            && let Some(Patch::Schema { set: have, .. }) = out
                .iter_mut()
                .find(|q| matches!(q, Patch::Schema { path: other, .. } if other == path))
        {
            for (k, v) in set.clone() {
                match (have.get_mut(&k), v) {
                    (Some(Value::Array(list)), Value::Array(add))
                        if k == "x-kubernetes-validations" =>
                    {
                        list.extend(add)
                    }
                    (_, v) => {
                        have.insert(k, v);
                    }
                }
            }
            continue;
        }
        out.push(p);
    }
    out
}
