//! Scope markers: the type parameter of a generated client says what it may touch.
//!
//! A namespaced kind has `FooClient<Namespaced>` (one namespace, every verb) and
//! `FooClient<AllNamespaces>` (list and watch only: a get or create across namespaces is
//! meaningless, and does not compile). A cluster-scoped kind has `FooClient<Cluster>`.

/// One namespace of a namespaced kind: every verb the annotations allow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Namespaced;

/// Every namespace of a namespaced kind: only list and watch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllNamespaces;

/// A cluster-scoped kind: every verb the annotations allow, no namespace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cluster;

/// The scopes in which objects are reached by name, [`Namespaced`] and [`Cluster`]: the
/// verbs on one object (and `delete_collection`) need it, so a client spanning
/// [`AllNamespaces`] can only list and watch.
#[diagnostic::on_unimplemented(
    message = "a client of every namespace can only list and watch",
    note = "make a client of one namespace (`new(client, namespace, field_manager)`) for this verb"
)]
pub trait ByName {}

impl ByName for Namespaced {}
impl ByName for Cluster {}
