//! CustomResourceDefinitions as apiextensions-apiserver admits them (v1): the defaults it
//! fills in, then every rule of its validation with its field paths and words: names and
//! group, the protected-group approval annotation, versions and the storage version,
//! per-version schemas (see [`crate::crd_schema`]), subresources, printer columns,
//! selectable fields and conversion.
//!
//! Validation runs on the server's internal form, in which a schema, subresources, printer
//! columns or selectable fields that every version shares are reported once at the top
//! (`spec.validation.openAPIV3Schema...` for a single-version CRD); so are the paths here.

use serde_json::{Value, json};

use crate::crd_schema;
use crate::field::FieldError;
use crate::names;

/// What validating a CRD found: errors (a 422) and warnings (`Warning` headers).
#[derive(Debug, Default)]
pub struct Review {
    /// The errors, in the real server's order.
    pub errors: Vec<FieldError>,
    /// Warnings, such as formats the server does not check.
    pub warnings: Vec<String>,
}

/// The annotation a CRD of a protected group must carry.
pub const APPROVAL: &str = "api-approved.kubernetes.io";

/// Whether CRDs of `group` need the [`APPROVAL`] annotation: `k8s.io`, `kubernetes.io` and
/// their subdomains.
pub fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
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

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// DNS-1035 messages joined as the CRD validation joins them (`,`, no space).
fn dns1035(value: &str) -> Option<String> {
    let msgs = names::dns1035_label(value);
    (!msgs.is_empty()).then(|| msgs.join(","))
}

/// Where a per-version field is reported: at the top when every version has the same
/// value (the server's internal form), else per version.
struct Hoisted {
    schema: bool,
    subresources: bool,
    columns: bool,
    selectable: bool,
}

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

