use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::v1;

/// The spoke: the same facts, nested.
///
/// +genclient
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v2", kind = "Gadget", namespaced)]
pub struct GadgetSpec {
    pub look: Look,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Look {
    pub color: String,
    /// Never negative: v2 refuses a negative size.
    ///
    /// +kubebuilder:validation:Minimum=0
    pub size: i32,
}

impl From<Gadget> for v1::gadget::Gadget {
    fn from(g: Gadget) -> Self {
        let spec = v1::gadget::GadgetSpec {
            color: g.spec.look.color,
            size: g.spec.look.size,
        };
        Self {
            metadata: g.metadata,
            spec,
        }
    }
}

impl TryFrom<v1::gadget::Gadget> for Gadget {
    type Error = String;

    fn try_from(g: v1::gadget::Gadget) -> Result<Self, String> {
        if g.spec.size < 0 {
            return Err(format!("size {} is negative", g.spec.size));
        }
        let look = Look {
            color: g.spec.color,
            size: g.spec.size,
        };
        Ok(Self {
            metadata: g.metadata,
            spec: GadgetSpec { look },
        })
    }
}
