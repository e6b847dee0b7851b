//! Talking to the API server: the verb layer every generated client dereferences to, and
//! what a client is built and run with.
//!
//! - [`typed`]: [`TypedClient`], each verb written once, and the [`FieldManager`] of its
//!   server-side applies.
//! - [`scope`] and [`verbs`]: the type-level marks that keep a client to its kind's scope and
//!   to the verbs its `+genclient` markers allow.
//! - [`config`]: where a controller finds its cluster; [`rate_limit`]: client-go's QPS and
//!   burst for a `kube::Client`; [`read_your_writes`]: a reconcile sees its own last write
//!   before the informer's cache does.

pub mod config;
pub mod rate_limit;
pub mod read_your_writes;
pub mod scope;
pub mod typed;
pub mod verbs;

pub use typed::{Extension, FieldManager, TypedClient};
