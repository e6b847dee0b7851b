//! Walks of a value along its type: the set of fields a value sets, the difference of two
//! values, the merge of an applied configuration into a live object, and the removal of
//! fields an applier stopped applying.

use serde_json::{Map, Value};

use crate::store::ssa::path::{Path, Pe, Set, values_equal};
use crate::store::ssa::schema::{Shape, Ty};

/// The path element of a list item: its key fields (missing ones take their default), or
/// the item itself in a set. `None` when a keyed item has none of its keys.
pub fn item_pe(item: &Value, keys: &Option<Vec<String>>, item_ty: Ty<'_>) -> Option<Pe> {
    match keys {
        None => Some(Pe::Value(item.clone())),
        Some(keys) => {
            let mut fields: Vec<(String, Value)> = keys
                .iter()
                .filter_map(|k| {
                    item.get(k)
                        .cloned()
                        .or_else(|| item_ty.default_of(k))
                        .map(|v| (k.clone(), v))
                })
                .collect();
            if fields.is_empty() {
                return None;
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Some(Pe::Key(fields))
        }
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Every field `value` sets, as server-side apply counts them: scalars and atomic values,
/// every item of a set or keyed list, every map entry or undeclared field, and declared
/// fields that are `null` or `{}`.
pub fn field_set(value: &Value, ty: Ty<'_>) -> Set {
    let mut set = Set::new();
    field_set_at(value, ty, &mut Vec::new(), &mut set);
    set
}

fn field_set_at(value: &Value, ty: Ty<'_>, path: &mut Path, set: &mut Set) {
    match (ty.shape(value), value) {
        (Shape::List { item, keys }, Value::Array(items)) => {
            let pes: Vec<Option<Pe>> = items.iter().map(|i| item_pe(i, &keys, item)).collect();
            for (i, pe) in pes.iter().enumerate() {
                let Some(pe) = pe else { continue };
                path.push(pe.clone());
                let duplicated = pes.iter().filter(|p| p.as_ref() == Some(pe)).count() > 1;
                if !duplicated {
                    field_set_at(&items[i], item, path, set);
                }
                set.insert(path);
                path.pop();
            }
        }
        (Shape::Map, Value::Object(map)) => {
            for (k, v) in map {
                let (fty, declared) = ty.field(k);
                path.push(Pe::Field(k.clone()));
                field_set_at(v, fty, path, set);
                let empty_map = v.as_object().is_some_and(Map::is_empty);
                if v.is_null() || empty_map || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        (Shape::List { .. } | Shape::Map, Value::Null) => {}
        _ => set.insert(path),
    }
}

/// What changed from `old` to `new`.
#[derive(Debug, Default)]
pub struct Diff {
    /// Fields that are new (and containers that did not exist).
    pub added: Set,
    /// Fields whose value changed.
    pub modified: Set,
    /// Fields that are gone.
    pub removed: Set,
}

/// The difference of two values of a type.
pub fn compare(old: Option<&Value>, new: Option<&Value>, ty: Ty<'_>) -> Diff {
    let mut d = Diff::default();
    compare_at(old, new, ty, &mut Vec::new(), &mut d);
    d
}

fn compare_at(old: Option<&Value>, new: Option<&Value>, ty: Ty<'_>, path: &mut Path, d: &mut Diff) {
    let Some(sample) = new.or(old) else { return };
    let both_empty = old.is_none_or(is_empty_container) && new.is_none_or(is_empty_container);
    let shape = ty.shape(sample);
    let container = match (&shape, sample) {
        (Shape::List { .. }, Value::Array(_)) | (Shape::Map, Value::Object(_)) => true,
        (Shape::List { .. } | Shape::Map, Value::Null) => {
            // A null container on one side: a leaf unless the other side has content.
            !both_empty
        }
        _ => false,
    };
    let mismatched = match (old, new) {
        (Some(a), Some(b)) => {
            std::mem::discriminant(a) != std::mem::discriminant(b) && !a.is_null() && !b.is_null()
        }
        _ => false,
    };
    if !container || both_empty || mismatched {
        match (old, new) {
            (None, Some(_)) => d.added.insert(path),
            (Some(_), None) => d.removed.insert(path),
            (Some(a), Some(b)) if !values_equal(a, b) => d.modified.insert(path),
            _ => {}
        }
        return;
    }
    if old.is_none() {
        d.added.insert(path);
    }
    if new.is_none() {
        d.removed.insert(path);
    }
    match shape {
        Shape::List { item, keys } => {
            let items = |v: Option<&Value>| -> Vec<(Pe, Value)> {
                v.and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| item_pe(x, &keys, item).map(|pe| (pe, x.clone())))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let before = items(old);
            let after = items(new);
            let mut seen: Vec<&Pe> = Vec::new();
            for (pe, _) in before.iter().chain(after.iter()) {
                if seen.contains(&pe) {
                    continue;
                }
                seen.push(pe);
                let a = before.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
                let b = after.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
                path.push(pe.clone());
                compare_at(a, b, item, path, d);
                path.pop();
            }
        }
        Shape::Map => {
            let empty = Map::new();
            let a = old.and_then(Value::as_object).unwrap_or(&empty);
            let b = new.and_then(Value::as_object).unwrap_or(&empty);
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (fty, _) = ty.field(k);
                path.push(Pe::Field(k.clone()));
                compare_at(a.get(k), b.get(k), fty, path, d);
                path.pop();
            }
        }
        Shape::Leaf => {}
    }
}

/// The applied configuration `config` merged into `live`: granular maps and structs take
/// the union of their keys, keyed lists and sets match items, everything else is replaced.
pub fn merge(live: &Value, config: &Value, ty: Ty<'_>) -> Value {
    if config.is_null() {
        return if live.is_object() && matches!(ty.shape(live), Shape::Map) {
            live.clone()
        } else {
            config.clone()
        };
    }
    match (ty.shape(config), live, config) {
        (Shape::Map, Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (k, cv) in c {
                let (fty, _) = ty.field(k);
                let merged = match l.get(k) {
                    Some(lv) => merge(lv, cv, fty),
                    None => cv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Shape::List { item, keys }, Value::Array(l), Value::Array(c)) => {
            Value::Array(merge_list(l, c, item, &keys))
        }
        _ => config.clone(),
    }
}

/// Keyed lists and sets: items only in `live` keep their place; applied items come in the
/// applied order, each after the live items that precede it.
fn merge_list(
    live: &[Value],
    config: &[Value],
    item: Ty<'_>,
    keys: &Option<Vec<String>>,
) -> Vec<Value> {
    let lpe: Vec<Option<Pe>> = live.iter().map(|x| item_pe(x, keys, item)).collect();
    let rpe: Vec<Option<Pe>> = config.iter().map(|x| item_pe(x, keys, item)).collect();
    let mut shared: std::collections::VecDeque<&Option<Pe>> =
        rpe.iter().filter(|p| lpe.contains(p)).collect();
    let mut next = shared.pop_front();
    let mut done: Vec<Option<Pe>> = Vec::new();
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let live_item = |pe: &Option<Pe>| lpe.iter().position(|p| p == pe).map(|k| &live[k]);
    while i < live.len() || j < config.len() {
        if i < live.len() && j < config.len() {
            if lpe[i] == rpe[j] {
                out.push(merge(&live[i], &config[j], item));
                done.push(lpe[i].clone());
                i += 1;
                j += 1;
                next = shared.pop_front();
                continue;
            }
            if rpe.contains(&lpe[i]) && next.is_some_and(|n| *n != lpe[i]) {
                i += 1;
                continue;
            }
        }
        if i < live.len() {
            if !rpe.contains(&lpe[i]) {
                out.push(live[i].clone());
                i += 1;
                continue;
            } else if done.contains(&lpe[i]) {
                i += 1;
            }
        }
        if j < config.len() {
            let merged = match live_item(&rpe[j]) {
                Some(l) => merge(l, &config[j], item),
                None => config[j].clone(),
            };
            out.push(merged);
            done.push(rpe[j].clone());
            if next == Some(&rpe[j]) {
                next = shared.pop_front();
            }
            j += 1;
        }
    }
    out
}

/// Makes every declared struct field with owned fields below it a member too: such a
/// field is kept when anything under it is owned.
pub fn with_named_fields(set: &Set, value: &Value, ty: Ty<'_>) -> Set {
    let mut out = set.clone();
    named_at(set, value, ty, &mut Vec::new(), &mut out);
    out
}

fn named_at(set: &Set, value: &Value, ty: Ty<'_>, path: &mut Path, out: &mut Set) {
    match (ty.shape(value), value) {
        (Shape::Map, Value::Object(map)) => {
            for (k, v) in map {
                let pe = Pe::Field(k.clone());
                let Some(sub) = set.child(&pe) else { continue };
                let (fty, declared) = ty.field(k);
                path.push(pe);
                if declared {
                    out.insert(path);
                }
                named_at(sub, v, fty, path, out);
                path.pop();
            }
        }
        (Shape::List { item, keys }, Value::Array(items)) => {
            for x in items {
                let Some(pe) = item_pe(x, &keys, item) else {
                    continue;
                };
                let Some(sub) = set.child(&pe) else { continue };
                path.push(pe);
                named_at(sub, x, item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Deletes from `value` every field in `drop` that `keep` does not hold, with what is below
/// it. A container emptied this way stays, as `{}` or `[]`.
pub fn prune(value: &mut Value, ty: Ty<'_>, drop: &Set, keep: &Set) {
    match ty.shape(value) {
        Shape::Map => {
            let Some(map) = value.as_object_mut() else {
                return;
            };
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let pe = Pe::Field(k.clone());
                if drop.has_member(&pe) && !keep.has_member(&pe) {
                    map.remove(&k);
                    continue;
                }
                if let Some(sub) = drop.child(&pe) {
                    let empty = Set::new();
                    let keep_sub = keep.child(&pe).unwrap_or(&empty);
                    let (fty, _) = ty.field(&k);
                    if let Some(v) = map.get_mut(&k) {
                        prune(v, fty, sub, keep_sub);
                    }
                }
            }
        }
        Shape::List { item, keys } => {
            let Some(items) = value.as_array_mut() else {
                return;
            };
            let empty = Set::new();
            items.retain_mut(|x| {
                let Some(pe) = item_pe(x, &keys, item) else {
                    return true;
                };
                if drop.has_member(&pe) && !keep.has_member(&pe) {
                    return false;
                }
                if let Some(sub) = drop.child(&pe) {
                    prune(x, item, sub, keep.child(&pe).unwrap_or(&empty));
                }
                true
            });
        }
        Shape::Leaf => {}
    }
}

/// The fields of `obj` a set names, walking the live object (client-go's extract): owned
/// leaves whole, keyed items and sets with their owned fields, maps with their owned keys.
pub fn extract(value: &Value, set: &Set, ty: Ty<'_>) -> Option<Value> {
    match (ty.shape(value), value) {
        (_, Value::Null) => Some(Value::Null),
        (Shape::Leaf, _) => Some(value.clone()),
        (Shape::List { .. }, Value::Array(a)) if a.is_empty() => Some(value.clone()),
        (Shape::List { item, keys }, Value::Array(items)) => {
            let mut kept = Vec::new();
            for x in items {
                let Some(pe) = item_pe(x, &keys, item) else {
                    continue;
                };
                if let Some(sub) = set.child(&pe) {
                    if let Some(v) = extract(x, sub, item) {
                        kept.push(v);
                    }
                } else if set.has_member(&pe) {
                    kept.push(x.clone());
                }
            }
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        (Shape::Map, Value::Object(m)) if m.is_empty() => Some(value.clone()),
        (Shape::Map, Value::Object(map)) => {
            let mut out = Map::new();
            for (k, v) in map {
                let pe = Pe::Field(k.clone());
                let (fty, _) = ty.field(k);
                let got = if set.has_member(&pe) {
                    extract(v, set, fty)
                } else if let Some(sub) = set.child(&pe) {
                    extract(v, sub, fty)
                } else {
                    None
                };
                if let Some(got) = got.filter(|g| !g.is_null()) {
                    out.insert(k.clone(), got);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        _ => Some(value.clone()),
    }
}
