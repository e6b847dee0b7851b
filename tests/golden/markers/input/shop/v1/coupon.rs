//! Coupon: the derive path, whose markers (on the spec, the status and a nested struct,
//! the last two through `CrdMarkers`) must give the same CRD as the CLI's.

use std::collections::BTreeMap;

use kube::CustomResource;
use kube_codegen_runtime::{CrdMarkers, GenClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A discount code.
///
/// +kubebuilder:resource:shortName=cpn,categories=shop
/// +kubebuilder:printcolumn:name=Percent,type=integer,JSONPath=.spec.percent
/// +kubebuilder:validation:AtLeastOneOf=until;note
/// +kubebuilder:validation:ExactlyOneOf=until;days
/// +kubebuilder:validation:AtMostOneOf=days;note
/// +kubebuilder:validation:XValidation:rule="self.code.startsWith('SHOP')",message="codes start with SHOP"
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "shop.example.com",
    version = "v1",
    kind = "Coupon",
    namespaced,
    status = "CouponStatus"
)]
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
    /// How often each customer group may use it.
    ///
    /// +listType=map
    /// +listMapKey=group
    /// +optional
    #[serde(default)]
    pub limits: Vec<Limit>,
    /// A code per region, each at most 8 characters (kube-codegen's element marker).
    ///
    /// +kube-codegen:validation:values:MaxLength=8
    /// +optional
    #[serde(default)]
    pub regions: BTreeMap<String, String>,
    /// Valid until this date (`2026-12-31`).
    ///
    /// +kubebuilder:validation:MaxLength=10
    /// +optional
    pub until: Option<String>,
    /// Valid for this many days from its first use.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +optional
    pub days: Option<i32>,
    /// A note for the shop's staff.
    ///
    /// +kubebuilder:validation:MaxLength=64
    /// +optional
    pub note: Option<String>,
}

/// A limit for one customer group.
#[derive(CrdMarkers, Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Limit {
    /// The group.
    ///
    /// +kubebuilder:validation:MinLength=1
    pub group: String,
    /// Uses allowed.
    ///
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=100
    pub uses: i32,
}

/// What the shop saw of the coupon.
#[derive(CrdMarkers, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct CouponStatus {
    /// Times redeemed.
    ///
    /// +kubebuilder:validation:Minimum=0
    pub redeemed: Option<i32>,
}
