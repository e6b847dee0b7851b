//! The lint rules, one function each, over one field as serde sees it (`ast::Field`) and
//! its CRD markers. Each finding says what is wrong, why the convention exists, and after
//! `;` the fix.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{ItemStruct, Type};

use super::{Finding, Root};
use crate::ast::{Container, Field, Shape, Structs, generic_args, is_option, serde_flag, shape};
use crate::attr::marker::{Marker, Step, read_checked_elsewhere};

/// One field and what the rules read of it.
struct At<'f, 'a> {
    /// The struct it belongs to.
    owner: &'a ItemStruct,
    /// The field.
    f: &'f Field<'a>,
    /// Its JSON name.
    json: &'f str,
    /// Its CRD markers.
    markers: Vec<Marker>,
    /// Its JSON shape.
    shape: Shape<'a>,
    /// `#[serde(default)]` on it or on its struct.
    default: bool,
}

impl At<'_, '_> {
    /// Whether a marker `name` (one of `names`) sits on the field itself.
    fn has(&self, names: &[&str]) -> bool {
        self.markers
            .iter()
            .any(|m| m.steps.is_empty() && names.contains(&m.name))
    }

    /// Whether a marker `name` sits on the field's list items.
    fn has_on_items(&self, name: &str) -> bool {
        self.markers
            .iter()
            .any(|m| m.steps == [Step::Items] && m.name == name)
    }

    fn optional(&self) -> bool {
        self.has(&["optional", "kubebuilder:validation:Optional"])
    }

    fn required(&self) -> bool {
        self.has(&["required", "kubebuilder:validation:Required"])
    }

    /// A finding of `rule` at `span`.
    fn finding(&self, rule: &'static str, span: Span, message: String) -> Finding {
        Finding {
            rule,
            span,
            message,
        }
    }

    /// The field's name, for messages.
    fn name(&self) -> String {
        format!("`{}`", self.json)
    }

    /// The field's type as written, for messages.
    fn ty(&self) -> String {
        self.f.ty.to_token_stream().to_string().replace(' ', "")
    }
}

/// Every rule over one field of `owner`, a struct at `root`.
pub(super) fn field<'a>(
    out: &mut Vec<Finding>,
    owner: &'a ItemStruct,
    container: &Container<'a>,
    f: &Field<'a>,
    root: Root,
    structs: &Structs<'a>,
) {
    if f.flatten {
        no_flatten(out, owner, f);
        return;
    }
    let Some(json) = f.json.as_deref() else {
        return;
    };
    let at = At {
        owner,
        f,
        json,
        markers: read_checked_elsewhere(&f.syn.attrs),
        shape: shape(f.ty, structs),
        default: container.default || serde_flag(&f.syn.attrs, "default"),
    };
    json_names(out, &at);
    if root == Root::Status {
        status_optional(out, &at);
    } else {
        optional_or_required(out, &at);
    }
    optional_fields(out, &at);
    required_fields(out, &at);
    integers_and_floats(out, &at, f.ty);
    no_bools(out, &at);
    no_maps(out, &at, f.ty);
    no_durations(out, &at);
    max_length(out, &at, structs);
    string_enums(out, &at, structs);
    conditions(out, &at, structs);
}

/// `no-flatten`.
fn no_flatten(out: &mut Vec<Finding>, owner: &ItemStruct, f: &Field<'_>) {
    let span = f
        .syn
        .attrs
        .iter()
        .find(|a| a.path().is_ident("serde") && serde_flag(std::slice::from_ref(a), "flatten"))
        .map_or(f.ident.span(), Spanned::span);
    out.push(Finding {
        rule: "no-flatten",
        span,
        message: format!(
            "`#[serde(flatten)]` on `{}` merges the fields of `{}` into `{}`: the schema can no longer list the object's fields in one place, and a field added to either type later can collide with the other's; make it a named field",
            f.ident,
            f.ty.to_token_stream().to_string().replace(' ', ""),
            owner.ident
        ),
    });
}

/// `json-names`: `^[a-z][a-z0-9]*([A-Z][a-z0-9]*)*$`, as kube-api-linter's `jsontags`.
fn json_names(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    let name = at.json;
    let camel = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    if camel {
        return;
    }
    let ident = at.f.ident.to_string();
    let suggestion = crate::ast::renamed(ident.trim_start_matches("r#"), Some("camelCase"));
    let renamed = crate::ast::serde_value(&at.f.syn.attrs, "rename").is_some();
    let fix = if renamed || suggestion == name {
        format!("rename it in camelCase (`#[serde(rename = \"{suggestion}\")]`)")
    } else {
        format!(
            "add `#[serde(rename_all = \"camelCase\")]` to `{}` (it becomes `{suggestion}`)",
            at.owner.ident
        )
    };
    out.push(at.finding(
        "json-names",
        at.f.ident.span(),
        format!(
            "JSON name `{name}` is not camelCase: Kubernetes APIs name every field in camelCase, and clients, `kubectl explain` and JSON paths expect it; {fix}"
        ),
    ));
}

