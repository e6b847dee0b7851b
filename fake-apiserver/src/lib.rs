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
//!
//! # Inside
//!
//! `src/` is in layers, each a folder, named from the top; a module uses its own layer and
//! the layers below it, never one above, and no files import each other in a cycle
//! (`tests/layers.rs` checks both):
//!
//! ```text
//! server.rs, test_env.rs   FakeApiServer and TestEnv: the public API, over everything below
//! envtest/       TestEnv's real-binary backend: etcd and kube-apiserver as processes
//! http/          routing, content negotiation, the action log and faults, watch
//!                streaming, discovery, OpenAPI, serving on loopback
//! registry/      the verbs (get, list, create, update, patch, delete; status, scale,
//!                finalize), each run through admission, conversion and the store
//! admission/     decoding in kube-apiserver's order, defaulting, validation
//!                (apiserver-rules, CRD schemas, CEL), NamespaceLifecycle, webhooks
//! conversion/    CRD versions: strategy None, and Webhook
//! controllers/   what kube-controller-manager does: garbage collection, namespaces,
//!                a deleted CRD's objects (used by the registry only)
//! store/         objects, resource versions, watch history and open watches,
//!                selectors, patches, server-side apply and managedFields
//! meta.rs, resource.rs, error.rs, config.rs, webhook_client.rs
//!                the foundation: object metadata on JSON, what is served (the
//!                built-in table, CRD versions), errors, settings, webhook calls;
//!                each uses no other module of the crate
//! ```
//!
//! So `http -> registry -> admission -> conversion -> store -> foundation`, and
//! `registry -> controllers -> store`. The controllers react to the registry's writes and
//! write back through `controllers::api::Api`, which the registry implements, as
//! kube-controller-manager writes through a client.
//!
//! Where new work goes: a built-in kind is a row of `resource::BUILTINS` (its rules in
//! apiserver-rules); its defaults, `admission/defaulting.rs`; a step of decoding,
//! `admission/decode/`; authorization, a module of `admission/` that the registry runs
//! first; what a kind's registry does beyond the common verbs, `registry/strategy.rs`; a
//! controller, a file of `controllers/`; a new route, `http/`.

// The public API.
#[cfg(unix)]
pub mod envtest;
mod server;
#[cfg(feature = "test-env")]
pub mod test_env;

// The layers (in the order "Inside" gives above).
mod admission;
mod controllers;
mod conversion;
mod http;
mod registry;
mod store;

// The foundation.
mod config;
mod error;
mod meta;
mod resource;
mod webhook_client;

pub use admission::authorization::access::{AccessReport, Grant};
pub use admission::authorization::{Attributes, User};
/// The validation rules the server applies (the `apiserver-rules` crate).
pub use apiserver_rules as rules;
pub use config::{Config, HttpLimits};
pub use error::ApiError;
pub use http::control::{Action, Matcher};
pub use http::serve::{Served, kubeconfig, kubeconfig_with_token};
pub use rules::field::FieldError;
pub use server::{AsUser, FakeApiServer};
pub use store::ssa;
#[cfg(feature = "test-env")]
pub use test_env::{TestEnv, TestEnvError};

pub mod builtin {
    //! The built-in kinds the server knows (`apiserver_rules::builtin`, generated from the
    //! Kubernetes API), and how the server reads their bodies: Go's JSON decoder
    //! ([`decode`]) and protobuf ([`protobuf`]).

    pub use crate::admission::decode::builtin as decode;
    pub use crate::admission::decode::protobuf;
    pub use apiserver_rules::builtin::*;
}
