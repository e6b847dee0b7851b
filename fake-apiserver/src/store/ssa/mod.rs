//! Server-side apply and field ownership, as kube-apiserver keeps them in `managedFields`:
//! who owns which field, by apply or by update, per subresource; co-ownership of equal
//! values; per-item ownership of keyed lists and sets; conflicts and `force`; removal of
//! what an applier stopped applying.
//!
//! [`path`] holds field paths and their `FieldsV1` form, [`schema`] the list and map
//! semantics of each type, [`walk`] the walks of values along a type; this module the
//! managers' entries and the two operations, [`apply`] and [`update`].

pub mod path;
pub mod schema;
pub mod walk;

use serde_json::{Value, json};

use path::{Pe, Set, print};
use schema::Ty;
use walk::{compare, field_set, merge, prune, with_named_fields};

/// `Apply` or `Update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The field manager.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version the manager wrote with.
    pub api_version: String,
    /// `""`, `status` or `scale`.
    pub subresource: String,
    /// When it last changed the object; absent when it never did.
    pub time: Option<String>,
    /// What it owns.
    pub set: Set,
}

impl Entry {
    /// Apply entries are one per manager and subresource; update entries also per version.
    fn same_key(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// How conflict messages name it: `"a"`, `"a" with subresource "status"`, `"a" using v1`.
    fn who(&self) -> String {
        let mut s = crate::rules::field::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                crate::rules::field::go_quote(&self.subresource)
            ));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// Reads `metadata.managedFields` (entries that do not parse are dropped).
pub fn read(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|e| {
                    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    let operation = match s("operation").as_str() {
                        "Apply" => Operation::Apply,
                        "Update" => Operation::Update,
                        _ => return None,
                    };
                    Some(Entry {
                        manager: s("manager"),
                        operation,
                        api_version: s("apiVersion"),
                        subresource: s("subresource"),
                        time: e.get("time").and_then(Value::as_str).map(str::to_owned),
                        set: Set::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)).ok()?,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `metadata.managedFields`: entries that own something, sorted as the server sorts
/// them (Apply first, then by time, manager, version, subresource); no key when empty.
pub fn write(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        a.operation
            .cmp(&b.operation)
            .then_with(|| {
                a.time
                    .clone()
                    .unwrap_or_default()
                    .cmp(&b.time.clone().unwrap_or_default())
            })
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let list: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut v = json!({"manager": e.manager, "operation": e.operation.as_str(), "apiVersion": e.api_version});
            if let Some(t) = &e.time {
                v["time"] = json!(t);
            }
            v["fieldsType"] = json!("FieldsV1");
            v["fieldsV1"] = e.set.to_fields_v1();
            if !e.subresource.is_empty() {
                v["subresource"] = json!(e.subresource);
            }
            v
        })
        .collect();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// Fields nobody owns: type and object identity, and what the server sets.
fn strip(set: &Set) -> Set {
    let mut s = Set::new();
    for p in [["apiVersion"].as_slice(), &["kind"], &["metadata"]] {
        s.insert(&p.iter().map(|x| Pe::Field((*x).into())).collect::<Vec<_>>());
    }
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[Pe::Field("metadata".into()), Pe::Field(f.into())]);
    }
    set.difference(&s)
}

/// What an endpoint never lets a manager own: `status` on the main resource of a kind
/// with a status subresource; everything but `status` on `/status`.
pub fn reset_fields(subresource: &str, has_status: bool, old: Option<&Value>, new: &Value) -> Set {
    let mut s = Set::new();
    match subresource {
        "status" => {
            let keys = old
                .and_then(Value::as_object)
                .into_iter()
                .chain(new.as_object())
                .flat_map(|m| m.keys());
            for k in keys.filter(|k| !matches!(k.as_str(), "status" | "apiVersion" | "kind")) {
                s.insert(&[Pe::Field(k.clone())]);
            }
        }
        "" if has_status => s.insert(&[Pe::Field("status".into())]),
        _ => {}
    }
    s
}

/// Why an apply was refused: each other manager's fields it would change.
#[derive(Debug)]
pub struct Conflicts(pub Vec<(Entry, Set)>);