/// `status-optional`: every field of a status may be left out.
fn status_optional(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if at.optional() {
        return;
    }
    let fix = if is_option(at.f.ty) || at.default {
        "mark it `+optional`".to_owned()
    } else {
        format!("make it `Option<{}>` and mark it `+optional`", at.ty())
    };
    out.push(at.finding(
        "status-optional",
        at.f.ident.span(),
        format!(
            "status field {} is not optional: a controller writes status in parts, and one that does not know this field (an older version, another writer) must still be able to write a valid status; {fix}",
            at.name()
        ),
    ));
}

/// `optional-or-required`: the field says which it is.
fn optional_or_required(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if at.optional() || at.required() {
        return;
    }
    let fix = if is_option(at.f.ty) || at.default {
        "mark it `+optional`"
    } else {
        "mark it `+required`"
    };
    out.push(at.finding(
        "optional-or-required",
        at.f.ident.span(),
        format!(
            "{} is not marked `+optional` or `+required`: readers of the API and its reference docs should not have to work out from the Rust type whether a client may leave it out; {fix}",
            at.name()
        ),
    ));
}

/// `optional-fields`: an optional field is an `Option`, so that leaving it out and
/// sending its default are told apart (lists and maps: empty is absent).
fn optional_fields(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if !at.optional() || is_option(at.f.ty) || at.required() {
        return;
    }
    // Without a serde default the generator refuses it already.
    if !at.default || matches!(at.shape, Shape::Array(_) | Shape::Map(_)) {
        return;
    }
    out.push(at.finding(
        "optional-fields",
        at.f.ty.span(),
        format!(
            "optional field {} is not an `Option`: with `#[serde(default)]` an object that leaves it out reads back as one that set the default, and every write stores the default; make it `Option<{}>`",
            at.name(),
            at.ty()
        ),
    ));
}

/// `required-fields`: a required field is always there.
fn required_fields(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if !at.required() || !is_option(at.f.ty) || at.optional() {
        return;
    }
    let inner = crate::ast::inner(at.f.ty)
        .to_token_stream()
        .to_string()
        .replace(' ', "");
    out.push(at.finding(
        "required-fields",
        at.f.ty.span(),
        format!(
            "required field {} is an `Option`: the API server refuses objects without it, so `None` can only be sent as `null` and refused; make it `{inner}`",
            at.name()
        ),
    ));
}

/// The type names inside `ty` (itself, and its generic arguments, recursively).
fn leaf_names(ty: &Type, out: &mut Vec<(String, Span)>) {
    match ty {
        Type::Path(p) => {
            if let Some(last) = p.path.segments.last() {
                out.push((last.ident.to_string(), last.ident.span()));
            }
            for t in generic_args(ty) {
                leaf_names(t, out);
            }
        }
        Type::Array(a) => leaf_names(&a.elem, out),
        Type::Slice(s) => leaf_names(&s.elem, out),
        Type::Reference(r) => leaf_names(&r.elem, out),
        _ => {}
    }
}

/// `integers` and `no-floats`, anywhere in the field's type (`Vec<u8>`, `Option<f64>`).
fn integers_and_floats(out: &mut Vec<Finding>, at: &At<'_, '_>, ty: &Type) {
    let mut names = Vec::new();
    leaf_names(ty, &mut names);
    for (name, span) in names {
        let wider = match name.as_str() {
            "i8" | "i16" | "u8" | "u16" => "i32",
            "u32" | "u64" | "u128" | "i128" | "usize" | "isize" => "i64",
            "f32" | "f64" => {
                out.push(at.finding(
                    "no-floats",
                    span,
                    format!(
                        "{} is `{name}`: floating-point values do not round-trip exactly between languages and architectures, and two clients can disagree on the same object; use an integer with the unit in its name (`ratioPercent`, `timeoutSeconds`) or a `Quantity`",
                        at.name()
                    ),
                ));
                continue;
            }
            _ => continue,
        };
        out.push(at.finding(
            "integers",
            span,
            format!(
                "{} is `{name}`: Kubernetes APIs use `int32` and `int64` only; other sizes and unsigned integers have no OpenAPI format clients of other languages read the same way, and an unsigned bound is a `Minimum` marker; make it `{wider}`",
                at.name()
            ),
        ));
    }
}

