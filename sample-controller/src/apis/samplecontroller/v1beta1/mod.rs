//! Version `v1beta1` of `samplecontroller.k8s.io`: Foo with the Deployment it asks for
//! nested. Served beside v1alpha1, which stays the storage version (the hub) that the
//! controller and Go's sample-controller use; the conversion webhook converts between them.
//!
//! +groupName=samplecontroller.k8s.io

pub mod foo;

pub use foo::{Foo, FooDeployment, FooSpec};
