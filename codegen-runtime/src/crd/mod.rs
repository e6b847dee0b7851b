//! CRDs with their markers: kube's `CustomResourceExt::crd()`, then the patches
//! `kube-codegen` computed from `+kubebuilder:` markers, then the checks kube-apiserver makes
//! when the CRD is created.
//!
//! Generated code calls [`build`] (or [`build_with`], when structs deriving
//! [`CrdMarkers`] add their patches) once per kind and version, and [`merge`]
//! when a kind has several versions. Neither panics, and neither returns a CRD a cluster
//! would refuse: a schema kube cannot build, a marker that does not fit the schema, a marker
//! nobody read, or anything apiextensions-apiserver rejects is a [`CrdError`].

mod check;
pub mod probe;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::{Map, Value};

pub use apiserver_rules::field::FieldError;
pub use check::Problem;
pub use probe::CrdMarkers;

/// One change to the CRD kube builds, as generated code writes it.
#[derive(Debug, Clone, Copy)]
pub enum Patch {
    /// Sets the keys of the JSON object `set` on the schema at `path`: property names from
    /// the root schema, `[]` for a list's items, `{}` for a map's values.
    /// `x-kubernetes-validations` is appended to rather than replaced, and a key set to
    /// `null` (but `default`) is removed. With [`SCHEMALESS`] set, everything but the
    /// `description` is removed first (`+kubebuilder:validation:Schemaless`).
    Schema {
        /// Where.
        path: &'static [&'static str],
        /// A JSON object.
        set: &'static str,
    },
    /// Adds `field` to (or removes it from) `required` of the object schema at `path`.
    Required {
        /// The object's path.
        path: &'static [&'static str],
        /// The property.
        field: &'static str,
        /// Whether it is required.
        required: bool,
    },
    /// Deep-merges the JSON `value` into the CRD at `pointer`; lists are appended to, and a
    /// key set to `null` is removed (a JSON merge patch's rule).
    Merge {
        /// A JSON pointer such as `/spec/names`.
        pointer: &'static str,
        /// JSON.
        value: &'static str,
    },
    /// The markers of the struct whose schema is at `path` were read: marker lines in the
    /// descriptions of its fields are accounted for. A marker line anywhere else was not
    /// applied, and is an error.
    Read {
        /// The struct's path.
        path: &'static [&'static str],
    },
}

/// The key of a [`Patch::Schema`] that empties the schema at its path but for its
/// `description` (`+kubebuilder:validation:Schemaless`, as controller-gen writes it: the
/// field's type is not looked into, so nothing is placed below it, and the field's other
/// markers say all there is). It is not written into the CRD.
pub const SCHEMALESS: &str = "x-kube-codegen-schemaless";

/// Patches placed in a CRD: each [`Patch`] below a path (the generated patches of a spec
/// sit at the root; a struct deriving `CrdMarkers` adds its own below the field that holds it).
#[derive(Debug, Default)]
pub struct Patches {
    placed: Vec<(Vec<String>, Patch)>,
    depth: usize,
}

impl Patches {
    /// Patches whose paths start at the schema's root.
    pub fn root(patches: &[Patch]) -> Self {
        let mut out = Self::default();
        out.add(&[], patches);
        out
    }

    /// Adds `patches`, whose paths are relative to `at`.
    pub fn add(&mut self, at: &[&str], patches: &[Patch]) {
        let at: Vec<String> = at.iter().map(|s| (*s).to_owned()).collect();
        self.placed.extend(patches.iter().map(|p| (at.clone(), *p)));
    }

    /// Runs `f` one level deeper; a struct that contains itself stops at 32 levels
    /// (its schema cannot be structural anyway).
    pub fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        if self.depth < 32 {
            self.depth += 1;
            f(self);
            self.depth -= 1;
        }
    }
}

/// Why a CRD could not be built.
#[derive(Debug)]
pub enum CrdError {
    /// kube's `crd()` panicked (a schema its structural rewriter cannot express).
    Schema {
        /// The CRD's name.
        kind: String,
        /// kube's panic message.
        message: String,
    },
    /// A marker's patch does not fit the schema kube built.
    Patch {
        /// The CRD's name.
        kind: String,
        /// What did not fit.
        message: String,
    },
    /// The CRD would be refused by a cluster, or has markers that were not applied.
    Invalid {
        /// The CRD's name.
        name: String,
        /// Each problem, with where it is.
        problems: Vec<Problem>,
    },
    /// The versions of a kind could not be merged into one CRD.
    Merge(kube::core::crd::MergeError),
}

impl std::fmt::Display for CrdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrdError::Schema { kind, message } => {
                write!(f, "kube could not build the schema of {kind}: {message}")
            }
            CrdError::Patch { kind, message } => write!(f, "CRD of {kind}: {message}"),
            CrdError::Invalid { name, problems } => {
                write!(f, "CRD {name} is invalid:")?;
                for p in problems {
                    write!(f, "\n  {}", p.message)?;
                }
                Ok(())
            }
            CrdError::Merge(err) => write!(f, "cannot merge CRD versions: {err}"),
        }
    }
}

