//! Caches: client-go's `informers` and `listers` over kube's watcher and reflector store.
//!
//! - [`shared`]: [`SharedInformer`], one watch and one cache per resource type, with its
//!   handlers, indexes and options; [`factory`]: the [`SharedInformerFactory`] that owns them.
//! - [`lister`] and [`typed`]: the read side, and what generated informers and listers are
//!   made of.
//! - What is cached, and how small: [`transform`] (managedFields dropped by default),
//!   [`decode`] (decoded without them), [`managed_aside`], [`metadata`]-only and [`encoded`]
//!   informers.
//! - [`watch_backoff`]: how long an informer waits after a failed list or watch.

pub mod decode;
pub mod encoded;
pub mod factory;
pub mod lister;
pub mod managed_aside;
pub mod metadata;
pub(crate) mod resource_of;
pub mod shared;
pub mod transform;
pub mod typed;
pub mod watch_backoff;

pub use factory::{FactoryBuilder, ScopeApi, SharedInformerFactory};
pub use shared::*;
