//! `Table` output, as `kubectl get` asks for it (`Accept: ...;as=Table`): name, age, and
//! a CRD's printer columns (kube-apiserver's registry converts to tables the same way).

use serde_json::{Value, json};

use crate::resource::ResourceType;

/// A `meta.k8s.io/v1` `Table` of objects, as `kubectl get` asks for: name, age, and the
/// CRD's printer columns.
pub(crate) fn table(rt: &ResourceType, items: &[Value], metadata: Value) -> Value {
    let mut columns = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}),
    ];
    let mut paths = Vec::new();
    for col in &rt.printer_columns {
        columns.push(
            json!({"name": col.0, "type": col.1, "format": "", "description": "", "priority": 0}),
        );
        paths.push(col.2.clone());
    }
    columns.push(
        json!({"name": "Age", "type": "string", "format": "", "description": "Age", "priority": 0}),
    );
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| {
            let mut cells = vec![obj.pointer("/metadata/name").cloned().unwrap_or(Value::Null)];
            for p in &paths {
                let v = p.trim_start_matches('.').split('.').try_fold(obj, |v, k| v.get(k)).cloned();
                cells.push(v.unwrap_or(json!("<none>")));
            }
            cells.push(json!(age(obj.pointer("/metadata/creationTimestamp").and_then(Value::as_str))));
            let meta = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata")});
            json!({"cells": cells, "object": meta})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns, "rows": rows})
}

fn age(created: Option<&str>) -> String {
    let Some(ts) = created.and_then(|c| c.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".to_owned();
    };
    let secs = (jiff::Timestamp::now().as_second() - ts.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}
