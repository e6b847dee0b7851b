//! The kinds secret sync uses, declared for kube-codegen.

pub mod core;
