//! Built-in group `events.k8s.io`: the events the controllers record.

pub mod v1;
