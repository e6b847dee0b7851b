//! API group `samplecontroller.k8s.io`.

pub mod v1alpha1;
