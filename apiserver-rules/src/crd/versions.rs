//! `spec.versions`: each version's name, deprecation warning and schema, unique names and
//! exactly one storage version; and where a per-version field is reported, per version or
//! once at the top when every version has the same value (the server's internal form).

use serde_json::{Value, json};

use super::{Review, dns1035, paths, text};
use crate::crd_schema;
use crate::field::FieldError;

/// Where a per-version field is reported: at the top when every version has the same
/// value (the server's internal form), else per version.
struct Hoisted {
    schema: bool,
    subresources: bool,
    columns: bool,
    selectable: bool,
}

/// Whether every version has the same `key` (absent, null and empty count as one).
fn same_everywhere(versions: &[Value], key: &str) -> bool {
    let norm = |v: &Value| -> Value {
        match v.get(key) {
            None | Some(Value::Null) => Value::Null,
            Some(Value::Array(a)) if a.is_empty() => Value::Null,
            Some(Value::Object(o)) if o.is_empty() && key != "subresources" => Value::Null,
            Some(x) => x.clone(),
        }
    };
    versions.windows(2).all(|w| norm(&w[0]) == norm(&w[1]))
}

/// A CRD's versions, with which of their fields are reported once at the top.
pub(super) struct Versions {
    list: Vec<Value>,
    hoisted: Hoisted,
}

impl Versions {
    /// The versions of `spec`.
    pub(super) fn of(spec: &Value) -> Self {
        let list: Vec<Value> = spec
            .get("versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let hoisted = Hoisted {
            schema: same_everywhere(&list, "schema"),
            subresources: same_everywhere(&list, "subresources"),
            columns: same_everywhere(&list, "additionalPrinterColumns"),
            selectable: same_everywhere(&list, "selectableFields"),
        };
        Versions { list, hoisted }
    }

    /// The versions, in the CRD's order.
    pub(super) fn list(&self) -> &[Value] {
        &self.list
    }

    /// Every version's own rules, then unique names and one storage version: schemas
    /// present, no defaults with `preserveUnknownFields`, and per version its name,
    /// deprecation and whatever is not reported at the top.
    pub(super) fn each(&self, spec: &Value, r: &mut Review) {
        let errs = &mut r.errors;
        for (i, v) in self.list.iter().enumerate() {
            if v.pointer("/schema/openAPIV3Schema").is_none() {
                errs.push(FieldError::required(
                    format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "",
                ));
            }
        }
        let has_defaults = self
            .list
            .iter()
            .any(|v| contains_key(v.get("schema"), "default"));
        if spec.get("preserveUnknownFields") == Some(&json!(true)) && has_defaults {
            errs.push(FieldError::invalid(
                "spec.preserveUnknownFields",
                &json!(true),
                "must be false in order to use defaults in the schema",
            ));
        }
        for (i, v) in self.list.iter().enumerate() {
            self.version(v, &format!("spec.versions[{i}]"), r);
        }
        self.unique_and_one_storage(&mut r.errors);
    }

    /// One version at `at` (`spec.versions[i]`).
    fn version(&self, v: &Value, at: &str, r: &mut Review) {
        let errs = &mut r.errors;
        if let Some(msg) = dns1035(text(v, "name")) {
            errs.push(FieldError::invalid_str(
                format!("{at}.name"),
                text(v, "name"),
                msg,
            ));
        }
        deprecation(v, at, errs);
        if !self.hoisted.schema
            && let Some(schema) = v.pointer("/schema/openAPIV3Schema")
        {
            let status = v.pointer("/subresources/status").is_some();
            let p = format!("{at}.schema.openAPIV3Schema");
            errs.extend(crd_schema::validate(schema, &p, status, &mut r.warnings));
        }
        if !self.hoisted.subresources {
            paths::subresources(v.get("subresources"), &format!("{at}.subresources"), errs);
        }
        if !self.hoisted.columns {
            paths::columns(v, &format!("{at}.additionalPrinterColumns"), errs);
        }
        if !self.hoisted.selectable {
            paths::selectable(
                v,
                v.pointer("/schema/openAPIV3Schema"),
                &format!("{at}.selectableFields"),
                errs,
            );
        }
    }

    /// No two versions with one name, and exactly one storage version.
    fn unique_and_one_storage(&self, errs: &mut Vec<FieldError>) {
        let versions = &self.list;
        let mut seen: Vec<&str> = Vec::new();
        let mut duplicate = false;
        for v in versions {
            duplicate |= seen.contains(&text(v, "name"));
            seen.push(text(v, "name"));
        }
        if duplicate {
            errs.push(FieldError::invalid(
                "spec.versions",
                &json!(versions),
                "must contain unique version names",
            ));
        }
        if storage_versions(versions).len() != 1 {
            errs.push(FieldError::invalid(
                "spec.versions",
                &json!(versions),
                "must have exactly one version marked as storage version",
            ));
        }
    }

    /// What every version shares, reported once at the top (`spec.validation...`,
    /// `spec.subresources`, ...), as the first version has it.
    pub(super) fn shared(&self, r: &mut Review) {
        let Some(first) = self.list.first() else {
            return;
        };
        let errs = &mut r.errors;
        if self.hoisted.schema
            && let Some(schema) = first.pointer("/schema/openAPIV3Schema")
        {
            let status_anywhere = self
                .list
                .iter()
                .any(|v| v.pointer("/subresources/status").is_some());
            let p = "spec.validation.openAPIV3Schema";
            errs.extend(crd_schema::validate(
                schema,
                p,
                status_anywhere,
                &mut r.warnings,
            ));
        }
        if self.hoisted.subresources {
            paths::subresources(first.get("subresources"), "spec.subresources", errs);
        }
        if self.hoisted.columns {
            paths::columns(first, "spec.additionalPrinterColumns", errs);
        }
        if self.hoisted.selectable {
            paths::selectable(
                first,
                first.pointer("/schema/openAPIV3Schema"),
                "spec.selectableFields",
                errs,
            );
        }
    }
}

/// The names of the versions marked `storage: true`, in order.
pub(super) fn storage_versions(versions: &[Value]) -> Vec<&str> {
    versions
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .map(|v| text(v, "name"))
        .collect()
}

/// Whether `key` appears anywhere in `v`.
fn contains_key(v: Option<&Value>, key: &str) -> bool {
    match v {
        Some(Value::Object(m)) => {
            m.contains_key(key) || m.values().any(|x| contains_key(Some(x), key))
        }
        Some(Value::Array(a)) => a.iter().any(|x| contains_key(Some(x), key)),
        _ => false,
    }
}

/// `deprecationWarning`: only on deprecated versions, at most 256 printable characters.
fn deprecation(v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let Some(w) = v.get("deprecationWarning").filter(|w| !w.is_null()) else {
        return;
    };
    let field = format!("{at}.deprecationWarning");
    if v.get("deprecated") != Some(&json!(true)) {
        errs.push(FieldError::invalid(
            &field,
            w,
            "can only be set for deprecated versions",
        ));
        return;
    }
    let s = w.as_str().unwrap_or("");
    if s.len() > 256 {
        errs.push(FieldError::invalid(
            &field,
            w,
            "must be <= 256 characters long",
        ));
    }
    if s.is_empty() {
        errs.push(FieldError::invalid(
            &field,
            w,
            "must not be an empty string",
        ));
    }
    if let Some((i, _)) = s.char_indices().find(|(_, c)| c.is_control()) {
        errs.push(FieldError::invalid(
            &field,
            w,
            format!("must only contain printable UTF-8 characters; non-printable character found at index {i}"),
        ));
    }
}