/// Where the field's type names `name` (itself or inside), if it does.
fn names_type(at: &At<'_, '_>, name: &str) -> Option<Span> {
    let mut names = Vec::new();
    leaf_names(at.f.ty, &mut names);
    names
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, span)| span)
}

/// `no-bools`.
fn no_bools(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if let Some(span) = names_type(at, "bool") {
        out.push(at.finding(
            "no-bools",
            span,
            format!(
                "{} is a `bool`: a state with two values today often needs a third later (`Enabled`, `Disabled`, `Auto`), and a `bool` cannot grow one without a new field; use an enum of string values",
                at.name()
            ),
        ));
    }
}

/// `no-maps`: maps anywhere in the field's type (`Vec<BTreeMap<..>>` too) hold strings only,
/// as kube-api-linter's `nomaps` with its default policy (string-to-string maps allowed).
fn no_maps(out: &mut Vec<Finding>, at: &At<'_, '_>, ty: &Type) {
    let Type::Path(p) = ty else {
        if let Type::Array(a) = ty {
            no_maps(out, at, &a.elem);
        }
        return;
    };
    let args = generic_args(ty);
    let map = p.path.segments.last().filter(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "BTreeMap" | "HashMap" | "IndexMap"
        )
    });
    if let (Some(segment), Some(value)) = (map, args.get(1))
        && !plain_string(value)
    {
        let value = value.to_token_stream().to_string().replace(' ', "");
        out.push(at.finding(
            "no-maps",
            segment.ident.span(),
            format!(
                "{} holds a map of `{value}`: a map's keys are data the schema cannot describe, validate or document, and an entry cannot later gain a second field that identifies it; the conventions keep maps to string values (labels, annotations); use a list of named items (`+listType=map`, `+listMapKey=name`)",
                at.name()
            ),
        ));
    }
    for t in args {
        no_maps(out, at, t);
    }
}

/// `no-durations`: no `Duration` (std's, chrono's, a `metav1.Duration` of one's own).
fn no_durations(out: &mut Vec<Finding>, at: &At<'_, '_>) {
    if let Some(span) = names_type(at, "Duration") {
        out.push(at.finding(
            "no-durations",
            span,
            format!(
                "{} is a `Duration`: it has no JSON form all clients read alike (Go's `metav1.Duration` is text such as `1h30m`, serde writes std's as `{{secs, nanos}}`), and its unit is not in its name; use an integer with the unit in its name (`timeoutSeconds: i32`)",
                at.name()
            ),
        ));
    }
}

/// Whether `ty` (below `Option`) is a plain string type (not a time or quantity, whose
/// format bounds them).
fn plain_string(ty: &Type) -> bool {
    matches!(crate::ast::inner(ty), Type::Path(p)
        if p.path.segments.last().is_some_and(|s| matches!(s.ident.to_string().as_str(), "String" | "str" | "Cow")))
}

/// Whether a `schemars`/`validate`/`garde` attribute bounds the field's length.
fn attr_bounds_length(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        ["schemars", "validate", "garde"]
            .iter()
            .any(|n| a.path().is_ident(n))
            && {
                let t = a.to_token_stream().to_string().replace(' ', "");
                t.contains("length(") && (t.contains("max=") || t.contains("equal="))
            }
    })
}

/// `max-length`: strings, lists and the strings in lists are bounded.
fn max_length(out: &mut Vec<Finding>, at: &At<'_, '_>, structs: &Structs<'_>) {
    let why = "unbounded values let one object grow until etcd refuses it, and make the cost of CEL rules over them too high to estimate";
    let enumerated = at.has(&["kubebuilder:validation:Enum"]);
    match at.shape {
        Shape::String
            if plain_string(at.f.ty)
                && !enumerated
                && !at.has(&["kubebuilder:validation:MaxLength"])
                && !attr_bounds_length(&at.f.syn.attrs) =>
        {
            out.push(at.finding(
                "max-length",
                at.f.ident.span(),
                format!(
                    "string {} has no maximum length: {why}; add `+kubebuilder:validation:MaxLength=<n>`",
                    at.name()
                ),
            ));
        }
        Shape::Array(item) => {
            if !at.has(&["kubebuilder:validation:MaxItems"]) && !attr_bounds_length(&at.f.syn.attrs)
            {
                out.push(at.finding(
                    "max-length",
                    at.f.ident.span(),
                    format!(
                        "list {} has no maximum number of items: {why}; add `+kubebuilder:validation:MaxItems=<n>`",
                        at.name()
                    ),
                ));
            }
            if matches!(shape(item, structs), Shape::String)
                && plain_string(item)
                && !at.has_on_items("kubebuilder:validation:MaxLength")
                && !at.has_on_items("kubebuilder:validation:Enum")
            {
                out.push(at.finding(
                    "max-length",
                    at.f.ident.span(),
                    format!(
                        "the strings in list {} have no maximum length: {why}; add `+kubebuilder:validation:items:MaxLength=<n>`",
                        at.name()
                    ),
                ));
            }
        }
        _ => {}
    }
}

