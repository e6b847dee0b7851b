//! Where a cached Pod's bytes go: each part of the cached objects cloned and counted by the
//! counting allocator (a clone has the layout of the cached object, which kube's reflector
//! itself stores as a clone), plus the store's own key and table slot, summed over the
//! cache and divided by the number of objects.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{Lookup, ObjectRef};
use kube_codegen_runtime::Encoded;
use serde_json::{Value, json};

use crate::alloc::{Heap, heap};

/// The heap bytes a clone of `value` allocates (its inline part is not counted: it lives
/// in whatever holds it).
fn cloned<T: Clone>(value: &T) -> Heap {
    let before = heap();
    let copy = value.clone();
    let after = heap();
    drop(copy);
    Heap {
        requested: after.requested - before.requested,
        chunks: after.chunks - before.chunks,
        allocations: after.allocations - before.allocations,
    }
}

/// Rows of (part, requested bytes, chunk bytes, allocations), summed.
#[derive(Default)]
struct Rows(Vec<(&'static str, Heap)>);

impl Rows {
    fn add(&mut self, part: &'static str, h: Heap) {
        match self.0.iter_mut().find(|(p, _)| *p == part) {
            Some((_, sum)) => {
                sum.requested += h.requested;
                sum.chunks += h.chunks;
                sum.allocations += h.allocations;
            }
            None => self.0.push((part, h)),
        }
    }

    fn per_object(self, n: usize) -> Value {
        let n = n.max(1) as f64;
        let rows: Vec<Value> = self
            .0
            .into_iter()
            .map(|(part, h)| {
                json!([
                    part,
                    (h.requested as f64 / n).round(),
                    (h.chunks as f64 / n).round(),
                    (h.allocations as f64 / n * 10.0).round() / 10.0
                ])
            })
            .collect();
        Value::Array(rows)
    }
}

/// An inline block of `size` bytes as malloc holds it (header and 16-byte rounding).
fn block(size: usize) -> Heap {
    let chunk = (size + size_of::<usize>()).div_ceil(16) * 16;
    Heap {
        requested: size as i64,
        chunks: chunk.max(32) as i64,
        allocations: 1,
    }
}

/// The store's part of one object: its key's strings, and its slot in the hash table
/// (hashbrown: a power of two of buckets, at most 7/8 full, one control byte each).
fn store_part<K: Resource + Lookup<DynamicType = ()>>(rows: &mut Rows, obj: &K, n: usize) {
    let key: ObjectRef<K> = obj.to_object_ref(());
    rows.add(
        "store key strings (name, namespace, resourceVersion, uid)",
        cloned(&key),
    );
    let buckets = (n * 8).div_ceil(7).next_power_of_two();
    let slot = size_of::<(ObjectRef<K>, Arc<K>)>() + 1;
    rows.add(
        "store table slots (ObjectRef + Arc, at the table's load)",
        Heap {
            requested: (buckets * slot / n.max(1)) as i64,
            chunks: (buckets * slot / n.max(1)) as i64,
            allocations: 0,
        },
    );
}

fn metadata_parts(rows: &mut Rows, meta: &ObjectMeta) {
    let total = cloned(meta);
    let labels = cloned(&meta.labels);
    let annotations = cloned(&meta.annotations);
    let managed = cloned(&meta.managed_fields);
    let owners = cloned(&meta.owner_references);
    rows.add("metadata.labels (BTreeMap)", labels);
    rows.add("metadata.annotations (BTreeMap)", annotations);
    rows.add(
        "metadata.managedFields (fieldsV1 as a serde_json tree)",
        managed,
    );
    rows.add("metadata.ownerReferences", owners);
    let rest = Heap {
        requested: total.requested
            - labels.requested
            - annotations.requested
            - managed.requested
            - owners.requested,
        chunks: total.chunks - labels.chunks - annotations.chunks - managed.chunks - owners.chunks,
        allocations: total.allocations
            - labels.allocations
            - annotations.allocations
            - managed.allocations
            - owners.allocations,
    };
    rows.add("metadata: other strings", rest);
}

/// Per cached Pod, by part.
pub fn pods(objs: &[Arc<Pod>]) -> Value {
    let mut rows = Rows::default();
    let n = objs.len();
    for pod in objs {
        rows.add(
            "Arc<Pod> block (Pod inline: spec and status structs)",
            block(size_of::<Pod>() + 16),
        );
        metadata_parts(&mut rows, &pod.metadata);
        if let Some(spec) = &pod.spec {
            let total = cloned(spec);
            let containers = cloned(&spec.containers);
            let volumes = cloned(&spec.volumes);
            rows.add(
                "spec.containers (Vec of inline Container + their heap)",
                containers,
            );
            rows.add("spec.volumes (Vec of inline Volume + their heap)", volumes);
            rows.add(
                "spec: other",
                Heap {
                    requested: total.requested - containers.requested - volumes.requested,
                    chunks: total.chunks - containers.chunks - volumes.chunks,
                    allocations: total.allocations - containers.allocations - volumes.allocations,
                },
            );
        }
        rows.add("status", cloned(&pod.status));
        store_part(&mut rows, pod.as_ref(), n);
    }
    rows.per_object(n)
}

/// Per cached `PartialObjectMeta<Pod>`, by part.
pub fn metas(objs: &[Arc<PartialObjectMeta<Pod>>]) -> Value {
    let mut rows = Rows::default();
    let n = objs.len();
    for obj in objs {
        rows.add(
            "Arc<PartialObjectMeta> block (ObjectMeta inline)",
            block(size_of::<PartialObjectMeta<Pod>>() + 16),
        );
        rows.add("apiVersion and kind", cloned(&obj.types));
        metadata_parts(&mut rows, &obj.metadata);
        store_part(&mut rows, obj.as_ref(), n);
    }
    rows.per_object(n)
}

/// Per cached `Encoded<Pod>`, by part.
pub fn encoded(objs: &[Arc<Encoded<Pod>>]) -> Value {
    let mut rows = Rows::default();
    let n = objs.len();
    for obj in objs {
        rows.add(
            "Arc<Encoded> block (ObjectMeta inline)",
            block(size_of::<Encoded<Pod>>() + 16),
        );
        metadata_parts(&mut rows, obj.meta());
        rows.add("the rest as JSON", block(obj.encoded_len()));
        store_part(&mut rows, obj.as_ref(), n);
    }
    rows.per_object(n)
}
