//! `+listType=map` and its `+listMapKey`s: the keys checked against the items' struct (or
//! the k8s-openapi type of the items, from the built-in types table), as kube-apiserver
//! checks them, and written as `x-kubernetes-list-map-keys`.

use serde_json::{Map, Value};
use syn::ItemStruct;

use super::defaults::serde_default;
use super::patch::Patch;
use super::walk::{FieldAt, Own};
use crate::ast::{self, Shape, Structs, is_option, shape};
use crate::attr::marker::{self, Marker};
use crate::diag::{Ctxt, did_you_mean};

/// `+listType=map` with its `+listMapKey`s.
pub(super) fn list_map(
    cx: &mut Ctxt,
    own: &mut Own<'_>,
    structs: &Structs<'_>,
    f: &FieldAt<'_, '_>,
) {
    let (name, field_shape, markers) = (f.name, &f.shape, f.markers);
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
                shape(item, structs),
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
        Shape::Array(t) => shape(t, structs),
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
        && let Some(ty) = k8s_openapi_type(item_ty, structs.sees_tree())
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
