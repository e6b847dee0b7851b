//! A kind served in two versions whose shapes differ, converted through its storage version
//! (`+kube-codegen:conversion`): the generated `conversion.rs`.
pub mod shop;
