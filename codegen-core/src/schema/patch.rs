//! The patch model: what markers change in the CRD kube builds ([`Patch`]), the fields the
//! derive probes at run time ([`Probe`]), the marker behind each change ([`Origin`]), and how
//! the patches of a struct are moved to where it is used and coalesced.

use serde_json::{Map, Value};
use syn::Type;

use crate::diag::Loc;

/// One change to the CRD.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Patch {
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
pub(crate) struct Probe {
    /// Where the type's schema is: property names, `[]`, `{}`.
    pub(crate) path: Vec<String>,
    /// The type as written.
    pub(crate) ty: Type,
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
pub(crate) struct Markers {
    /// The patches, coalesced: one `Schema` patch per path.
    pub(crate) patches: Vec<Patch>,
    /// Fields whose types may carry markers the front end cannot see (the derive only).
    pub(crate) probes: Vec<Probe>,
    /// The marker behind each schema keyword.
    pub(crate) origins: Vec<Origin>,
    /// `+kubebuilder:skipversion`: this version is left out of the kind's CRD.
    pub(crate) skip_version: bool,
}

/// `p` moved below `at`: the patch of a struct, at the place the struct is used.
pub(super) fn rebase(p: &Patch, at: &[String]) -> Patch {
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

/// One `Schema` patch per path (the first one's place), keys in marker order.
pub(super) fn coalesce(patches: Vec<Patch>) -> Vec<Patch> {
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
