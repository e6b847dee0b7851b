//! The syntax of API types as serde and the API see it, read in one place: a struct's
//! fields under their JSON names (serde's rename rules, `skip`, `flatten`, `default`), the
//! JSON shape of a Rust type, and where a type named by a field is defined.
//!
//! Every later stage (the path checks, CRD markers, CEL typing, apply configurations)
//! reads fields through `Container` and types through `shape`, so a skipped field is
//! absent and a renamed one has its JSON name for all of them alike.

use syn::{Fields, Item, ItemEnum, ItemStruct, Type};

/// A struct as serde writes it: its named fields, each with its JSON name.
pub(crate) struct Container<'a> {
    /// `#[serde(default)]` on the struct: every field may be left out.
    pub(crate) default: bool,
    /// Whether the fields are named (a tuple or unit struct has none here).
    pub(crate) named: bool,
    /// The named fields, in the order written.
    pub(crate) fields: Vec<Field<'a>>,
}

/// One named field of a [`Container`].
pub(crate) struct Field<'a> {
    /// The field.
    pub(crate) syn: &'a syn::Field,
    /// Its Rust name.
    pub(crate) ident: &'a syn::Ident,
    /// Its JSON name; `None` for a field serde skips.
    pub(crate) json: Option<String>,
    /// `#[serde(flatten)]`: its struct's fields are the container's own.
    pub(crate) flatten: bool,
    /// Its Rust type.
    pub(crate) ty: &'a Type,
}

impl<'a> Container<'a> {
    /// Reads the serde attributes of `s` and of its named fields.
    pub(crate) fn read(s: &'a ItemStruct) -> Self {
        let rename_all = serde_value(&s.attrs, "rename_all");
        let (named, fields) = match &s.fields {
            Fields::Named(named) => (
                true,
                named
                    .named
                    .iter()
                    .filter_map(|f| {
                        Some(Field {
                            syn: f,
                            ident: f.ident.as_ref()?,
                            json: json_name(f, rename_all.as_deref()),
                            flatten: flattened(&f.attrs),
                            ty: &f.ty,
                        })
                    })
                    .collect(),
            ),
            _ => (false, Vec::new()),
        };
        Self {
            default: serde_flag(&s.attrs, "default"),
            named,
            fields,
        }
    }

    /// The field whose JSON name is `json`.
    pub(crate) fn field(&self, json: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.json.as_deref() == Some(json))
    }
}

/// Structs a path may walk through, by name (the spec, the status, nested types).
pub(crate) struct Structs<'a> {
    items: Vec<&'a ItemStruct>,
    enums: Vec<&'a syn::ItemEnum>,
    /// Looked at in order when `items` lacks a name (the version's other files, then the
    /// whole tree). A name defined twice in one layer is ambiguous and stays unresolved.
    layers: Vec<Layer<'a>>,
}

/// Items of several files, searched together.
#[derive(Default, Clone)]
pub(crate) struct Layer<'a> {
    /// Structs.
    pub(crate) structs: Vec<&'a ItemStruct>,
    /// Enums.
    pub(crate) enums: Vec<&'a syn::ItemEnum>,
}

impl<'a> Layer<'a> {
    /// The structs and enums among `items`, added to the layer.
    pub(crate) fn extend(&mut self, items: impl IntoIterator<Item = &'a Item>) {
        for item in items {
            match item {
                Item::Struct(s) => self.structs.push(s),
                Item::Enum(e) => self.enums.push(e),
                _ => {}
            }
        }
    }
}

/// The one item named `name` among `items`, or `None` when there are none or several.
fn unique<'a, T>(
    items: &[&'a T],
    name: &str,
    ident: impl Fn(&T) -> &syn::Ident,
) -> Option<Option<&'a T>> {
    let mut found = items.iter().copied().filter(|i| ident(i) == name);
    match (found.next(), found.next()) {
        (None, _) => None,
        (Some(one), None) => Some(Some(one)),
        (Some(_), Some(_)) => Some(None),
    }
}

impl<'a> Structs<'a> {
    /// Whether the other files of the tree are searched too (the CLI), so that a name no
    /// layer defines comes from outside the tree; the derive sees one item only.
    pub(crate) fn sees_tree(&self) -> bool {
        !self.layers.is_empty()
    }

    /// The structs among `items` (a file's items), plus `extra` (the derive's input).
    pub(crate) fn new(
        items: impl IntoIterator<Item = &'a Item>,
        extra: Option<&'a ItemStruct>,
    ) -> Self {
        let mut local = Layer::default();
        local.extend(items);
        local.structs.extend(extra);
        Self {
            items: local.structs,
            enums: local.enums,
            layers: Vec::new(),
        }
    }

