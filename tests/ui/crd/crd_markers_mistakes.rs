// `CrdMarkers` checks a nested struct's markers where they are written, as on the spec:
// a resource marker, a marker on the wrong type, a default that breaks its own enum; and it
// derives on structs only.
use kube_codegen_runtime::CrdMarkers;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kubebuilder:printcolumn:name=Size,type=integer,JSONPath=.spec.size
#[derive(CrdMarkers, Clone, Debug, Serialize, Deserialize, JsonSchema)]
struct Nested {
    /// +kubebuilder:validation:Minimum=1
    name: String,
    /// +kubebuilder:validation:Enum=low;high
    /// +kubebuilder:default=medium
    level: Option<String>,
}

#[derive(CrdMarkers)]
enum NotAStruct {
    A,
}

fn main() {}
