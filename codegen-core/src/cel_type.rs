//! The CEL type a field has in its CRD schema, read from the Rust type, so that
//! `+kubebuilder:validation:XValidation` rules are type-checked at the marker: `self.foo`
//! on a struct without `foo` is reported where it is written, not when a cluster refuses
//! the CRD. Types the source does not show are `dyn` (anything goes), so a rule is only
//! refused when the API server would refuse it too.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiserver_rules::cel::check::Ty;
use apiserver_rules::cel::escape;
use syn::{ItemStruct, Type};

use crate::ast::{self, Shape, Structs, shape};

/// How deep struct fields are followed (recursive types end in `dyn`).
const DEPTH: u8 = 8;

/// The type of a value of `shape`.
pub(crate) fn of_shape(s: &Shape<'_>, structs: &Structs<'_>, depth: u8) -> Ty {
    if depth == 0 {
        return Ty::Dyn;
    }
    match s {
        Shape::Integer => Ty::Int,
        Shape::Number => Ty::Double,
        Shape::String => Ty::String,
        Shape::Bool => Ty::Bool,
        Shape::Array(t) => Ty::List(Box::new(of_type(t, structs, depth - 1))),
        Shape::Map(t) => Ty::Map(Box::new(of_type(t, structs, depth - 1))),
        Shape::Struct(st) => of_struct(st, structs, depth - 1),
        Shape::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()) => Ty::String,
        Shape::Enum(_) | Shape::Any | Shape::Unknown => Ty::Dyn,
    }
}

fn of_type(ty: &Type, structs: &Structs<'_>, depth: u8) -> Ty {
    // `Time`, `MicroTime`, `Duration` are strings with a format CEL types otherwise.
    if let Type::Path(p) = ast::inner(ty)
        && let Some(last) = p.path.segments.last()
    {
        match last.ident.to_string().as_str() {
            "Time" | "MicroTime" | "DateTime" => return Ty::Timestamp,
            "Duration" => return Ty::Dyn,
            _ => {}
        }
    }
    of_shape(&shape(ty, structs), structs, depth)
}

/// A struct's fields under their JSON names; `dyn` when a flattened field hides some.
fn of_struct(s: &ItemStruct, structs: &Structs<'_>, depth: u8) -> Ty {
    let container = ast::Container::read(s);
    if !container.named {
        return Ty::Dyn;
    }
    let mut fields = BTreeMap::new();
    for f in &container.fields {
        if f.flatten {
            match of_type(f.ty, structs, depth) {
                Ty::Object(inner) => {
                    fields.extend(inner.iter().map(|(k, v)| (k.clone(), v.clone())))
                }
                _ => return Ty::Dyn,
            }
            continue;
        }
        let Some(name) = &f.json else {
            continue;
        };
        if let Some(escaped) = escape(name) {
            fields.insert(escaped, of_type(f.ty, structs, depth));
        }
    }
    Ty::Object(Arc::new(fields))
}

/// The type of a field or struct a marker sits on.
pub(crate) fn at_marker(s: &Shape<'_>, structs: &Structs<'_>) -> Ty {
    of_shape(s, structs, DEPTH)
}