/// The errors and warnings of a CRD being created, after [`apply_defaults`]. The metadata
/// rules every object has (see [`crate::meta`]) are not repeated here, but the
/// name must be `<plural>.<group>` ([`name_errors`]).
pub fn validate(crd: &Value) -> Review {
    let mut r = Review::default();
    let empty = json!({});
    let spec = crd.get("spec").unwrap_or(&empty);
    let errs = &mut r.errors;
    // Group and scope.
    let group = text(spec, "group");
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let msgs = names::dns1123_subdomain(group);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid_str("spec.group", group, msgs.join(",")));
        } else if !group.contains('.') {
            errs.push(FieldError::invalid_str(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(spec, "scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            &json!(other),
            &["Cluster", "Namespaced"],
        )),
    }
    let versions: Vec<Value> = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let hoisted = Hoisted {
        schema: same_everywhere(&versions, "schema"),
        subresources: same_everywhere(&versions, "subresources"),
        columns: same_everywhere(&versions, "additionalPrinterColumns"),
        selectable: same_everywhere(&versions, "selectableFields"),
    };
    // Schema presence.
    for (i, v) in versions.iter().enumerate() {
        if v.pointer("/schema/openAPIV3Schema").is_none() {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            ));
        }
    }
    let has_defaults = versions
        .iter()
        .any(|v| contains_key(v.get("schema"), "default"));
    if spec.get("preserveUnknownFields") == Some(&json!(true)) && has_defaults {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            &json!(true),
            "must be false in order to use defaults in the schema",
        ));
    }
    let status_anywhere = versions
        .iter()
        .any(|v| v.pointer("/subresources/status").is_some());
    for (i, v) in versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if let Some(msg) = dns1035(text(v, "name")) {
            errs.push(FieldError::invalid_str(
                format!("{at}.name"),
                text(v, "name"),
                msg,
            ));
        }
        deprecation(v, &at, errs);
        if !hoisted.schema
            && let Some(schema) = v.pointer("/schema/openAPIV3Schema")
        {
            let status = v.pointer("/subresources/status").is_some();
            let p = format!("{at}.schema.openAPIV3Schema");
            errs.extend(crd_schema::validate(schema, &p, status, &mut r.warnings));
        }
        if !hoisted.subresources {
            subresources(v.get("subresources"), &format!("{at}.subresources"), errs);
        }
        if !hoisted.columns {
            columns(v, &format!("{at}.additionalPrinterColumns"), errs);
        }
        if !hoisted.selectable {
            selectable(
                v,
                v.pointer("/schema/openAPIV3Schema"),
                &format!("{at}.selectableFields"),
                errs,
            );
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut duplicate = false;
    for v in &versions {
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
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .map(|v| text(v, "name"))
        .collect();
    if storage.len() != 1 {
        errs.push(FieldError::invalid(
            "spec.versions",
            &json!(versions),
            "must have exactly one version marked as storage version",
        ));
    }
    names_errors(spec.get("names").unwrap_or(&empty), "spec.names", errs);
    if let Some(first) = versions.first() {
        if hoisted.schema
            && let Some(schema) = first.pointer("/schema/openAPIV3Schema")
        {
            let p = "spec.validation.openAPIV3Schema";
            errs.extend(crd_schema::validate(
                schema,
                p,
                status_anywhere,
                &mut r.warnings,
            ));
        }
        if hoisted.subresources {
            subresources(first.get("subresources"), "spec.subresources", errs);
        }
        if hoisted.columns {
            columns(first, "spec.additionalPrinterColumns", errs);
        }
        if hoisted.selectable {
            selectable(
                first,
                first.pointer("/schema/openAPIV3Schema"),
                "spec.selectableFields",
                errs,
            );
        }
    }
    conversion(spec.get("conversion"), errs);
    // status.storedVersions, as PrepareForCreate leaves them: the first storage version.
    match storage.as_slice() {
        [] => errs.push(FieldError::invalid(
            "status.storedVersions",
            &Value::Null,
            "must have at least one stored version",
        )),
        [first, rest @ ..] => {
            for other in rest {
                errs.push(FieldError::invalid(
                    "status.storedVersions",
                    &json!([first]),
                    format!("must have the storage version {other}"),
                ));
            }
        }
    }
    approval(crd, group, errs);
    if spec.get("preserveUnknownFields") == Some(&json!(true)) {
        errs.push(FieldError::invalid(
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
    r.errors.extend(stored_version_errors(old, new));
    // The approval rule only fires when the annotation's state changes.
    let state = |crd: &Value| approval_state(crd);
    if state(old) == state(new) {
        r.errors.retain(|e| {
            !e.field
                .starts_with("metadata.annotations[api-approved.kubernetes.io]")
        });
    }
    r
}

/// The versions objects may be stored in after an update: the old CRD's
/// `status.storedVersions` and the new storage version (the update strategy adds it), each
/// of which must stay in `spec.versions` until a storage migration removes it from the list.
fn stored_version_errors(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut stored: Vec<String> = old
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let versions: Vec<&Value> = new
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if let Some(storage) = versions
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
    {
        let storage = name(storage);
        if !stored.contains(&storage) {
            stored.push(storage);
        }
    }
    let names: Vec<String> = versions.iter().map(|v| name(v)).collect();
    stored
        .iter()
        .enumerate()
        .filter(|(_, v)| !names.contains(v))
        .map(|(i, v)| {
            FieldError::invalid_str(
                format!("status.storedVersions[{i}]"),
                v,
                format!(
                    "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
                ),
            )
        })
        .collect()
}

/// Everything kube-apiserver checks when `crd` is created, in its order: the object's
/// metadata, the name, then [`validate`] after the server's defaults. This is what a
/// generator runs to know that a cluster accepts what it writes.
pub fn review_create(crd: &Value) -> Review {
    let mut crd = crd.clone();
    apply_defaults(&mut crd);
    let rules = crate::meta::MetaRules {
        name: names::NameRule::Subdomain,
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

/// `metadata.name` must be `<spec.names.plural>.<spec.group>`.
pub fn name_errors(crd: &Value) -> Vec<FieldError> {
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let plural = crd
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() || name == format!("{plural}.{group}") {
        Vec::new()
    } else {
        vec![FieldError::invalid_str(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        )]
    }
}

fn contains_key(v: Option<&Value>, key: &str) -> bool {
    match v {
        Some(Value::Object(m)) => {
            m.contains_key(key) || m.values().any(|x| contains_key(Some(x), key))
        }
        Some(Value::Array(a)) => a.iter().any(|x| contains_key(Some(x), key)),
        _ => false,
    }
}

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

fn names_errors(n: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let get = |k: &str| text(n, k);
    for key in ["plural", "singular", "kind", "listKind"] {
        if get(key).is_empty() {
            errs.push(FieldError::required(format!("{at}.{key}"), ""));
        }
    }
    for key in ["plural", "singular"] {
        let v = get(key);
        if !v.is_empty()
            && let Some(msg) = dns1035(v)
        {
            errs.push(FieldError::invalid_str(format!("{at}.{key}"), v, msg));
        }
    }
    for key in ["kind", "listKind"] {
        let v = get(key);
        if !v.is_empty()
            && let Some(msg) = dns1035(&v.to_lowercase())
        {
            errs.push(FieldError::invalid_str(
                format!("{at}.{key}"),
                v,
                format!("may have mixed case, but should otherwise match: {msg}"),
            ));
        }
    }
    for key in ["shortNames", "categories"] {
        if let Some(list) = n.get(key).and_then(Value::as_array) {
            for (i, s) in list.iter().enumerate() {
                let s = s.as_str().unwrap_or("");
                if let Some(msg) = dns1035(s) {
                    errs.push(FieldError::invalid_str(format!("{at}.{key}[{i}]"), s, msg));
                }
            }
        }
    }
    if !get("kind").is_empty() && get("kind") == get("listKind") {
        errs.push(FieldError::invalid_str(
            format!("{at}.listKind"),
            get("listKind"),
            "kind and listKind may not be the same",
        ));
    }
}

fn subresources(sub: Option<&Value>, at: &str, errs: &mut Vec<FieldError>) {
    let Some(scale) = sub.and_then(|s| s.get("scale")).filter(|s| !s.is_null()) else {
        return;
    };
    let check = |key: &str, under: &[&str], errs: &mut Vec<FieldError>, required: bool| {
        let field = format!("{at}.scale.{key}");
        let v = text(scale, key);
        if v.is_empty() {
            if required {
                errs.push(FieldError::required(field, ""));
            }
            return;
        }
        if !v.starts_with('.') {
            errs.push(FieldError::invalid_str(
                field,
                v,
                "must be a simple json path starting with .",
            ));
        } else if !under.iter().any(|u| v.starts_with(&format!(".{u}."))) {
            let why = match under {
                [one] => format!("should be a json path under .{one}"),
                _ => "should be a json path under either .spec or .status".to_owned(),
            };
            errs.push(FieldError::invalid_str(field, v, why));
        }
    };
    check("specReplicasPath", &["spec"], errs, true);
    check("statusReplicasPath", &["status"], errs, true);
    check("labelSelectorPath", &["spec", "status"], errs, false);
}

fn columns(v: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = v.get("additionalPrinterColumns").and_then(Value::as_array) else {
        return;
    };
    for (j, c) in list.iter().enumerate() {
        let p = format!("{at}[{j}]");
        if text(c, "name").is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        }
        let types = "must be one of boolean,date,integer,number,string";
        match text(c, "type") {
            "" => errs.push(FieldError::required(format!("{p}.type"), types)),
            "integer" | "number" | "string" | "boolean" | "date" => {}
            other => errs.push(FieldError::invalid_str(format!("{p}.type"), other, types)),
        }
        let format = text(c, "format");
        if !format.is_empty()
            && ![
                "int32",
                "int64",
                "float",
                "double",
                "byte",
                "date",
                "date-time",
                "password",
            ]
            .contains(&format)
        {
            errs.push(FieldError::invalid_str(
                format!("{p}.format"),
                format,
                "must be one of byte,date,date-time,double,float,int32,int64,password",
            ));
        }
        match text(c, "jsonPath") {
            "" => errs.push(FieldError::required(format!("{p}.JSONPath"), "")),
            path if !path.starts_with('.') => errs.push(FieldError::invalid_str(
                format!("{p}.JSONPath"),
                path,
                "must be a simple json path starting with .",
            )),
            _ => {}
        }
    }
}

/// The normalised form of a selectable field path: `.spec['a']` is `.spec.a`.
fn normalised(path: &str) -> String {
    path.replace("['", ".").replace("']", "")
}

fn selectable(v: &Value, schema: Option<&Value>, at: &str, errs: &mut Vec<FieldError>) {
    let Some(list) = v
        .get("selectableFields")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        return;
    };
    let Some(root) = schema.and_then(Value::as_object) else {
        errs.push(FieldError::invalid_str(
            at,
            "",
            "may only be set when validations.schema is included",
        ));
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    for (j, f) in list.iter().enumerate() {
        let field = format!("{at}[{j}].jsonPath");
        let path = text(f, "jsonPath");
        if path.is_empty() {
            errs.push(FieldError::required(field, ""));
            continue;
        }
        match crd_schema::resolve(root, path, false) {
            Err(why) => {
                errs.push(FieldError::invalid_str(
                    field,
                    path,
                    format!("is an invalid path: {why}"),
                ));
                continue;
            }
            Ok(node) => {
                if normalised(path).split('.').nth(1) == Some("metadata") {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        "must not point to fields in metadata",
                    ));
                } else if !matches!(
                    node.get("type").and_then(Value::as_str),
                    Some("string" | "boolean" | "integer")
                ) {
                    errs.push(FieldError::invalid_str(
                        &field,
                        path,
                        "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
                    ));
                }
            }
        }
        let key = normalised(path);
        if seen.contains(&key) {
            errs.push(FieldError::duplicate(field, &json!(path)));
        } else {
            seen.push(key);
        }
    }
    if seen.len() > 8 {
        errs.push(FieldError::too_many(at, seen.len(), 8));
    }
}

fn conversion(c: Option<&Value>, errs: &mut Vec<FieldError>) {
    let Some(c) = c.filter(|c| !c.is_null()) else {
        return;
    };
    let strategy = text(c, "strategy");
    match strategy {
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        "None" | "Webhook" => {}
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            &json!(other),
            &["None", "Webhook"],
        )),
    }
    let client = c.pointer("/webhook/clientConfig").filter(|v| !v.is_null());
    let reviews = c
        .pointer("/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if strategy == "Webhook" {
        match client {
            None => errs.push(FieldError::required(
                "spec.conversion.webhookClientConfig",
                "required when strategy is set to Webhook",
            )),
            Some(cc) if cc.get("url").is_some() == cc.get("service").is_some() => {
                errs.push(FieldError::required(
                    "spec.conversion.webhookClientConfig",
                    "exactly one of url or service is required",
                ));
            }
            Some(_) => {}
        }
        if reviews.is_empty() {
            errs.push(FieldError::required(
                "spec.conversion.conversionReviewVersions",
                "",
            ));
        } else if !reviews.iter().any(|v| v == "v1" || v == "v1beta1") {
            errs.push(FieldError::invalid(
                "spec.conversion.conversionReviewVersions",
                &json!(reviews),
                "must include at least one of v1, v1beta1",
            ));
        }
    } else {
        if client.is_some() {
            errs.push(FieldError::forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !reviews.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
}

#[derive(PartialEq, Eq)]
enum Approval {
    NotProtected,
    Missing,
    Bypassed,
    Approved,
    Invalid,
}

fn approval_state(crd: &Value) -> Approval {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !is_protected_group(group) {
        return Approval::NotProtected;
    }
    let value = crd
        .pointer("/metadata/annotations/api-approved.kubernetes.io")
        .and_then(Value::as_str)
        .unwrap_or("");
    if value.is_empty() {
        Approval::Missing
    } else if value.starts_with("unapproved") {
        Approval::Bypassed
    } else if value.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty() && !rest.split('/').next().unwrap_or("").is_empty()
    }) {
        Approval::Approved
    } else {
        Approval::Invalid
    }
}

fn approval(crd: &Value, _group: &str, errs: &mut Vec<FieldError>) {
    let field = format!("metadata.annotations[{APPROVAL}]");
    match approval_state(crd) {
        Approval::Missing => errs.push(FieldError::required(
            field,
            format!("protected groups must have approval annotation \"{APPROVAL}\", see https://github.com/kubernetes/enhancements/pull/1111"),
        )),
        Approval::Invalid => {
            let value = crd
                .pointer("/metadata/annotations/api-approved.kubernetes.io")
                .and_then(Value::as_str)
                .unwrap_or("");
            errs.push(FieldError::invalid_str(
                field,
                value,
                format!("protected groups must have approval annotation \"{APPROVAL}\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"),
            ));
        }
        _ => {}
    }
}

/// The status a created CRD is answered with: the first storage version stored, names
/// and conditions set (the fake establishes a CRD at once).
pub fn established_status(crd: &Value, time: &str) -> Value {
    let stored: Vec<Value> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("storage") == Some(&json!(true)))
                .take(1)
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    let cond = |t: &str, reason: &str, msg: &str| json!({"type": t, "status": "True", "lastTransitionTime": time, "reason": reason, "message": msg});
    let mut conditions = vec![
        cond("NamesAccepted", "NoConflicts", "no conflicts found"),
        cond(
            "Established",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        ),
    ];
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    if is_protected_group(group) {
        let value = crd
            .pointer("/metadata/annotations/api-approved.kubernetes.io")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (status, reason, message) = match approval_state(crd) {
            Approval::Approved => ("True", "ApprovedAnnotation", format!("approved in {value}")),
            _ => (
                "False",
                "UnapprovedAnnotation",
                format!("not approved: \"{value}\""),
            ),
        };
        conditions.push(
            json!({"type": "KubernetesAPIApprovalPolicyConformant", "status": status,
            "lastTransitionTime": time, "reason": reason, "message": message}),
        );
    }
    let mut accepted = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    if let Some(a) = accepted.as_object_mut() {
        a.retain(|_, v| !v.is_null());
    }
    json!({"conditions": conditions, "acceptedNames": accepted, "storedVersions": stored})
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
