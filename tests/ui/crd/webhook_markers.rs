use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Webhook markers on the type are checked as `kube-codegen webhooks` reads them.
///
/// +kubebuilder:webhook:path=/validate-foo,mutating=false,failurPolicy=fail,sideEffects=Some,groups=example.com,resources=foos,verbs=create,versions=v1,name=vfoo.example.com,admissionReviewVersions=v1
/// +kubebuilder:webhookconfiguration:mutating=maybe,name=foo-hooks
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
struct FooSpec {
    replicas: i32,
}

fn main() {}
