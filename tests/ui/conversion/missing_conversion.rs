// A version converted through the hub needs `TryFrom` (or `From`) both ways: the missing
// direction (hub -> v2) is a compile error naming both types, as in a generated
// `conversion.rs`.
use kube::CustomResource;
use kube_codegen_runtime::webhook::conversion::Conversion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod v1 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v1", kind = "Gadget", namespaced)]
    pub struct GadgetSpec {
        pub color: String,
    }
}

mod v2 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v2", kind = "Gadget", namespaced)]
    pub struct GadgetSpec {
        pub colour: String,
    }
}

impl From<v2::Gadget> for v1::Gadget {
    fn from(g: v2::Gadget) -> Self {
        Self {
            metadata: g.metadata,
            spec: v1::GadgetSpec { color: g.spec.colour },
        }
    }
}

fn main() {
    let _ = Conversion::hub::<v1::Gadget>().spoke::<v2::Gadget, v1::Gadget>();
}
