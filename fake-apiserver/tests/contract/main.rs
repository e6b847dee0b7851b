//! The contract suite: what `fake-apiserver` promises, proved through `kube::Client`.
//!
//! Every case runs against the in-process `FakeApiServer`, and unchanged against a real
//! cluster with `KUBE_CONTRACT_KUBECONFIG=<kubeconfig>`: a case that passes on the fake and
//! fails on kube-apiserver is a bug in the fake. Cases run in their own namespace, clean up
//! after themselves (also when they fail), and only count the objects they created, so the
//! suite passes on a cluster whose controllers add objects, and passes again on the next run.
//! The few cases that need the fake's test controls are named `fake_only_*`; they always run
//! against the fake.

mod env;

mod authorization;
mod cel;
mod conversion;
mod crd;
mod crd_admission;
mod crud;
mod decoding;
mod deep;
mod differential;
mod edges;
mod escalation;
mod fake_only;
mod gc;
mod impersonation;
mod kinds;
mod limits;
mod lists;
mod migration;
mod namespaces;
mod ownership;
mod patch;
mod request_order;
mod requests;
mod stored;
mod validation;
mod versions;
mod watch;
mod webhooks;

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A CRD with a status subresource and a validated, defaulted spec.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[kube(
    group = "contract.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub replicas: i32,
    /// Defaulted by the schema.
    #[serde(default = "default_color")]
    pub color: String,
}

fn default_color() -> String {
    "blue".into()
}

/// Widget status.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct WidgetStatus {
    /// Ready replicas.
    pub ready: i32,
}

/// Installs (or updates) the Widget CRD and waits until it is established. The CRD is
/// shared by every case and every run, so it is applied, never deleted.
pub async fn install_widgets(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        Widget::crd_name(),
        &PatchParams::apply("contract-suite").force(),
        &Patch::Apply(Widget::crd()),
    )
    .await
    .expect("the Widget CRD is accepted");
    env::eventually("the Widget CRD is established", || async {
        let crd = crds.get(Widget::crd_name()).await.ok()?;
        let established = crd
            .status?
            .conditions?
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        established.then_some(())
    })
    .await;
    // A new CRD's resource is served a moment after it is established.
    tokio::time::sleep(Duration::from_millis(if env::on_cluster() {
        1000
    } else {
        0
    }))
    .await;
}
