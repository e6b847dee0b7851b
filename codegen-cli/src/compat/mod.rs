//! `kube-codegen compat`: the changes between a baseline API (CRD manifests) and the current
//! one, each classified as breaking or compatible.

pub mod diff;
#[cfg(test)]
mod tests;
