//! The sample's API types, laid out as `<group>/<version>` like Go's `pkg/apis`.
//!
//! Hand-written; `hack/update-codegen.sh` reads them and writes `src/generated`.

pub mod apps;
pub mod core;
pub mod events;
pub mod samplecontroller;

/// Every CRD of the sample's API tree, to install or check at start-up.
pub fn crds()
-> Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>
{
    use kube::CustomResourceExt;
    vec![
        samplecontroller::v1alpha1::Foo::crd(),
        samplecontroller::v1alpha1::Icecream::crd(),
    ]
}
