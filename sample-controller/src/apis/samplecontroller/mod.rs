//! API group `samplecontroller.k8s.io`.

pub mod v1alpha1;
pub mod v1beta1;
