// A status that is a plain field (`+kube-codegen:noStatusSubresource`, as import writes for a
// CRD with a `status` property and no status subresource): the object is updated whole,
// status included, and the client has no status verbs.
use kube::CustomResource;
use kube_codegen_runtime::GenClient;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// +kube-codegen:noStatusSubresource
#[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Backup", namespaced, status = "BackupStatus")]
pub struct BackupSpec {
    pub ttl: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct BackupStatus {
    pub phase: String,
}

#[allow(unused)]
async fn scenario(backups: BackupClient, backup: Backup) {
    let _ = backups.update(&backup, &Default::default()).await;
    let _ = backups.update_status(&backup, &Default::default()).await;
}

fn main() {}