/// The enum a field's values are (below `Option` and lists).
fn field_enum<'a>(s: Shape<'a>, structs: &Structs<'a>) -> Option<&'a syn::ItemEnum> {
    match s {
        Shape::Enum(e) => Some(e),
        Shape::Array(t) => field_enum(shape(t, structs), structs),
        _ => None,
    }
}

/// `string-enums`: an enum in an API is a string.
fn string_enums(out: &mut Vec<Finding>, at: &At<'_, '_>, structs: &Structs<'_>) {
    let why = "API enums are strings, which every client reads, the CRD lists as `enum`, and a new version can add a value to";
    if matches!(at.shape, Shape::Integer | Shape::Number)
        && at.has(&["kubebuilder:validation:Enum"])
    {
        out.push(at.finding(
            "string-enums",
            at.f.ident.span(),
            format!(
                "{} is a number with `+kubebuilder:validation:Enum`: {why}; make it a Rust enum of unit variants",
                at.name()
            ),
        ));
        return;
    }
    let Some(e) = field_enum(at.shape, structs) else {
        return;
    };
    let name = &e.ident;
    let problem = if let Some(v) = e.variants.iter().find(|v| !v.fields.is_empty()) {
        format!(
            "whose variant `{}` carries data, so it is written as an object",
            v.ident
        )
    } else if serde_flag(&e.attrs, "untagged") || crate::ast::serde_value(&e.attrs, "tag").is_some()
    {
        "which serde writes tagged or untagged, not as a string".to_owned()
    } else if e
        .attrs
        .iter()
        .any(|a| a.path().is_ident("derive") && a.to_token_stream().to_string().contains("_repr"))
    {
        "which `serde_repr` writes as a number".to_owned()
    } else {
        return;
    };
    out.push(at.finding(
        "string-enums",
        at.f.ty.span(),
        format!(
            "{} is the enum `{name}`, {problem}: {why}; make every variant a unit variant and move the data to optional fields beside it",
            at.name()
        ),
    ));
}

/// The fields every condition has (metav1.Condition's required ones).
const CONDITION_FIELDS: &[&str] = &["type", "status", "lastTransitionTime", "reason", "message"];

/// `conditions`: a list-map keyed by `type` of standard conditions.
fn conditions(out: &mut Vec<Finding>, at: &At<'_, '_>, structs: &Structs<'_>) {
    if at.json != "conditions" {
        return;
    }
    let why = "clients and tools (`kubectl wait --for=condition=...`) read conditions by their `type`, and server-side apply merges them by it when several controllers write them";
    let Shape::Array(item) = at.shape else {
        out.push(at.finding(
            "conditions",
            at.f.ty.span(),
            format!(
                "`conditions` is {}, not a list: {why}; make it `Vec<Condition>` (`k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition`)",
                at.shape.describe()
            ),
        ));
        return;
    };
    let list_map = at
        .markers
        .iter()
        .any(|m| m.steps.is_empty() && m.name == "listType" && m.value.as_deref() == Some("map"));
    let keyed = at.markers.iter().any(|m| {
        m.steps.is_empty() && m.name == "listMapKey" && m.value.as_deref() == Some("type")
    });
    let missing: Vec<&str> = [
        (!list_map).then_some("`+listType=map`"),
        (!keyed).then_some("`+listMapKey=type`"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !missing.is_empty() {
        out.push(at.finding(
            "conditions",
            at.f.ident.span(),
            format!(
                "`conditions` is not a list-map keyed by `type`: {why}; add {}",
                missing.join(" and ")
            ),
        ));
    }
    let Shape::Struct(s) = shape(item, structs) else {
        return;
    };
    let fields = Container::read(s);
    let lacking: Vec<String> = CONDITION_FIELDS
        .iter()
        .filter(|n| fields.field(n).is_none())
        .map(|n| format!("`{n}`"))
        .collect();
    if !lacking.is_empty() {
        out.push(at.finding(
            "conditions",
            item.span(),
            format!(
                "the items of `conditions` (`{}`) lack the standard condition field{} {}: tools read every condition alike; use `k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition`, or add {}",
                s.ident,
                if lacking.len() == 1 { "" } else { "s" },
                lacking.join(", "),
                if lacking.len() == 1 { "it" } else { "them" }
            ),
        ));
    }
}