    /// Adds a layer searched after the ones before it.
    pub(crate) fn with_layer(mut self, layer: Layer<'a>) -> Self {
        self.layers.push(layer);
        self
    }

    pub(crate) fn get(&self, name: &str) -> Option<&'a ItemStruct> {
        if let Some(s) = self.items.iter().copied().find(|s| s.ident == name) {
            return Some(s);
        }
        self.layers
            .iter()
            .find_map(|l| unique(&l.structs, name, |s| &s.ident))
            .flatten()
    }

    pub(crate) fn get_enum(&self, name: &str) -> Option<&'a syn::ItemEnum> {
        if let Some(e) = self.enums.iter().copied().find(|e| e.ident == name) {
            return Some(e);
        }
        self.layers
            .iter()
            .find_map(|l| unique(&l.enums, name, |e| &e.ident))
            .flatten()
    }
}

pub(crate) fn serde_value(attrs: &[syn::Attribute], key: &str) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) && meta.input.peek(syn::Token![=]) {
                let lit: syn::LitStr = meta.value()?.parse()?;
                found = Some(lit.value());
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.input.parse::<proc_macro2::TokenTree>()?;
            }
            Ok(())
        });
    }
    found
}

pub(crate) fn flattened(attrs: &[syn::Attribute]) -> bool {
    serde_flag(attrs, "flatten")
}

/// Whether `#[serde(...)]` has the key `flag` (`default`, `skip`, `flatten`, `untagged`).
pub(crate) fn serde_flag(attrs: &[syn::Attribute], flag: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                found |= meta.path.is_ident(flag);
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.input.parse::<proc_macro2::TokenTree>()?;
                }
                Ok(())
            });
            found
        })
}

/// The JSON name of a named field, as serde writes it: its `rename`, or its identifier
/// (without `r#`) under the container's `rename_all`; `None` for a field serde skips. The
/// one place the generator computes a field's JSON name.
pub(crate) fn json_name(f: &syn::Field, rename_all: Option<&str>) -> Option<String> {
    if serde_flag(&f.attrs, "skip") {
        return None;
    }
    let ident = f.ident.as_ref()?.to_string();
    let ident = ident.trim_start_matches("r#");
    Some(serde_value(&f.attrs, "rename").unwrap_or_else(|| renamed(ident, rename_all)))
}

/// A field's name under a container's `rename_all`, by serde's own rules (serde_derive's
/// `RenameRule::apply_to_field`: camelCase capitalizes after each `_`, lowercase leaves a
/// field as it is).
pub fn renamed(field: &str, rule: Option<&str>) -> String {
    let pascal = || {
        let mut out = String::new();
        let mut capitalize = true;
        for c in field.chars() {
            if c == '_' {
                capitalize = true;
            } else if capitalize {
                out.push(c.to_ascii_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        }
        out
    };
    match rule {
        Some("PascalCase") => pascal(),
        Some("camelCase") => {
            let p = pascal();
            let mut chars = p.chars();
            match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => p,
            }
        }
        Some("UPPERCASE" | "SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.to_ascii_uppercase().replace('_', "-"),
        _ => field.to_owned(),
    }
}

/// A unit variant's name under an enum's `rename_all`, by serde's own rules
/// (`RenameRule::apply_to_variant`).
pub(crate) fn renamed_variant(variant: &str, rule: Option<&str>) -> String {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if i > 0 && c.is_uppercase() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    match rule {
        Some("lowercase") => variant.to_ascii_lowercase(),
        Some("UPPERCASE") => variant.to_ascii_uppercase(),
        Some("camelCase") => {
            let mut chars = variant.chars();
            match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        }
        Some("snake_case") => snake(),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => snake().to_ascii_uppercase().replace('_', "-"),
        _ => variant.to_owned(),
    }
}

/// The JSON names of a struct's fields and their Rust types (`#[serde(skip)]` fields are
/// not in the JSON); `None` when a flattened field makes the set open (then nothing is
/// reported).
pub(crate) fn json_fields(s: &ItemStruct) -> Option<Vec<(String, &Type)>> {
    let container = Container::read(s);
    if !container.named || container.fields.iter().any(|f| f.flatten) {
        return None;
    }
    Some(
        container
            .fields
            .into_iter()
            .filter_map(|f| Some((f.json?, f.ty)))
            .collect(),
    )
}

/// Whether `s` has a `#[serde(skip)]` field that would otherwise be named `json`.
pub(crate) fn skipped_field_named(s: &ItemStruct, json: &str) -> bool {
    let rename_all = serde_value(&s.attrs, "rename_all");
    let Fields::Named(named) = &s.fields else {
        return false;
    };
    named.named.iter().any(|f| {
        serde_flag(&f.attrs, "skip")
            && f.ident.as_ref().is_some_and(|ident| {
                let ident = ident.to_string();
                let name = serde_value(&f.attrs, "rename").unwrap_or_else(|| {
                    renamed(ident.trim_start_matches("r#"), rename_all.as_deref())
                });
                name == json
            })
    })
}

/// `Option<T>` -> `T`; `Box<T>` -> `T`.
pub(crate) fn inner(ty: &Type) -> &Type {
    if let Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && (last.ident == "Option" || last.ident == "Box")
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(t)) = args.args.first()
    {
        return inner(t);
    }
    ty
}

/// The JSON shape of a Rust type, as far as the source shows it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape<'a> {
    Integer,
    Number,
    String,
    Bool,
    Array(&'a Type),
    Map(&'a Type),
    Struct(&'a ItemStruct),
    Enum(&'a ItemEnum),
    /// `serde_json::Value` and friends: anything.
    Any,
    /// A type defined elsewhere: nothing can be checked.
    Unknown,
}

impl Shape<'_> {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Shape::Integer => "an integer",
            Shape::Number => "a number",
            Shape::String => "a string",
            Shape::Bool => "a boolean",
            Shape::Array(_) => "a list",
            Shape::Map(_) => "a map",
            Shape::Struct(_) => "a struct",
            Shape::Enum(_) => "an enum",
            Shape::Any => "any JSON",
            Shape::Unknown => "a type defined elsewhere",
        }
    }
}

pub(crate) const INTEGERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "u8", "u16", "u32", "u64", "u128", "isize", "usize",
];

