//! The shapes of built-in kinds that `generate` writes apply configurations from: those of
//! `apiserver-rules` (generated from the Kubernetes API's OpenAPI documents by
//! `hack/builtin-types.py`), in the form the code generator takes.

use apiserver_rules::builtin::{self, Field, Kind};
use kube_codegen_core::emit::apply_builtin::{BuiltinShapes, ShapeField, ShapeType};

fn field(f: &Field) -> ShapeField {
    match &f.kind {
        Kind::String => ShapeField::String,
        Kind::Bytes => ShapeField::Bytes,
        Kind::Int32 => ShapeField::Int32,
        Kind::Int64 => ShapeField::Int64,
        Kind::Float64 => ShapeField::Float64,
        Kind::Bool => ShapeField::Bool,
        Kind::Time => ShapeField::Time,
        Kind::MicroTime => ShapeField::MicroTime,
        Kind::Quantity => ShapeField::Quantity,
        Kind::IntStr => ShapeField::IntOrString,
        Kind::Any => ShapeField::Any,
        Kind::Ref(name) => ShapeField::Ref(name.clone()),
        Kind::List(item) => ShapeField::List {
            item: Box::new(field(item)),
            map: f.list_type.as_deref() == Some("map"),
            set: f.list_type.as_deref() == Some("set"),
        },
        Kind::Map(value) => ShapeField::Map {
            value: Box::new(field(value)),
            atomic: f.map_type.as_deref() == Some("atomic"),
        },
    }
}

/// Every built-in kind and type `apiserver-rules` knows.
pub fn builtin() -> BuiltinShapes {
    let types = builtin::types();
    BuiltinShapes {
        kinds: types
            .kinds()
            .map(|(k, t)| (k.to_owned(), t.to_owned()))
            .collect(),
        types: types
            .all()
            .map(|t| {
                let shape = ShapeType {
                    fields: t
                        .fields
                        .iter()
                        .map(|(j, f)| (j.clone(), field(f)))
                        .collect(),
                    atomic: t.map_type.as_deref() == Some("atomic"),
                };
                (t.name.clone(), shape)
            })
            .collect(),
    }
}