impl Conflicts {
    /// The 409 message and causes, as the real server writes them.
    pub fn message_and_causes(&self) -> (String, Vec<Value>) {
        let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
        let mut causes = Vec::new();
        for (entry, set) in &self.0 {
            let paths: Vec<String> = set.paths().iter().map(|p| print(p)).collect();
            for p in &paths {
                causes.push(json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", entry.who()), "field": p}));
            }
            blocks.push((entry.who(), paths));
        }
        let n: usize = blocks.iter().map(|(_, p)| p.len()).sum();
        let message = if n == 1 {
            format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                blocks[0].0, blocks[0].1[0]
            )
        } else {
            let body: Vec<String> = blocks
                .iter()
                .map(|(who, paths)| {
                    let lines: Vec<String> = paths.iter().map(|p| format!("- {p}")).collect();
                    format!("conflicts with {who}:\n{}", lines.join("\n"))
                })
                .collect();
            format!("Apply failed with {n} conflicts: {}", body.join("\n"))
        };
        (message, causes)
    }
}

/// Who is writing and where.
#[derive(Debug, Clone)]
pub struct Writer<'a> {
    /// The field manager.
    pub manager: &'a str,
    /// `""`, `status` or `scale`.
    pub subresource: &'a str,
    /// The endpoint's `group/version`.
    pub api_version: &'a str,
    /// Now, as `managedFields` time (RFC 3339, seconds).
    pub now: &'a str,
}

/// Server-side apply of `config` onto `live` (`None` creates; `zero` is then the empty
/// object of the kind). Returns the new object with its `managedFields`, or the conflicts.
pub fn apply(
    live: Option<&Value>,
    zero: &Value,
    config: &Value,
    ty: Ty<'_>,
    w: &Writer<'_>,
    force: bool,
    reset: &Set,
) -> Result<Value, Conflicts> {
    // A create merges into nothing but the object's type.
    let empty = json!({"apiVersion": config.get("apiVersion"), "kind": config.get("kind")});
    let base = live.unwrap_or(&empty);
    let mut entries = read(base);
    if live.is_some() && entries.is_empty() {
        // Ownership starts with whoever wrote the object so far.
        let mut first = Entry {
            manager: "before-first-apply".into(),
            operation: Operation::Update,
            api_version: w.api_version.into(),
            subresource: w.subresource.into(),
            time: Some(w.now.into()),
            set: Set::new(),
        };
        let d = compare(Some(zero), Some(base), ty);
        first.set = strip(&d.added.union(&d.modified)).recursive_difference(reset);
        entries.push(first);
    }
    let key = Entry {
        manager: w.manager.into(),
        operation: Operation::Apply,
        api_version: w.api_version.into(),
        subresource: w.subresource.into(),
        time: None,
        set: field_set(config, ty).recursive_difference(reset),
    };
    let previous = entries.iter().position(|e| e.same_key(&key));
    let old_set = previous.map(|i| entries[i].set.clone()).unwrap_or_default();
    let old_time = previous.and_then(|i| entries[i].time.clone());
    if let Some(i) = previous {
        entries.remove(i);
    }
    let mut result = merge(base, config, ty);
    if !old_set.is_empty() {
        let all = entries
            .iter()
            .fold(key.set.clone(), |acc, e| acc.union(&e.set));
        let drop = with_named_fields(&old_set, &result, ty);
        let keep = with_named_fields(&all, &result, ty);
        prune(&mut result, ty, &drop, &keep);
    }
    let d = compare(Some(base), Some(&result), ty);
    let changed = d
        .added
        .recursive_difference(reset)
        .union(&d.modified.recursive_difference(reset));
    let removed = d.removed.recursive_difference(reset);
    let conflicts: Vec<(Entry, Set)> = entries
        .iter()
        .filter_map(|e| {
            let c = e.set.intersection(&changed);
            (!c.is_empty()).then(|| (e.clone(), c))
        })
        .collect();
    if !conflicts.is_empty() && !force {
        return Err(Conflicts(conflicts));
    }
    for e in &mut entries {
        if let Some((_, c)) = conflicts.iter().find(|(o, _)| o.same_key(e)) {
            e.set = e.set.difference(c);
        }
        e.set = e.set.difference(&removed);
    }
    let object_changed = !path::values_equal(base, &result);
    let mut applier = key;
    applier.set = strip(&applier.set);
    applier.time = if object_changed {
        Some(w.now.into())
    } else {
        old_time
    };
    entries.push(applier);
    write(&mut result, entries);
    Ok(result)
}