pub(crate) fn generic_args(ty: &Type) -> Vec<&Type> {
    if let Type::Path(p) = ty
        && let Some(last) = p.path.segments.last()
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
    {
        return args
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect();
    }
    Vec::new()
}

/// Whether the type is `Option<_>`.
pub(crate) fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

pub(crate) fn shape<'a>(ty: &'a Type, structs: &Structs<'a>) -> Shape<'a> {
    let ty = inner(ty);
    let Type::Path(p) = ty else {
        return match ty {
            Type::Array(a) => Shape::Array(&a.elem),
            Type::Slice(s) => Shape::Array(&s.elem),
            Type::Reference(r) => shape(&r.elem, structs),
            _ => Shape::Unknown,
        };
    };
    let Some(last) = p.path.segments.last() else {
        return Shape::Unknown;
    };
    let name = last.ident.to_string();
    let args = generic_args(ty);
    match name.as_str() {
        n if INTEGERS.contains(&n) => Shape::Integer,
        "f32" | "f64" => Shape::Number,
        "String" | "str" | "char" | "Cow" | "Time" | "MicroTime" | "DateTime" | "Duration" => {
            Shape::String
        }
        "bool" => Shape::Bool,
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => {
            args.first().map_or(Shape::Unknown, |t| Shape::Array(t))
        }
        "HashMap" | "BTreeMap" => args.get(1).map_or(Shape::Unknown, |t| Shape::Map(t)),
        "Value"
            if p.path.segments.len() == 1
                || p.path.segments.iter().any(|s| s.ident == "serde_json") =>
        {
            Shape::Any
        }
        _ => {
            if let Some(s) = structs.get(&name) {
                Shape::Struct(s)
            } else if let Some(e) = structs.get_enum(&name) {
                Shape::Enum(e)
            } else {
                Shape::Unknown
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{renamed, renamed_variant};

    /// What serde_json printed for the same fields and variants under serde_derive 1.
    #[test]
    fn names_follow_serdes_rules_not_hecks() {
        let camel = Some("camelCase");
        assert_eq!(renamed("api_URL", camel), "apiURL");
        assert_eq!(renamed("x509_cert", camel), "x509Cert");
        assert_eq!(renamed("ip_v4", camel), "ipV4");
        assert_eq!(renamed("http2_enabled", camel), "http2Enabled");
        assert_eq!(renamed("Some_Field", Some("lowercase")), "Some_Field");
        assert_eq!(renamed_variant("HTTPSProxy", camel), "hTTPSProxy");
        assert_eq!(
            renamed_variant("HTTPSProxy", Some("snake_case")),
            "h_t_t_p_s_proxy"
        );
    }
}
