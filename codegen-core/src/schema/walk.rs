//! The walk: from a spec (or status) struct down through its fields to every struct the
//! source shows, reading each struct's markers once ([`Memo`]) and placing its patches at
//! each path where the struct is used.

use std::collections::{BTreeMap, BTreeSet};

use quote::ToTokens;
use syn::{ItemStruct, Type};

use super::defaults::{self, serde_default};
use super::keyword;
use super::list_map;
use super::patch::{Markers, Origin, Patch, Probe, rebase};
use super::place::{
    self, clashes, fits, is_value_validation, kept_note, needs, needs_text, schemars_keys,
};
use crate::ast::{self, Shape, Structs, generic_args, is_option, shape};
use crate::attr::marker::{self, Marker, Place, Step};
use crate::diag::Ctxt;

/// The patches of one struct, relative to where it appears, and the structs below it.
#[derive(Default)]
pub(super) struct Own<'a> {
    pub(super) patches: Vec<Patch>,
    children: Vec<(Vec<String>, &'a ItemStruct)>,
    probes: Vec<(Vec<String>, &'a Type)>,
    origins: Vec<Origin>,
}

impl Own<'_> {
    /// A patch and the marker it came from.
    pub(super) fn push(&mut self, patch: Patch, m: &Marker) {
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
pub(crate) struct Memo<'a> {
    own: BTreeMap<usize, Own<'a>>,
    enums_checked: BTreeSet<usize>,
}

/// A struct's (or enum's) identity in a [`Memo`]: where its syntax lives.
fn key_of<T>(item: &T) -> usize {
    std::ptr::from_ref(item) as usize
}

/// One field of a struct as the walk checks it: the field, its JSON name, the shape of its
/// type and its markers.
pub(super) struct FieldAt<'f, 'a> {
    /// The field.
    pub(super) syn: &'a syn::Field,
    /// Its JSON name.
    pub(super) name: &'f str,
    /// The JSON shape of its type.
    pub(super) shape: Shape<'a>,
    /// Its markers, in the order written.
    pub(super) markers: &'f [Marker],
    /// `#[serde(default)]` on its struct: every field may be left out.
    pub(super) container_default: bool,
}

/// Walks the spec and status structs and everything below them that the source shows.
pub(super) struct Walker<'s, 'm, 'a> {
    pub(super) structs: &'s Structs<'a>,
    pub(super) memo: &'m mut Memo<'a>,
    /// Record fields of types the source does not show, for run-time probes (the derive).
    pub(super) probe: bool,
}

/// Whether `s` is a spec: its type-level markers are resource markers.
fn is_spec(s: &ItemStruct) -> bool {
    s.attrs.iter().any(|a| a.path().is_ident("kube"))
}