impl std::error::Error for CrdError {}

impl From<kube::core::crd::MergeError> for CrdError {
    fn from(err: kube::core::crd::MergeError) -> Self {
        CrdError::Merge(err)
    }
}

/// The CRD of `K` with `patches` applied and marker lines dropped from descriptions,
/// checked as the API server checks a new CRD.
pub fn build<K: CustomResourceExt>(
    patches: &[Patch],
) -> Result<CustomResourceDefinition, CrdError> {
    build_with::<K>(Patches::root(patches))
}

/// [`build`] with patches placed by structs deriving `CrdMarkers`.
pub fn build_with<K: CustomResourceExt>(
    patches: Patches,
) -> Result<CustomResourceDefinition, CrdError> {
    patched(
        K::crd_name().to_owned(),
        std::panic::catch_unwind(K::crd),
        patches,
    )
}

/// [`build_with`] once kube has built the CRD of `kind` (or panicked): not generic, so a
/// crate compiles it once rather than once per kind.
fn patched(
    kind: String,
    crd: std::thread::Result<CustomResourceDefinition>,
    patches: Patches,
) -> Result<CustomResourceDefinition, CrdError> {
    let crd = crd.map_err(|panic| CrdError::Schema {
        kind: kind.clone(),
        message: panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default(),
    })?;
    let fail = |message: String| CrdError::Patch {
        kind: kind.clone(),
        message,
    };
    let mut value = serde_json::to_value(&crd).map_err(|e| fail(e.to_string()))?;
    let mut problems = Vec::new();
    let mut read = Vec::new();
    for (at, patch) in &patches.placed {
        if let Patch::Read { path } = patch {
            read.push(joined(at, path));
            continue;
        }
        apply(&mut value, at, patch).map_err(fail)?;
        if let Patch::Schema { path, set } = patch {
            let set: Map<String, Value> =
                serde_json::from_str(set).map_err(|e| fail(e.to_string()))?;
            problems.extend(check::misplaced(&value, &joined(at, path), &set));
        }
    }
    if let Some(schema) = value.pointer("/spec/versions/0/schema/openAPIV3Schema") {
        problems.extend(check::unapplied(schema, &read));
    }
    if let Some(versions) = value
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for v in versions {
            if let Some(schema) = v.pointer_mut("/schema/openAPIV3Schema") {
                strip_markers(schema);
                integer_formats(schema);
            }
        }
    }
    if problems.is_empty() {
        problems = check::review(&value);
    }
    if !problems.is_empty() {
        return Err(CrdError::Invalid {
            name: kind,
            problems,
        });
    }
    serde_json::from_value(value).map_err(|e| fail(e.to_string()))
}

/// Merges the versions of one kind around the stored one (kube's `merge_crds`), and checks
/// the result as the API server would.
pub fn merge(
    crds: Vec<CustomResourceDefinition>,
    stored: &str,
) -> Result<CustomResourceDefinition, CrdError> {
    let merged = kube::core::crd::merge_crds(crds, stored)?;
    let value = serde_json::to_value(&merged).map_err(|e| CrdError::Patch {
        kind: merged.metadata.name.clone().unwrap_or_default(),
        message: e.to_string(),
    })?;
    let problems = check::review(&value);
    if problems.is_empty() {
        Ok(merged)
    } else {
        Err(CrdError::Invalid {
            name: merged.metadata.name.clone().unwrap_or_default(),
            problems,
        })
    }
}

fn joined(at: &[String], path: &[&str]) -> Vec<String> {
    at.iter()
        .cloned()
        .chain(path.iter().map(|s| (*s).to_owned()))
        .collect()
}

fn apply(crd: &mut Value, at: &[String], patch: &Patch) -> Result<(), String> {
    match *patch {
        Patch::Schema { path, set } => {
            let mut set: Map<String, Value> =
                serde_json::from_str(set).map_err(|e| e.to_string())?;
            let schema = schema_at(crd, &joined(at, path))?;
            if set.remove(SCHEMALESS).is_some() {
                schema.retain(|key, _| key == "description");
            }
            for (key, value) in set {
                match (key.as_str(), schema.get_mut(&key), value) {
                    ("x-kubernetes-validations", Some(Value::Array(have)), Value::Array(add)) => {
                        have.extend(add);
                    }
                    // A null drops what kube wrote (an int-or-string has no `type`); a null
                    // default is a default.
                    (k, _, Value::Null) if k != "default" => {
                        schema.remove(&key);
                        // Not nullable: kube's `null` among an optional enum's values goes too.
                        if k == "nullable"
                            && let Some(Value::Array(values)) = schema.get_mut("enum")
                        {
                            values.retain(|v| !v.is_null());
                        }
                    }
                    (_, _, value) => {
                        schema.insert(key, value);
                    }
                }
            }
        }
        Patch::Required {
            path,
            field,
            required,
        } => {
            let path = joined(at, path);
            let schema = schema_at(crd, &path)?;
            let list = schema
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(list) = list else {
                return Err(format!("`required` of `{}` is not a list", path.join(".")));
            };
            list.retain(|v| v != field);
            if required {
                list.push(Value::from(field));
            }
            if list.is_empty() {
                schema.remove("required");
            }
        }
        Patch::Merge { pointer, value } => {
            let value: Value = serde_json::from_str(value).map_err(|e| e.to_string())?;
            let target = crd
                .pointer_mut(pointer)
                .ok_or_else(|| format!("the CRD has no `{pointer}`"))?;
            deep_merge(target, value);
        }
        Patch::Read { .. } => {}
    }
    Ok(())
}

