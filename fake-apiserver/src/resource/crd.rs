//! The resource types of a CRD: one per served version, sharing its names, scope, storage
//! version, conversion and the schemas of all its versions.

use serde_json::Value;

use super::{FieldLabels, Generation, MetaRules, ResourceType, ScalePaths};

/// The resource types a CRD serves (one per served version), or why it cannot be served.
pub fn from_crd(crd: &Value) -> Result<Vec<ResourceType>, String> {
    let spec = crd.get("spec").ok_or("spec is required")?;
    let (template, versions) = crd_template(spec)?;
    versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .map(|v| crd_version(&template, v, versions))
        .collect()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// What every served version of a CRD shares: its names, scope, storage version and
/// conversion (the version's own fields are left empty); and its versions.
fn crd_template(spec: &Value) -> Result<(ResourceType, &[Value]), String> {
    let group = text(spec, "group").ok_or("spec.group is required")?;
    let names = spec.get("names").ok_or("spec.names is required")?;
    let plural = text(names, "plural").ok_or("spec.names.plural is required")?;
    let kind = text(names, "kind").ok_or("spec.names.kind is required")?;
    let singular = text(names, "singular").unwrap_or_else(|| kind.to_ascii_lowercase());
    let strings = |key: &str| -> Vec<String> {
        names
            .get(key)
            .and_then(Value::as_array)
            .map_or_else(Vec::new, |a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
    };
    let namespaced = match text(spec, "scope").as_deref() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => return Err("spec.scope must be Namespaced or Cluster".to_owned()),
    };
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or("spec.versions is required")?;
    let storage: Vec<&Value> = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .collect();
    if storage.len() != 1 {
        return Err(format!(
            "spec.versions must have exactly one storage version, found {}",
            storage.len()
        ));
    }
    let storage_version = text(storage[0], "name").ok_or("spec.versions[].name is required")?;
    let conversion = spec
        .get("conversion")
        .filter(|c| c.get("strategy").and_then(Value::as_str) == Some("Webhook"))
        .and_then(|c| c.get("webhook"))
        .map(|w| std::sync::Arc::new(w.clone()));
    let template = ResourceType {
        group,
        version: String::new(),
        kind,
        plural,
        singular,
        namespaced,
        status: false,
        scale: None,
        short_names: strings("shortNames"),
        categories: strings("categories"),
        schema: None,
        rules: None,
        selectable_fields: Vec::new(),
        storage_version,
        custom: true,
        generation: Generation::AllButMetadata,
        printer_columns: Vec::new(),
        meta: MetaRules::CUSTOM,
        field_labels: FieldLabels::Listed,
        warnings: Vec::new(),
        conversion,
        schemas: std::sync::Arc::new(
            versions
                .iter()
                .filter_map(|v| {
                    Some((
                        text(v, "name")?,
                        v.pointer("/schema/openAPIV3Schema")?.clone(),
                    ))
                })
                .collect(),
        ),
    };
    Ok((template, versions))
}

/// The served version `v` of the CRD whose shared parts are `template`.
fn crd_version(
    template: &ResourceType,
    v: &Value,
    versions: &[Value],
) -> Result<ResourceType, String> {
    let version = text(v, "name").ok_or("spec.versions[].name is required")?;
    let sub = v.get("subresources");
    let scale = sub.and_then(|s| s.get("scale")).map(|s| ScalePaths {
        spec_replicas: text(s, "specReplicasPath").unwrap_or_default(),
        status_replicas: text(s, "statusReplicasPath").unwrap_or_default(),
        label_selector: text(s, "labelSelectorPath"),
    });
    let selectable = v
        .get("selectableFields")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| {
            a.iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_owned())
                .collect()
        });
    let printer_columns = v
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |cols| {
            cols.iter()
                .map(|c| {
                    (
                        text(c, "name").unwrap_or_default(),
                        text(c, "type").unwrap_or_default(),
                        text(c, "jsonPath").unwrap_or_default(),
                    )
                })
                .collect()
        });
    Ok(ResourceType {
        version,
        status: sub.and_then(|s| s.get("status")).is_some(),
        scale,
        schema: v.pointer("/schema/openAPIV3Schema").cloned(),
        rules: v
            .pointer("/schema/openAPIV3Schema")
            .and_then(apiserver_rules::cel::Rules::compile)
            .map(std::sync::Arc::new),
        selectable_fields: selectable,
        printer_columns,
        warnings: deprecation_warning(v, &template.group, &template.kind, versions)
            .into_iter()
            .collect(),
        ..template.clone()
    })
}

/// The warning every request to a deprecated CRD version gets: its own
/// `deprecationWarning`, or `<group>/<version> <Kind> is deprecated`, naming the most
/// preferred served version that is not deprecated and preferred over this one.
fn deprecation_warning(
    version: &Value,
    group: &str,
    kind: &str,
    versions: &[Value],
) -> Option<String> {
    if version.get("deprecated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    if let Some(own) = version.get("deprecationWarning").and_then(Value::as_str) {
        return Some(own.to_owned());
    }
    let name = version.get("name").and_then(Value::as_str).unwrap_or("");
    let mut message = format!("{group}/{name} {kind} is deprecated");
    let newer = versions
        .iter()
        .filter(|v| {
            v.get("served").and_then(Value::as_bool) == Some(true)
                && v.get("deprecated").and_then(Value::as_bool) != Some(true)
        })
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .filter(|v| apiserver_rules::version::compare(name, v).is_lt())
        .max_by(|a, b| apiserver_rules::version::compare(a, b));
    if let Some(newer) = newer {
        message.push_str(&format!("; use {group}/{newer} {kind}"));
    }
    Some(message)
}
