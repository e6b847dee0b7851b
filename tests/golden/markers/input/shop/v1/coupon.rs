//! Coupon: the derive path, whose markers must give the same CRD as the CLI's.

use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A discount code.
///
/// +kubebuilder:resource:shortName=cpn,categories=shop
/// +kubebuilder:printcolumn:name=Percent,type=integer,JSONPath=.spec.percent
/// +kubebuilder:validation:XValidation:rule="self.code.startsWith('SHOP')",message="codes start with SHOP"
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Coupon", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct CouponSpec {
    /// The code customers type.
    ///
    /// +kubebuilder:validation:MinLength=6
    /// +kubebuilder:validation:Pattern=`^[A-Z0-9]+$`
    pub code: String,
    /// Discount in percent.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=90
    /// +kubebuilder:default=10
    /// +optional
    #[serde(default)]
    pub percent: i32,
    /// Products it applies to.
    ///
    /// +listType=set
    /// +kubebuilder:validation:MaxItems=10
    #[serde(default)]
    pub products: Vec<String>,
}
