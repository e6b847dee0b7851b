//! API types used by the behaviour tests: each kind of client the derive can produce.

use kube::CustomResource;
use kube_codegen_runtime::{ApplyConfiguration, GenClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A namespaced kind with status and scale: every verb, the scale methods, and apply
/// configurations.
///
/// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, test types"
/// +kubebuilder:ac:generate=true
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    namespaced,
    status = "FooStatus",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.availableReplicas"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// Name of the Deployment the Foo owns.
    pub deployment_name: String,
    /// Desired replicas.
    pub replicas: i32,
}

/// Status of a Foo.
#[derive(
    ApplyConfiguration, Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq,
)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// Replicas available.
    pub available_replicas: i32,
}

/// A cluster-scoped, read-only kind with an extension method.
///
/// +genclient:readonly
/// +genclient:method=GetSummary,verb=get,subresource=summary,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Cluster")]
pub struct ClusterSpec {
    /// Region.
    pub region: String,
}

// Golden cases, compiled: each case's input types and its expected generated tree are
// modules of this crate, so every golden output is proven to build against kube.
macro_rules! golden_case {
    ($apis:ident, $generated:ident, $input:literal, $expected:literal) => {
        #[allow(missing_docs, dead_code)]
        #[path = $input]
        pub mod $apis;
        #[allow(dead_code)]
        #[path = $expected]
        pub mod $generated;
    };
}

golden_case!(
    all_verbs_apis,
    all_verbs_generated,
    "../golden/all_verbs/input/mod.rs",
    "../golden/all_verbs/expected/mod.rs"
);
golden_case!(
    filters_apis,
    filters_generated,
    "../golden/filters/input/mod.rs",
    "../golden/filters/expected/mod.rs"
);
golden_case!(
    groups_apis,
    groups_generated,
    "../golden/groups/input/mod.rs",
    "../golden/groups/expected/mod.rs"
);
golden_case!(
    methods_apis,
    methods_generated,
    "../golden/methods/input/mod.rs",
    "../golden/methods/expected/mod.rs"
);
golden_case!(
    builtins_apis,
    builtins_generated,
    "../golden/builtins/input/mod.rs",
    "../golden/builtins/expected/mod.rs"
);
golden_case!(
    markers_apis,
    markers_generated,
    "../golden/markers/input/mod.rs",
    "../golden/markers/expected/mod.rs"
);
golden_case!(
    apply_apis,
    apply_generated,
    "../golden/apply/input/mod.rs",
    "../golden/apply/expected/mod.rs"
);
golden_case!(
    conversion_apis,
    conversion_generated,
    "../golden/conversion/input/mod.rs",
    "../golden/conversion/expected/mod.rs"
);
