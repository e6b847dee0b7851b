//! Order: field, type and resource markers on the spec, the status and nested structs.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An order in the shop.
///
/// +genclient
/// +kubebuilder:resource:shortName=ord;ords,categories=shop,singular=order
/// +kubebuilder:subresource:status
/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
/// +kubebuilder:printcolumn:name=Customer,type=string,JSONPath=.spec.customer,description="Who ordered"
/// +kubebuilder:printcolumn:name=Total,type=number,JSONPath=.status.total,priority=1
/// +kubebuilder:selectablefield:JSONPath=.spec.customer
/// +kubebuilder:deprecatedversion:warning="shop.example.com/v1 Order is deprecated; use v2"
/// +kubebuilder:validation:XValidation:rule="self.replicas <= 5 || self.express",message="more than 5 needs express delivery"
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "shop.example.com",
    version = "v1",
    kind = "Order",
    namespaced,
    status = "OrderStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct OrderSpec {
    /// Who ordered.
    ///
    /// +kubebuilder:validation:MinLength=2
    /// +kubebuilder:validation:MaxLength=20
    /// +kubebuilder:validation:Pattern=`^[a-z]+$`
    pub customer: String,
    /// How many of the whole order.
    ///
    /// +kubebuilder:title="Order count"
    /// +kubebuilder:example=2
    /// +kubebuilder:validation:Minimum=1
    /// +kubebuilder:validation:Maximum=10
    /// +kubebuilder:default=1
    /// +optional
    #[serde(default = "one")]
    pub replicas: i32,
    /// Tip, in halves.
    ///
    /// +kubebuilder:validation:Minimum=0
    /// +kubebuilder:validation:ExclusiveMinimum=true
    /// +kubebuilder:validation:MultipleOf=0.5
    pub tip: Option<f64>,
    /// How the order is paid.
    ///
    /// +kubebuilder:validation:Enum=card;cash;voucher
    /// +default="card"
    pub payment: Option<String>,
    /// Where to send the receipt.
    ///
    /// +kubebuilder:validation:Format=email
    /// +k8s:immutable
    pub email: Option<String>,
    /// Currency of the order: must be given, though Rust reads it as optional.
    ///
    /// +k8s:required
    /// +k8s:immutable
    pub currency: Option<String>,
    /// How heavy the parcel may be: a quantity, so `2kg` is not one but `2k` and `1500` are.
    pub weight: Option<k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// The volume of each parcel, by box size.
    pub volumes: Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    /// Express delivery.
    ///
    /// +kubebuilder:default=false
    /// +optional
    #[serde(default)]
    pub express: bool,
    /// Cup size.
    ///
    /// +kubebuilder:default=Medium
    pub size: Option<Size>,
    /// The lines of the order, one per SKU.
    ///
    /// +kubebuilder:validation:MinItems=1
    /// +kubebuilder:validation:MaxItems=5
    /// +k8s:listType=map
    /// +k8s:listMapKey=sku
    pub items: Vec<Line>,
    /// Free-form tags, each once, each short and lowercase.
    ///
    /// +kubebuilder:validation:UniqueItems=true
    /// +kubebuilder:validation:items:MaxLength=12
    /// +kubebuilder:validation:items:Pattern=`^[a-z]+$`
    #[serde(default)]
    pub tags: Vec<String>,
    /// A voucher: an amount or a percentage such as `10%`.
    ///
    /// +kubebuilder:validation:XIntOrString
    pub voucher: Option<String>,
    /// The table number, kept as text.
    ///
    /// +kubebuilder:validation:Type=string
    pub table: Option<String>,
    /// Notes to the kitchen, replaced as a whole.
    ///
    /// +kubebuilder:validation:MaxProperties=3
    /// +mapType=atomic
    #[serde(default)]
    pub notes: BTreeMap<String, String>,
    /// Anything the shop's plugins want to keep.
    ///
    /// +kubebuilder:pruning:PreserveUnknownFields
    /// +optional
    pub extra: Option<serde_json::Value>,
    /// A line kept as written: its type is not looked into, so neither its fields nor
    /// its markers are in the schema.
    ///
    /// +kubebuilder:validation:Schemaless
    /// +kubebuilder:validation:Type=object
    /// +kubebuilder:pruning:PreserveUnknownFields
    /// +optional
    pub sample_line: Option<Line>,
    /// A Kubernetes object to create with the order.
    ///
    /// +kubebuilder:validation:EmbeddedResource
    /// +kubebuilder:pruning:PreserveUnknownFields
    /// +nullable
    pub template: Option<serde_json::Value>,
}

fn one() -> i32 {
    1
}

/// Cup sizes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Size {
    /// Small.
    Small,
    /// Medium.
    Medium,
    /// Large.
    Large,
}

/// One line of an order.
///
/// +kubebuilder:validation:XValidation:rule="self.quantity <= 100",message="at most 100 of one SKU",reason=FieldValueInvalid,fieldPath=".quantity"
/// +structType=atomic
/// +kubebuilder:externalDocs:url=<https://shop.example.com/docs/lines>,description="How lines are priced"
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// Stock keeping unit.
    ///
    /// +kubebuilder:validation:Pattern=`^[A-Z]{3}-[0-9]+$`
    pub sku: String,
    /// How many.
    ///
    /// +kubebuilder:validation:Minimum=1
    pub quantity: i32,
}

/// The observed state of an order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderStatus {
    /// Replicas prepared.
    ///
    /// +kubebuilder:validation:Minimum=0
    #[serde(default)]
    pub replicas: i32,
    /// Total price.
    ///
    /// +optional
    pub total: Option<f64>,
}