/// Records a create (`old` is `None`; `zero` is then the empty object), update or
/// non-apply patch by `w` in `new`'s `managedFields`: it takes what it changed, and what
/// it removed leaves every manager.
pub fn update(
    old: Option<&Value>,
    zero: &Value,
    new: &mut Value,
    ty: Ty<'_>,
    w: &Writer<'_>,
    reset: &Set,
) {
    let base = old.unwrap_or(zero);
    // A body's own managedFields replace the live ones; `[]` clears them.
    let mut entries = match new.pointer("/metadata/managedFields") {
        Some(Value::Array(list)) if list.is_empty() => Vec::new(),
        Some(Value::Array(_)) if w.subresource.is_empty() => read(new),
        _ => read(base),
    };
    // An existing object without managed fields is not tracked until the next apply.
    if old.is_some() && entries.is_empty() {
        if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        return;
    }
    let mut probe = new.clone();
    if let Some(meta) = probe.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let mut before = base.clone();
    if let Some(meta) = before.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    let d = compare(Some(&before), Some(&probe), ty);
    let changed = d.added.union(&d.modified).recursive_difference(reset);
    let removed = d.removed.recursive_difference(reset);
    for e in &mut entries {
        e.set = e.set.difference(&changed).difference(&removed);
    }
    let taken = strip(&changed);
    if !taken.is_empty() {
        let scale = w.subresource == "scale";
        match entries.iter_mut().find(|e| {
            e.operation == Operation::Update
                && e.manager == w.manager
                && e.api_version == w.api_version
                && e.subresource == w.subresource
        }) {
            Some(e) => {
                e.set = e.set.union(&taken);
                e.time = (!scale).then(|| w.now.to_owned());
            }
            None => entries.push(Entry {
                manager: w.manager.into(),
                operation: Operation::Update,
                api_version: w.api_version.into(),
                subresource: w.subresource.into(),
                time: (!scale).then(|| w.now.to_owned()),
                set: taken,
            }),
        }
        cap_updates(&mut entries);
    }
    write(new, entries);
}

/// At most ten update entries: the oldest are folded into `ancient-changes`.
fn cap_updates(entries: &mut Vec<Entry>) {
    let count = |es: &Vec<Entry>| {
        es.iter()
            .filter(|e| e.operation == Operation::Update)
            .count()
    };
    if count(entries) <= 10 {
        return;
    }
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|i| entries[*i].operation == Operation::Update)
        .collect();
    order.sort_by(|a, b| {
        let (x, y) = (&entries[*a], &entries[*b]);
        x.time
            .clone()
            .unwrap_or_default()
            .cmp(&y.time.clone().unwrap_or_default())
            .then_with(|| x.manager.cmp(&y.manager))
    });
    let mut first: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut gone: Vec<usize> = Vec::new();
    let mut live = order.len();
    for i in order {
        if live <= 10 {
            break;
        }
        let version = entries[i].api_version.clone();
        let bucket = entries.iter().position(|e| {
            e.manager == "ancient-changes" && e.api_version == version && e.subresource.is_empty()
        });
        match (bucket, first.get(&version)) {
            (None, None) => {
                first.insert(version, i);
            }
            (None, Some(&f)) => {
                entries[f].manager = "ancient-changes".into();
                entries[f].subresource.clear();
                let set = entries[i].set.clone();
                entries[f].set = entries[f].set.union(&set);
                entries[f].time = entries[i].time.clone();
                gone.push(i);
                live -= 1;
            }
            (Some(b), _) => {
                let set = entries[i].set.clone();
                entries[b].set = entries[b].set.union(&set);
                entries[b].time = entries[i].time.clone();
                gone.push(i);
                live -= 1;
            }
        }
    }
    gone.sort_unstable();
    for i in gone.into_iter().rev() {
        entries.remove(i);
    }
}

/// What `manager` applied (its `Apply` entry for `subresource`), read back from `obj`:
/// client-go's `Extract*`. Only `apiVersion`, `kind`, name and namespace when it owns
/// nothing.
pub fn extract(obj: &Value, manager: &str, subresource: &str, ty: Ty<'_>) -> Value {
    let entry = read(obj).into_iter().find(|e| {
        e.manager == manager && e.operation == Operation::Apply && e.subresource == subresource
    });
    let mut out = match entry {
        Some(e) => walk::extract(obj, &e.set.leaves(), ty).unwrap_or_else(|| json!({})),
        None => json!({}),
    };
    if !out.is_object() {
        out = json!({});
    }
    out["apiVersion"] = obj.get("apiVersion").cloned().unwrap_or(Value::Null);
    out["kind"] = obj.get("kind").cloned().unwrap_or(Value::Null);
    if !out.get("metadata").is_some_and(Value::is_object) {
        out["metadata"] = json!({});
    }
    for k in ["name", "namespace"] {
        if let Some(v) = obj.pointer(&format!("/metadata/{k}")) {
            out["metadata"][k] = v.clone();
        }
    }
    out
}
