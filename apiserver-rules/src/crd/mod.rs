//! CustomResourceDefinitions as apiextensions-apiserver admits them (v1): the defaults it
//! fills in, then every rule of its validation with its field paths and words: names and
//! group, the protected-group approval annotation, versions and the storage version,
//! per-version schemas (see [`crate::crd_schema`]), subresources, printer columns,
//! selectable fields and conversion.
//!
//! Validation runs on the server's internal form, in which a schema, subresources, printer
//! columns or selectable fields that every version shares are reported once at the top
//! (`spec.validation.openAPIV3Schema...` for a single-version CRD); so are the paths here.
//!
//! [`validate`] reads top-down in the server's order; each concern has its own file:
//! `naming` (group, scope, `spec.names`, `metadata.name`), `versions` (the version list,
//! its schemas and what is reported once for all), `paths` (the JSON paths of scale,
//! printer columns and selectable fields), `conversion`, `approval` (protected groups) and
//! `status` (`status.storedVersions` and the status of an established CRD).

use serde_json::{Value, json};

use crate::field::FieldError;

mod approval;
mod conversion;
mod naming;
mod paths;
mod status;
mod versions;

pub use approval::{APPROVAL, is_protected_group};
pub use naming::name_errors;
pub use status::established_status;

/// What validating a CRD found: errors (a 422) and warnings (`Warning` headers).
#[derive(Debug, Default)]
pub struct Review {
    /// The errors, in the real server's order.
    pub errors: Vec<FieldError>,
    /// Warnings, such as formats the server does not check.
    pub warnings: Vec<String>,
}

/// Fills what the server fills on create: `singular`, `listKind` and the `None`
/// conversion strategy.
pub fn apply_defaults(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && !kind.is_empty()
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
            && !kind.is_empty()
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if spec.get("conversion").is_none_or(Value::is_null) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
}

/// A string field of `v`, empty when absent.
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// DNS-1035 messages joined as the CRD validation joins them (`,`, no space).
fn dns1035(value: &str) -> Option<String> {
    let msgs = crate::names::dns1035_label(value);
    (!msgs.is_empty()).then(|| msgs.join(","))
}

/// The errors and warnings of a CRD being created, after [`apply_defaults`]. The metadata
/// rules every object has (see [`crate::meta`]) are not repeated here, but the
/// name must be `<plural>.<group>` ([`name_errors`]).
pub fn validate(crd: &Value) -> Review {
    let mut r = Review::default();
    let empty = json!({});
    let spec = crd.get("spec").unwrap_or(&empty);
    naming::group_and_scope(spec, &mut r.errors);
    let versions = versions::Versions::of(spec);
    versions.each(spec, &mut r);
    naming::names(
        spec.get("names").unwrap_or(&empty),
        "spec.names",
        &mut r.errors,
    );
    versions.shared(&mut r);
    conversion::validate(spec.get("conversion"), &mut r.errors);
    status::stored_on_create(versions.list(), &mut r.errors);
    approval::validate(crd, &mut r.errors);
    if spec.get("preserveUnknownFields") == Some(&json!(true)) {
        r.errors.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            &json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    r
}

/// The errors of an update: everything a create checks, plus what may not change.
pub fn validate_update(old: &Value, new: &Value) -> Review {
    let mut r = validate(new);
    for (ptr, field) in [
        ("/spec/group", "spec.group"),
        ("/spec/names/plural", "spec.names.plural"),
    ] {
        let (a, b) = (old.pointer(ptr), new.pointer(ptr));
        if a != b {
            r.errors.push(FieldError::invalid(
                field,
                b.unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
    r.errors.extend(status::stored_version_errors(old, new));
    approval::unless_changed(old, new, &mut r.errors);
    r
}

/// Everything kube-apiserver checks when `crd` is created, in its order: the object's
/// metadata, the name, then [`validate`] after the server's defaults. This is what a
/// generator runs to know that a cluster accepts what it writes.
pub fn review_create(crd: &Value) -> Review {
    let mut crd = crd.clone();
    apply_defaults(&mut crd);
    let rules = crate::meta::MetaRules {
        name: crate::names::NameRule::Subdomain,
        standard_finalizers: false,
    };
    let mut errors = crate::meta::validate_create(&crd, rules);
    errors.extend(name_errors(&crd));
    let review = validate(&crd);
    errors.extend(review.errors);
    Review {
        errors,
        warnings: review.warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(schema: Value) -> Value {
        let mut c = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "foos", "kind": "Foo"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": schema}}]}
        });
        apply_defaults(&mut c);
        c
    }

    fn errors(c: &Value) -> Vec<String> {
        validate(c).errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn defaults_are_checked_against_their_own_schema() {
        let c = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "priority": {"type": "string", "enum": ["low", "normal", "high"], "default": "urgent"},
                "replicas": {"type": "integer", "minimum": 10, "default": 3},
                "config": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}, "default": {"nmae": "x"}}
            }}}}),
        );
        let e = errors(&c);
        let p = "spec.validation.openAPIV3Schema.properties[spec].properties";
        assert!(e.contains(&format!("{p}[priority].default: Unsupported value: \"urgent\": supported values: \"low\", \"normal\", \"high\"")), "{e:#?}");
        assert!(e.contains(&format!("{p}[replicas].default: Invalid value: 3:  in body should be greater than or equal to 10")), "{e:#?}");
        assert!(e.contains(&format!("{p}[config].default: Invalid value: {{\"nmae\":\"x\"}}: must not have unknown fields")), "{e:#?}");
        assert!(
            e.contains(&format!("{p}[config].default.name: Required value")),
            "{e:#?}"
        );
    }

    #[test]
    fn list_map_keys_must_be_required_item_properties() {
        let c = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nme"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}
            }}}}),
        );
        let e = errors(&c);
        let p = "spec.validation.openAPIV3Schema.properties[spec].properties";
        assert!(e.contains(&format!("{p}[ports].x-kubernetes-list-map-keys: Invalid value: [\"nme\"]: entries must all be names of item properties")), "{e:#?}");
        assert!(e.contains(&format!("{p}[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")), "{e:#?}");
    }

    #[test]
    fn protected_groups_names_and_structure() {
        let mut c = crd(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": {}}}}}),
        );
        c["spec"]["group"] = json!("samplecontroller.k8s.io");
        c["spec"]["names"]["shortNames"] = json!(["FB"]);
        let e = errors(&c);
        assert!(e.iter().any(|x| x.starts_with("metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation")), "{e:#?}");
        assert!(
            e.iter().any(|x| x
                .starts_with("spec.names.shortNames[0]: Invalid value: \"FB\": a DNS-1035 label")),
            "{e:#?}"
        );
        assert!(e.contains(&"spec.validation.openAPIV3Schema.properties[spec].properties[x].type: Required value: must not be empty for specified object fields".to_owned()), "{e:#?}");
        c["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "unapproved, testing"});
        assert!(
            !errors(&c)
                .iter()
                .any(|x| x.starts_with("metadata.annotations"))
        );
    }
}
