//! Every CRD marker kube-codegen honours, on one CLI kind and one derive kind.
pub mod shop;