impl<'a> Walker<'_, '_, 'a> {
    pub(super) fn expand(
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
        let key = self.remember(cx, s);
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

    /// Reads and checks the markers of `s` into the memo, unless they are there already;
    /// the key of its entry.
    pub(super) fn remember(&mut self, cx: &mut Ctxt, s: &'a ItemStruct) -> usize {
        let key = key_of(s);
        if !self.memo.own.contains_key(&key) {
            let own = self.own(cx, s);
            self.memo.own.insert(key, own);
        }
        key
    }

    /// The struct's own patches, checked once however often it appears.
    fn own(&mut self, cx: &mut Ctxt, s: &'a ItemStruct) -> Own<'a> {
        let mut own = Own::default();
        let mut markers = marker::read(cx, &s.attrs);
        // The union markers' rules after the struct's own, in controller-gen's order.
        markers.sort_by_key(super::one_of::order);
        for m in markers {
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
                    if let Some(p) =
                        keyword::field_patch(cx, &m, &Shape::Struct(s), self.structs, &[])
                    {
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
            let at = FieldAt {
                syn: f,
                name: &name,
                shape: field_shape,
                markers: &markers,
                container_default: container.default,
            };
            self.field(cx, &mut own, &at);
            // A schemaless field's type is not looked into (controller-gen's rule): its
            // structs' markers, and probes of what the source does not show, stay out.
            if schemaless(&markers) {
                continue;
            }
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

    /// The markers of one field: each checked against the field's type and turned into
    /// patches, then the rules that concern several of them (list maps, defaults,
    /// optional and required).
    fn field(&mut self, cx: &mut Ctxt, own: &mut Own<'a>, f: &FieldAt<'_, 'a>) {
        let name = f.name;
        let taken = schemars_keys(&f.syn.attrs);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut optional = None;
        let mut required = None;
        // First, so that the field's own markers are applied over it (a schemaless field's
        // type is not looked into).
        if let Some(p) = keyword::quantity_patch(&f.syn.ty, name).filter(|_| !schemaless(f.markers))
        {
            own.patches.push(p);
        }
        for m in f.markers {
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
            if !m.steps.is_empty() {
                self.inner_marker(cx, own, f, m);
                continue;
            }
            if !fits_field(cx, f, m, &taken) {
                continue;
            }
            match m.name {
                "optional" | "kubebuilder:validation:Optional" => optional = Some(m),
                "required" | "kubebuilder:validation:Required" => required = Some(m),
                "kubebuilder:validation:Enum" if matches!(f.shape, Shape::Enum(_)) => {
                    cx.error_at(
                        &m.name_loc,
                        format!(
                            "`{}` on `{name}`: its Rust enum already fixes the values",
                            m.display()
                        ),
                    );
                }
                "listMapKey" => {}
                "k8s:immutable" => immutable(own, f, m),
                _ => {
                    if let Some(p) =
                        keyword::field_patch(cx, m, &f.shape, self.structs, &[name.to_owned()])
                    {
                        own.push(p, m);
                    }
                }
            }
        }
        list_map::list_map(cx, own, self.structs, f);
        defaults::check_default(cx, own, f);
        defaults::default_on_nullable(cx, f);
        optional_or_required(cx, own, f, optional, required);
    }

    /// A marker on the values inside a field: `+kubebuilder:validation:items:<Name>` (the
    /// list's items) or kube-codegen's `+kube-codegen:validation:<steps>:<Name>` (a map's
    /// values, nested lists).
    fn inner_marker(&mut self, cx: &mut Ctxt, own: &mut Own<'a>, f: &FieldAt<'_, 'a>, m: &Marker) {
        let need = needs(m.name);
        let mut inner = f.shape;
        let mut what = format!("`{}`", f.name);
        let mut path = vec![f.name.to_owned()];
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
                    return;
                }
            };
            what = format!("the {noun} of {what}");
            path.push(segment.to_owned());
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
                return;
            }
            cx.warn_at(&m.name_loc, format!("{message}{}", kept_note(m.name)));
        }
        if let Some(p) = keyword::field_patch(cx, m, &inner, self.structs, &path) {
            own.push(p, m);
        }
    }

    /// Enums that kube's structural-schema rewriter cannot express (it panics on them).
    fn check_enum(&mut self, cx: &mut Ctxt, s: &Shape<'a>) {
        let Shape::Enum(e) = s else { return };
        if !self.memo.enums_checked.insert(key_of(*e)) {
            return;
        }
        place::check_enum(cx, e);
    }
}

/// Whether a marker on the field itself may stay: it fits the field's type (a value
/// validation that does not is kept, with a warning) and sets nothing schemars already sets.
fn fits_field(cx: &mut Ctxt, f: &FieldAt<'_, '_>, m: &Marker, taken: &BTreeSet<String>) -> bool {
    let name = f.name;
    let need = needs(m.name);
    if !fits(need, &f.shape) {
        let message = format!(
            "`{}` applies to {}, but `{name}` is {} (`{}`)",
            m.display(),
            needs_text(need),
            f.shape.describe(),
            f.syn.ty.to_token_stream().to_string().replace(' ', "")
        );
        if !is_value_validation(m.name) {
            cx.error_at(&m.name_loc, message);
            return false;
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
        return false;
    }
    true
}

/// Whether a field's markers make it schemaless: its type is not looked into.
fn schemaless(markers: &[Marker]) -> bool {
    markers
        .iter()
        .any(|m| m.name == "kubebuilder:validation:Schemaless")
}

/// `+k8s:immutable`, as controller-gen writes it: a rule on the field that it keeps its value
/// and, when the field may be left out, one on its struct that it is not removed once set.
fn immutable(own: &mut Own<'_>, f: &FieldAt<'_, '_>, m: &Marker) {
    let name = f.name;
    let rule = |path: Vec<String>, rule: String, message: String| Patch::Schema {
        path,
        set: serde_json::json!({"x-kubernetes-validations": [{"rule": rule, "message": message}]})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    own.push(
        rule(
            vec![name.to_owned()],
            "self == oldSelf".into(),
            "field is immutable".into(),
        ),
        m,
    );
    let required = f
        .markers
        .iter()
        .any(|m| matches!(m.name, "required" | "kubebuilder:validation:Required"));
    if !required && (is_option(&f.syn.ty) || serde_default(&f.syn.attrs) || f.container_default) {
        own.push(
            rule(
                Vec::new(),
                {
                    let cel = apiserver_rules::cel::escape(name).unwrap_or_else(|| name.to_owned());
                    format!("!has(oldSelf.{cel}) || has(self.{cel})")
                },
                format!("field {name} is immutable once set"),
            ),
            m,
        );
    }
}

/// `+optional` or `+required` on a field: a `Required` patch, unless both are written or
/// serde requires a field marked optional.
fn optional_or_required(
    cx: &mut Ctxt,
    own: &mut Own<'_>,
    f: &FieldAt<'_, '_>,
    optional: Option<&Marker>,
    required: Option<&Marker>,
) {
    let name = f.name;
    match (optional, required) {
        (Some(o), Some(_)) => cx.error_at(
            &o.name_loc,
            format!("`{name}` is marked both optional and required; keep one"),
        ),
        (Some(o), None) => {
            if !is_option(&f.syn.ty) && !serde_default(&f.syn.attrs) && !f.container_default {
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
