//! The kinds the pod watcher uses, declared for kube-codegen.

pub mod core;
