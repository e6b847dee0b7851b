//! Checks kube-derive does not make: the JSON paths of `printcolumn`, `selectable` and
//! `scale` must name fields of the spec or status struct (after serde renames), and a
//! printcolumn's type must fit the field's Rust type.
//!
//! The derive sees the spec struct only, so it checks `.spec` paths; the CLI also finds the
//! status struct (and nested structs) in the same file, the same version directory, or
//! anywhere in the tree when the name is unique there.

use quote::ToTokens;
use syn::{Fields, Item, ItemStruct, Type};

use crate::attr::kube::{KubeAttrs, Spanned};
use crate::diag::{Ctxt, did_you_mean};

/// Structs a path may walk through, by name (the spec, the status, nested types).
pub struct Structs<'a> {
    items: Vec<&'a ItemStruct>,
    enums: Vec<&'a syn::ItemEnum>,
    /// Looked at in order when `items` lacks a name (the version's other files, then the
    /// whole tree). A name defined twice in one layer is ambiguous and stays unresolved.
    layers: Vec<Layer<'a>>,
}

/// Items of several files, searched together.
#[derive(Default, Clone)]
pub struct Layer<'a> {
    /// Structs.
    pub structs: Vec<&'a ItemStruct>,
    /// Enums.
    pub enums: Vec<&'a syn::ItemEnum>,
}

impl<'a> Layer<'a> {
    /// The structs and enums among `items`, added to the layer.
    pub fn extend(&mut self, items: impl IntoIterator<Item = &'a Item>) {
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
    /// The structs among `items` (a file's items), plus `extra` (the derive's input).
    pub fn new(items: impl IntoIterator<Item = &'a Item>, extra: Option<&'a ItemStruct>) -> Self {
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
    pub fn with_layer(mut self, layer: Layer<'a>) -> Self {
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
pub fn renamed_variant(variant: &str, rule: Option<&str>) -> String {
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
    let rule = serde_value(&s.attrs, "rename_all");
    let Fields::Named(named) = &s.fields else {
        return None;
    };
    let mut out = Vec::new();
    for f in &named.named {
        if flattened(&f.attrs) {
            return None;
        }
        f.ident.as_ref()?;
        if let Some(name) = json_name(f, rule.as_deref()) {
            out.push((name, &f.ty));
        }
    }
    Some(out)
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

/// Resolves `.spec.a.b` against the spec struct (or `.status...` against the status
/// struct); reports the first segment that does not exist. Returns the leaf's type.
pub(crate) fn resolve<'a>(
    cx: &mut Ctxt,
    path: &Spanned<String>,
    spec: &'a ItemStruct,
    status: Option<&'a ItemStruct>,
    structs: &Structs<'a>,
    what: &str,
) -> Option<&'a Type> {
    let text = path.value.trim_start_matches('.');
    // A JSONPath index or filter (`.status.conditions[?(@.type=="Ready")].status`): the
    // fields before it are checked; what it selects is not.
    let (text, indexed) = match text.find('[') {
        Some(i) => (&text[..i], true),
        None => (text, false),
    };
    let mut segments = text.split('.');
    let root = segments.next()?;
    let mut current = match root {
        "spec" => spec,
        "status" => status?,
        "metadata" | "" => return None,
        other => {
            cx.error(
                path.span,
                format!(
                    "{what} `{}` must start with `.spec`, `.status` or `.metadata`, not `.{other}`",
                    path.value
                ),
            );
            return None;
        }
    };
    let mut walked = root.to_owned();
    let mut ty = None;
    for seg in segments {
        let fields = json_fields(current)?;
        let Some((_, field_ty)) = fields.iter().find(|(n, _)| n == seg) else {
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            let hint = did_you_mean(seg, names.iter().copied());
            let hint = if hint.is_empty() {
                format!("; `{}` has {}", current.ident, list(&names))
            } else {
                hint
            };
            cx.error(
                path.span,
                format!(
                    "{what} `{}`: `.{walked}` has no field `{seg}` (serde names){hint}",
                    path.value
                ),
            );
            return None;
        };
        walked = format!("{walked}.{seg}");
        ty = (!indexed).then_some(*field_ty);
        match type_name(field_ty).and_then(|n| structs.get(&n)) {
            Some(next) => current = next,
            None => {
                // A leaf, or a type defined elsewhere: deeper segments cannot be checked.
                if text.split('.').count() > walked.split('.').count() {
                    return None;
                }
            }
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

/// Checks the JSON paths of `kube` against `spec` and, when found, its status struct.
pub fn check_paths(cx: &mut Ctxt, kube: &KubeAttrs, spec: &ItemStruct, structs: &Structs<'_>) {
    let status = kube
        .status
        .as_ref()
        .and_then(|s| structs.get(s.value.rsplit("::").next().unwrap_or(&s.value)));
    for column in &kube.printcolumns {
        let Some(path) = &column.json_path else {
            continue;
        };
        let ty = resolve(cx, path, spec, status, structs, "printcolumn json_path");
        if let (Some(ty), Some(col_type)) = (ty, &column.type_)
            && !fits(&col_type.value, ty, structs)
        {
            cx.error(
                col_type.span,
                format!(
                    "printcolumn type `{}` does not fit `{}` (`{}`); use {}",
                    col_type.value,
                    path.value,
                    inner(ty).to_token_stream().to_string().replace(' ', ""),
                    suggested_type(ty, structs)
                ),
            );
        }
    }
    for path in &kube.selectable {
        resolve(cx, path, spec, status, structs, "selectable");
    }
    if let Some(scale) = &kube.scale {
        for (path, what) in [
            (&scale.spec_replicas_path, "scale spec_replicas_path"),
            (&scale.status_replicas_path, "scale status_replicas_path"),
            (&scale.label_selector_path, "scale label_selector_path"),
        ] {
            if let Some(path) = path {
                resolve(cx, path, spec, status, structs, what);
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

/// Runs the path checks for the spec struct `spec` when it is a struct of kube's kind.
pub fn run(cx: &mut Ctxt, spec: &ItemStruct, structs: &Structs<'_>) {
    let kube = KubeAttrs::from_attrs(&mut Ctxt::new(), &spec.attrs);
    check_paths(cx, &kube, spec, structs);
}

#[cfg(test)]
mod rename_tests {
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
