//! The verbs a kind's client may have: the generator implements one of these traits on the
//! kind's verb set (`FooVerbs`) for each verb its `+genclient` markers allow, and each method
//! of [`TypedClient`](crate::TypedClient) is bounded by its verb's trait, so a verb the markers
//! leave out is a compile error that names it.

use std::marker::PhantomData;

use serde::Serialize;

use crate::apply::ObjectConfiguration;

/// `create`.
#[diagnostic::on_unimplemented(
    message = "this client has no `create`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Create {}
/// `update`.
#[diagnostic::on_unimplemented(
    message = "this client has no `update`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Update {}
/// `updateStatus`: the kind has a status subresource.
#[diagnostic::on_unimplemented(
    message = "this client has no `update_status`: `{Self}` leaves it out",
    note = "it needs a status subresource, and the kind's `+genclient` markers decide its verbs"
)]
pub trait UpdateStatus {}
/// `delete`.
#[diagnostic::on_unimplemented(
    message = "this client has no `delete`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Delete {}
/// `deleteCollection`.
#[diagnostic::on_unimplemented(
    message = "this client has no `delete_collection`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait DeleteCollection {}
/// `get` (and `get_opt`).
#[diagnostic::on_unimplemented(
    message = "this client has no `get`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Get {}
/// `list`.
#[diagnostic::on_unimplemented(
    message = "this client has no `list`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait List {}
/// `watch`.
#[diagnostic::on_unimplemented(
    message = "this client has no `watch`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Watch {}
/// `patch`.
#[diagnostic::on_unimplemented(
    message = "this client has no `patch`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Patch {}
/// `apply` of a whole object (`apply_object`).
#[diagnostic::on_unimplemented(
    message = "this client has no `apply_object`: `{Self}` leaves it out",
    note = "the kind's `+genclient` markers (`readonly`, `onlyVerbs`, `skipVerbs`, `noVerbs`) decide its verbs"
)]
pub trait Apply {}
/// Not a verb: the kind has an apply configuration (`#[derive(ApplyConfiguration)]` or
/// `+kubebuilder:ac:generate=true`), which `apply` and `apply_status` take.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no apply configuration: this client applies whole objects only",
    note = "`+kubebuilder:ac:generate=true` on the kind (or `#[derive(ApplyConfiguration)]`) gives it one"
)]
pub trait ApplyConfigured {
    /// The kind's apply configuration.
    type Configuration: ObjectConfiguration + std::fmt::Debug;
}
/// `applyStatus` of a whole status (`apply_status_object`).
#[diagnostic::on_unimplemented(
    message = "this client has no `apply_status_object`: `{Self}` leaves it out",
    note = "it needs a status subresource, and the kind's `+genclient` markers decide its verbs"
)]
pub trait ApplyStatus {
    /// The kind's status type.
    type Status: Serialize;
}
/// The kind has a scale subresource (`get_scale`, `update_scale`, `patch_scale` with
/// `get`, `update` and `patch`).
#[diagnostic::on_unimplemented(
    message = "this client has no scale subresource: `{Self}` leaves it out",
    note = "`#[kube(scale = ...)]` or `+kubebuilder:subresource:scale` enables it"
)]
pub trait Scale {}

/// The verb set of a kind with every verb `+genclient` gives by default, as one type:
/// most kinds' `FooVerbs` is `Every<WithStatus<FooStatus>,
/// WithConfiguration<FooApplyConfiguration>, NoScale>` rather than eleven `impl`s.
/// [`NoStatus`] leaves out `update_status` and `apply_status*`, [`NoConfiguration`] the
/// apply-configuration forms of `apply`, and [`NoScale`] the scale subresource.
pub struct Every<Status, Configuration, Scale>(
    PhantomData<fn() -> Status>,
    PhantomData<fn() -> Configuration>,
    PhantomData<fn() -> Scale>,
);

/// The kind's status subresource holds `T`.
pub struct WithStatus<T>(PhantomData<fn() -> T>);
/// The kind has no status subresource (or `+genclient:noStatus`).
pub enum NoStatus {}
/// The kind's apply configuration is `T`.
pub struct WithConfiguration<T>(PhantomData<fn() -> T>);
/// The kind has no apply configuration.
pub enum NoConfiguration {}
/// The kind has a scale subresource.
pub enum WithScale {}
/// The kind has no scale subresource.
pub enum NoScale {}

impl<St, Ac, Sc> Create for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> Update for Every<St, Ac, Sc> {}
impl<T, Ac, Sc> UpdateStatus for Every<WithStatus<T>, Ac, Sc> {}
impl<St, Ac, Sc> Delete for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> DeleteCollection for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> Get for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> List for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> Watch for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> Patch for Every<St, Ac, Sc> {}
impl<St, Ac, Sc> Apply for Every<St, Ac, Sc> {}
impl<T: Serialize, Ac, Sc> ApplyStatus for Every<WithStatus<T>, Ac, Sc> {
    type Status = T;
}
impl<St, T, Sc> ApplyConfigured for Every<St, WithConfiguration<T>, Sc>
where
    T: ObjectConfiguration + std::fmt::Debug,
{
    type Configuration = T;
}
impl<St, Ac> Scale for Every<St, Ac, WithScale> {}
