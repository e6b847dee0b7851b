//! The kinds the node reboot operator uses, declared for kube-codegen.

pub mod core;
