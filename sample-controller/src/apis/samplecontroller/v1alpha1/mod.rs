//! Version `v1alpha1` of `samplecontroller.k8s.io`: Foo and Icecream.
//!
//! +groupName=samplecontroller.k8s.io
//! +kubebuilder:ac:generate=true

pub mod foo;
pub mod icecream;

pub use foo::{Foo, FooSpec, FooStatus};
pub use icecream::{Flavor, Icecream, IcecreamSpec, IcecreamStatus};
