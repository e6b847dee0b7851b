//! An in-memory Kubernetes API server for tests and demos.
//!
//! [`FakeApiServer`] is a `tower::Service`, so `kube::Client::new(server.clone(), "default")`
//! talks to it in process: `Api<K>`, `watcher`, `reflector`, `Controller`, `finalizer` and
//! `events::Recorder` run unchanged in `cargo test`. [`FakeApiServer::serve`] also serves it
//! over HTTP on loopback, for `kubectl`.
//!
//! It keeps objects as JSON with the real server's rules: one global `resourceVersion`,
//! optimistic concurrency, `generation`, status and scale subresources, finalizers and
//! `deletionTimestamp`, garbage collection through `ownerReferences`, label and field
//! selectors, paginated lists, watches with bookmarks and 410 Gone, merge, JSON, strategic
//! and server-side apply patches, and CRDs validated against their structural schemas.
//! Errors are `metav1.Status` bodies with the real reasons and codes.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use fake_apiserver::FakeApiServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! let server = FakeApiServer::new();
//! let client = kube::Client::new(server.clone(), "default");
//! let configmaps: Api<ConfigMap> = Api::default_namespaced(client);
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! configmaps.create(&PostParams::default(), &cm).await?;
//! assert!(server.get("v1", "ConfigMap", Some("default"), "settings").is_some());
//! assert_eq!(server.writes().len(), 1);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

mod admission;
mod config;
mod controllers;
mod conversion;
mod error;
mod http;
mod meta;
mod registry;
mod resource;
mod server;
mod store;
#[cfg(feature = "test-env")]
pub mod test_env;
mod webhook_client;

/// The validation rules the server applies (the `apiserver-rules` crate).
pub use apiserver_rules as rules;
pub use config::Config;
pub use error::ApiError;
pub use http::control::{Action, Matcher};
pub use http::serve::{Served, kubeconfig};
pub use rules::field::FieldError;
pub use server::FakeApiServer;
pub use store::ssa;
#[cfg(feature = "test-env")]
pub use test_env::{TestEnv, TestEnvError};

/// The built-in kinds the server knows (`apiserver_rules::builtin`, generated from the
/// Kubernetes API), and how the server reads their bodies: Go's JSON decoder ([`decode`])
/// and protobuf ([`protobuf`]).
pub mod builtin {
    pub use crate::admission::decode::builtin as decode;
    pub use crate::admission::decode::protobuf;
    pub use apiserver_rules::builtin::*;
}
