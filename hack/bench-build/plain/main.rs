//! A plain kube-rs controller, as a kube-rs user writes one: a `Backup` kind with
//! `#[derive(CustomResource)]` and `Controller::run` on it, setting the status. The baseline
//! of `init-cold-build` in hack/bench-build.sh (built, never run).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a backup keeps, and when it runs.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "batch.example.com",
    version = "v1",
    kind = "Backup",
    namespaced,
    status = "BackupStatus",
    shortname = "bk"
)]
#[serde(rename_all = "camelCase")]
pub struct BackupSpec {
    /// A cron schedule.
    pub schedule: String,
    /// Backups kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<i32>,
    /// No new runs while true.
    #[serde(default)]
    pub suspend: bool,
}

/// What the controller observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackupStatus {
    /// The generation last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Ready, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// What reconcile needs.
struct Context {
    client: Client,
}

async fn reconcile(backup: Arc<Backup>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let api: Api<Backup> = Api::namespaced(ctx.client.clone(), &backup.namespace().unwrap_or_default());
    let phase = if backup.spec.suspend { "Suspended" } else { "Ready" };
    let status = serde_json::json!({
        "apiVersion": "batch.example.com/v1",
        "kind": "Backup",
        "status": BackupStatus {
            observed_generation: backup.metadata.generation,
            phase: Some(phase.to_owned()),
        },
    });
    api.patch_status(
        &backup.name_any(),
        &PatchParams::apply("plain-op").force(),
        &Patch::Apply(&status),
    )
    .await?;
    Ok(Action::requeue(Duration::from_secs(300)))
}

fn error_policy(_: Arc<Backup>, err: &kube::Error, _: Arc<Context>) -> Action {
    tracing::warn!(%err, "reconcile failed");
    Action::requeue(Duration::from_secs(5))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt::init();
    if std::env::args().any(|a| a == "--crd") {
        println!("{}", serde_json::to_string_pretty(&Backup::crd())?);
        return Ok(());
    }
    let client = Client::try_default().await?;
    let backups: Api<Backup> = Api::all(client.clone());
    Controller::new(backups, watcher::Config::default())
        .shutdown_on_signal()
        .run(reconcile, error_policy, Arc::new(Context { client }))
        .for_each(|result| async move {
            match result {
                Ok((obj, _)) => tracing::info!(name = %obj.name, "reconciled"),
                Err(err) => tracing::warn!(%err, "controller error"),
            }
        })
        .await;
    Ok(())
}