/// The schema object at `path` below the root `openAPIV3Schema` of the (single) version.
fn schema_at<'v>(
    crd: &'v mut Value,
    path: &[String],
) -> Result<&'v mut Map<String, Value>, String> {
    let mut at = crd
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema")
        .ok_or("the CRD has no schema")?;
    for (i, seg) in path.iter().enumerate() {
        let next = match seg.as_str() {
            "[]" => at.get_mut("items"),
            "{}" => at.get_mut("additionalProperties"),
            name => at.get_mut("properties").and_then(|p| p.get_mut(name)),
        };
        at = next.ok_or_else(|| {
            format!(
                "the schema has no `{}`: a marker sits on a field the schema does not show (a `#[schemars(with = ...)]` or a custom `JsonSchema`?)",
                path[..=i].join(".")
            )
        })?;
    }
    at.as_object_mut()
        .ok_or_else(|| format!("the schema at `{}` is not an object", path.join(".")))
}

fn deep_merge(target: &mut Value, value: Value) {
    match (target, value) {
        (Value::Object(have), Value::Object(add)) => {
            for (k, v) in add {
                match have.get_mut(&k) {
                    _ if v.is_null() => {
                        have.remove(&k);
                    }
                    Some(slot) => deep_merge(slot, v),
                    None => {
                        have.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(have), Value::Array(add)) => {
            for v in add {
                if !have.contains(&v) {
                    have.push(v);
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// Drops `+marker` lines (and the blank lines they leave) from every description, as
/// controller-gen does: they are instructions to the generator, not documentation.
/// The integer formats schemars writes for Rust's other integer types (`uint32`, `int8`,
/// ...) are ones kube-apiserver does not know: it warns `unrecognized format "uint32"` on
/// every CRD and ignores them. They become `int32` and `int64`, as controller-gen writes
/// them for Go's `uint32` and `uint64` (schemars' `minimum: 0` stays).
fn integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("integer")
                && let Some(Value::String(format)) = map.get_mut("format")
            {
                let to = match format.as_str() {
                    "int8" | "int16" | "uint8" | "uint16" | "uint32" => Some("int32"),
                    "uint64" | "uint" | "int" => Some("int64"),
                    _ => None,
                };
                if let Some(to) = to {
                    *format = to.to_owned();
                }
            }
            for v in map.values_mut() {
                integer_formats(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integer_formats),
        _ => {}
    }
}

fn strip_markers(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(d)) = map.get_mut("description") {
                let kept: Vec<&str> = d
                    .lines()
                    .filter(|l| !l.trim_start().starts_with('+'))
                    .collect();
                let text = kept.join("\n").trim().to_owned();
                if text.is_empty() {
                    map.remove("description");
                } else {
                    *d = text;
                }
            }
            for v in map.values_mut() {
                strip_markers(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_markers),
        _ => {}
    }
}

/// For `kube-codegen crds`: prints each CRD, or the problems that stopped it, as one JSON
/// document on stdout. Not for use by hand.
#[doc(hidden)]
pub fn __report(results: Vec<Result<CustomResourceDefinition, CrdError>>) {
    let entries: Vec<Value> = results
        .into_iter()
        .map(|r| match r {
            Ok(crd) => {
                let value = serde_json::to_value(&crd).unwrap_or(Value::Null);
                let mut warnings = apiserver_rules::crd::review_create(&value).warnings;
                warnings.extend(check::kept_validations(&value));
                serde_json::json!({"crd": value, "warnings": warnings})
            }
            Err(CrdError::Invalid { name, problems }) => {
                let problems: Vec<Value> = problems
                    .iter()
                    .map(
                        |p| serde_json::json!({"path": p.path, "key": p.key, "message": p.message}),
                    )
                    .collect();
                serde_json::json!({"name": name, "problems": problems})
            }
            Err(other) => serde_json::json!({"error": other.to_string()}),
        })
        .collect();
    println!("{}", Value::Array(entries));
}
