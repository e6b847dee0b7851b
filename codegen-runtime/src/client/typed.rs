//! The verb layer: [`TypedClient`], what every generated client dereferences to, with each
//! verb written once, and the [`FieldManager`] its server-side applies write with.
//!
//! A generated `FooClient<S>` is a newtype over `TypedClient<Foo, S, FooVerbs>` that
//! dereferences to it, as client-go's typed clients embed `gentype.ClientWithList`: the
//! generated code per kind is its constructors, its `+genclient:method` extension methods
//! and its verb set, and this module holds the methods. Two type parameters decide which
//! methods a client has:
//! - `S`, the [scope](crate::client::scope): verbs on one object by name need [`ByName`]
//!   (`Namespaced` or `Cluster`), so `FooClient<AllNamespaces>` can only list and watch;
//! - `V`, the kind's verb set: a type the generator declares next to the client
//!   (`FooVerbs`) and marks with one trait of [`verbs`] per verb the `+genclient` markers
//!   allow. The marks go on this local type rather than on `Foo`, so built-in kinds
//!   (`+genclient` on `type Deployment = k8s_openapi::...`) get them too.
//!
//! A verb the markers leave out is a compile error that names it:
//! ``this client has no `create`: `FooVerbs` leaves it out``.
//!
//! Over [`kube::Api`] the client adds what generated clients promise: `update` takes the
//! name from the object, server-side apply uses the clientset's field manager, `apply` and
//! `apply_status` take the kind's apply configuration (`apply_object` and
//! `apply_status_object` a whole object or status), and extension methods may use other
//! input and result types than the kind's own.

use std::fmt::Debug;
use std::future::Future;
use std::marker::PhantomData;

use either::Either;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{
    Api, DeleteParams, GetParams, ListParams, ObjectList, Patch, PatchParams, PostParams, Request,
    WatchEvent, WatchParams,
};
use kube::core::Status;
use kube::{Client, Error, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::apply::ObjectConfiguration;
use crate::client::scope::{AllNamespaces, ByName, Cluster, Namespaced};
use crate::client::verbs;

/// The field manager a clientset writes with, for server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldManager {
    name: String,
    force: bool,
}

impl FieldManager {
    /// Apply as `name` (shown in `managedFields`), without taking over conflicting fields.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            force: false,
        }
    }

    /// Take ownership of fields another manager set (`force=true`), as controllers
    /// that are the single writer of their objects usually do.
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    /// The manager name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether applies are forced.
    pub fn is_forced(&self) -> bool {
        self.force
    }

    /// The patch parameters of an apply by this manager.
    pub fn apply_params(&self) -> PatchParams {
        let params = PatchParams::apply(&self.name);
        if self.force { params.force() } else { params }
    }
}

/// The typed client of kind `K` in scope `S` with the verbs of `V`: what a generated
/// client dereferences to. Each scope has its constructor, so a client's scope always says
/// what its requests reach.
pub struct TypedClient<K, S, V> {
    api: Api<K>,
    client: Client,
    field_manager: FieldManager,
    marks: PhantomData<fn() -> (S, V)>,
}

impl<K, S, V> TypedClient<K, S, V> {
    fn over(api: Api<K>, client: Client, field_manager: FieldManager) -> Self {
        Self {
            api,
            client,
            field_manager,
            marks: PhantomData,
        }
    }

    /// The requests `+genclient:method` extension methods send: generated code calls it,
    /// users call the generated methods.
    #[doc(hidden)]
    pub fn __extension(&self) -> Extension<'_, K> {
        Extension {
            api: &self.api,
            client: &self.client,
            field_manager: &self.field_manager,
        }
    }
}

impl<K, V> TypedClient<K, Namespaced, V>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    /// A client for the objects of `K` in `namespace`.
    pub fn namespaced(client: Client, namespace: &str, field_manager: FieldManager) -> Self {
        Self::over(
            Api::namespaced(client.clone(), namespace),
            client,
            field_manager,
        )
    }
}

impl<K, V> TypedClient<K, AllNamespaces, V>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    /// A client for the objects of `K` in every namespace: it can only list and watch.
    pub fn all_namespaces(client: Client, field_manager: FieldManager) -> Self {
        Self::over(Api::all(client.clone()), client, field_manager)
    }
}

impl<K, V> TypedClient<K, Cluster, V>
where
    K: Resource<DynamicType = (), Scope = ClusterResourceScope>,
{
    /// A client for the objects of a cluster-scoped `K`.
    pub fn cluster(client: Client, field_manager: FieldManager) -> Self {
        Self::over(Api::all(client.clone()), client, field_manager)
    }
}

impl<K: Clone, S, V> Clone for TypedClient<K, S, V> {
    fn clone(&self) -> Self {
        Self::over(
            self.api.clone(),
            self.client.clone(),
            self.field_manager.clone(),
        )
    }
}

impl<K: Resource, S, V> Debug for TypedClient<K, S, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedClient")
            .field("url", &self.api.resource_url())
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

impl<K, S: ByName, V> TypedClient<K, S, V>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    /// Creates an object (`POST`).
    pub fn create<'a>(
        &'a self,
        obj: &'a K,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Create,
    {
        self.api.create(pp, obj)
    }

    /// Replaces an object, named by its `metadata.name` (`PUT`).
    pub async fn update(&self, obj: &K, pp: &PostParams) -> Result<K, Error>
    where
        V: verbs::Update,
    {
        self.api.replace(object_name(obj)?, pp, obj).await
    }

    /// Replaces the status of an object, named by its `metadata.name` (`PUT .../status`).
    pub async fn update_status(&self, obj: &K, pp: &PostParams) -> Result<K, Error>
    where
        V: verbs::UpdateStatus,
    {
        self.api.replace_status(object_name(obj)?, pp, obj).await
    }

    /// Deletes an object (`DELETE`): the object while finalizers keep it, or the server's
    /// status once it is gone.
    pub fn delete<'a>(
        &'a self,
        name: &'a str,
        dp: &'a DeleteParams,
    ) -> impl Future<Output = Result<Either<K, Status>, Error>> + 'a
    where
        V: verbs::Delete,
    {
        self.api.delete(name, dp)
    }

    /// Deletes every object that `lp` selects (`DELETE` on the collection).
    pub fn delete_collection<'a>(
        &'a self,
        dp: &'a DeleteParams,
        lp: &'a ListParams,
    ) -> impl Future<Output = Result<Either<ObjectList<K>, Status>, Error>> + 'a
    where
        V: verbs::DeleteCollection,
    {
        self.api.delete_collection(dp, lp)
    }

    /// Gets an object by name (`GET`); a missing object is an error (`404`).
    pub fn get<'a>(&'a self, name: &'a str) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Get,
    {
        self.api.get(name)
    }

    /// Gets an object by name (`GET`); a missing object is `None`.
    pub fn get_opt<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Future<Output = Result<Option<K>, Error>> + 'a
    where
        V: verbs::Get,
    {
        self.api.get_opt(name)
    }

    /// Patches an object (`PATCH`: merge, JSON, strategic merge or apply patch).
    pub fn patch<'a, P: Serialize + Debug>(
        &'a self,
        name: &'a str,
        pp: &'a PatchParams,
        patch: &'a Patch<P>,
    ) -> impl Future<Output = Result<K, Error>> + 'a
    where
        V: verbs::Patch,
    {
        self.api.patch(name, pp, patch)
    }

    /// Server-side applies an apply configuration with this client's field manager, which
    /// then owns exactly the fields it sets.
    pub async fn apply(
        &self,
        config: &<V as verbs::ApplyConfigured>::Configuration,
    ) -> Result<K, Error>
    where
        V: verbs::Apply + verbs::ApplyConfigured,
    {
        let name = configuration_name(config)?;
        let body = with_type_meta::<K, _>(config)?;
        let params = self.field_manager.apply_params();
        self.api.patch(name, &params, &Patch::Apply(body)).await
    }

    /// Server-side applies a whole object with this client's field manager, which then
    /// owns every field it serializes (prefer an apply configuration); `managedFields` are
    /// not sent.
    pub async fn apply_object(&self, obj: &K) -> Result<K, Error>
    where
        V: verbs::Apply,
    {
        let name = object_name(obj)?;
        let mut body = serde_json::to_value(obj).map_err(Error::SerdeError)?;
        if let Some(meta) = body
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            meta.remove("managedFields");
        }
        let params = self.field_manager.apply_params();
        self.api.patch(name, &params, &Patch::Apply(body)).await
    }

    /// Server-side applies an apply configuration to the status: this client's field
    /// manager then owns exactly the status fields it sets.
    pub async fn apply_status(
        &self,
        config: &<V as verbs::ApplyConfigured>::Configuration,
    ) -> Result<K, Error>
    where
        V: verbs::ApplyStatus + verbs::ApplyConfigured,
    {
        let name = configuration_name(config)?;
        let body = with_type_meta::<K, _>(config)?;
        let params = self.field_manager.apply_params();
        self.api
            .patch_status(name, &params, &Patch::Apply(body))
            .await
    }

    /// Server-side applies the status of the object named `name` (a whole status), and
    /// nothing else: sends exactly `{apiVersion, kind, metadata.name, status}`.
    pub async fn apply_status_object(
        &self,
        name: &str,
        status: &<V as verbs::ApplyStatus>::Status,
    ) -> Result<K, Error>
    where
        V: verbs::ApplyStatus,
    {
        let body = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": { "name": name },
            "status": status,
        });
        let params = self.field_manager.apply_params();
        self.api
            .patch_status(name, &params, &Patch::Apply(body))
            .await
    }

    /// Gets the scale subresource (`GET .../scale`).
    pub fn get_scale<'a>(&'a self, name: &'a str) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Get,
    {
        self.api.get_scale(name)
    }

    /// Replaces the scale subresource (`PUT .../scale`).
    pub fn update_scale<'a>(
        &'a self,
        name: &'a str,
        scale: &'a Scale,
        pp: &'a PostParams,
    ) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Update,
    {
        self.api.replace_scale(name, pp, scale)
    }

    /// Patches the scale subresource (`PATCH .../scale`).
    pub fn patch_scale<'a, P: Serialize + Debug>(
        &'a self,
        name: &'a str,
        pp: &'a PatchParams,
        patch: &'a Patch<P>,
    ) -> impl Future<Output = Result<Scale, Error>> + 'a
    where
        V: verbs::Scale + verbs::Patch,
    {
        self.api.patch_scale(name, pp, patch)
    }
}

impl<K, S, V> TypedClient<K, S, V>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    /// Lists the objects that `lp` selects (`GET` on the collection).
    pub fn list<'a>(
        &'a self,
        lp: &'a ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + 'a
    where
        V: verbs::List,
    {
        self.api.list(lp)
    }

    /// Watches objects from `resource_version` (`"0"`: from any recent state); prefer an
    /// informer for caches.
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<impl futures::Stream<Item = Result<WatchEvent<K>, Error>> + use<K, S, V>, Error>
    where
        V: verbs::Watch,
    {
        self.api.watch(wp, resource_version).await
    }

    /// The underlying `kube::Api`, for anything this client does not cover.
    pub fn api(&self) -> &Api<K> {
        &self.api
    }

    /// The field manager used by server-side apply.
    pub fn field_manager(&self) -> &FieldManager {
        &self.field_manager
    }
}

/// The requests of `+genclient:method` extension methods, which may read and write other
/// types than the kind's own and reach any subresource: what generated extension methods
/// call (through `TypedClient::__extension`), so a client offers only the verbs and
/// extension methods its markers declare.
#[doc(hidden)]
pub struct Extension<'a, K> {
    api: &'a Api<K>,
    client: &'a Client,
    field_manager: &'a FieldManager,
}

impl<K: Resource> Extension<'_, K> {
    fn request(&self) -> Request {
        Request::new(self.api.resource_url())
    }

    async fn send<R: DeserializeOwned>(
        &self,
        req: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<R, Error> {
        let req = req.map_err(Error::BuildRequest)?;
        self.client.request::<R>(req).await
    }

    /// `GET` object `name`, or its `subresource`, as `R`.
    pub async fn get_as<R: DeserializeOwned>(
        self,
        name: &str,
        subresource: Option<&str>,
    ) -> Result<R, Error> {
        let req = match subresource {
            Some(sub) => self.request().get_subresource(sub, name),
            None => self.request().get(name, &GetParams::default()),
        };
        self.send(req).await
    }

    /// `GET` the collection as a list of `R`.
    pub async fn list_as<R: DeserializeOwned + Clone>(
        self,
        lp: &ListParams,
    ) -> Result<ObjectList<R>, Error> {
        self.send(self.request().list(lp)).await
    }

    /// `POST` `data` to the collection, or to `subresource` of object `name` (`target`).
    pub async fn create_as<I: Serialize, R: DeserializeOwned>(
        self,
        target: Option<(&str, &str)>,
        data: &I,
        pp: &PostParams,
    ) -> Result<R, Error> {
        let body = serde_json::to_vec(data).map_err(Error::SerdeError)?;
        let req = match target {
            Some((name, sub)) => self.request().create_subresource(sub, name, pp, body),
            None => self.request().create(pp, body),
        };
        self.send(req).await
    }

    /// `PUT` `data` as object `name`, or as its `subresource`.
    pub async fn update_as<I: Serialize, R: DeserializeOwned>(
        self,
        name: &str,
        subresource: Option<&str>,
        data: &I,
        pp: &PostParams,
    ) -> Result<R, Error> {
        let body = serde_json::to_vec(data).map_err(Error::SerdeError)?;
        let req = match subresource {
            Some(sub) => self.request().replace_subresource(sub, name, pp, body),
            None => self.request().replace(name, pp, body),
        };
        self.send(req).await
    }

    /// `PATCH` object `name`, or its `subresource`, reading the answer as `R`.
    pub async fn patch_as<P: Serialize + Debug, R: DeserializeOwned>(
        self,
        name: &str,
        subresource: Option<&str>,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, Error> {
        let req = match subresource {
            Some(sub) => self.request().patch_subresource(sub, name, pp, patch),
            None => self.request().patch(name, pp, patch),
        };
        self.send(req).await
    }

    /// Server-side apply of `data` to object `name`, or to its `subresource`, with the
    /// client's field manager.
    pub async fn apply_as<I: Serialize + Debug, R: DeserializeOwned>(
        self,
        name: &str,
        subresource: Option<&str>,
        data: &I,
    ) -> Result<R, Error> {
        let params = self.field_manager.apply_params();
        self.patch_as(name, subresource, &params, &Patch::Apply(data))
            .await
    }
}

fn validation(message: &str) -> Error {
    Error::BuildRequest(kube::core::request::Error::Validation(message.to_owned()))
}

/// `config` as JSON, with `K`'s `apiVersion` and `kind` where it has none (an apply
/// configuration built from `Default` rather than `new`), which the server requires.
fn with_type_meta<K, C>(config: &C) -> Result<serde_json::Value, Error>
where
    K: Resource<DynamicType = ()>,
    C: Serialize,
{
    let mut body = serde_json::to_value(config).map_err(Error::SerdeError)?;
    if let Some(map) = body.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| K::api_version(&()).into());
        map.entry("kind").or_insert_with(|| K::kind(&()).into());
    }
    Ok(body)
}

fn configuration_name<C: ObjectConfiguration>(config: &C) -> Result<&str, Error> {
    match config.metadata().and_then(|m| m.name.as_deref()) {
        Some(name) if !name.is_empty() => Ok(name),
        _ => Err(validation(
            "the apply configuration has no metadata.name; build it with `FooApplyConfiguration::new(name, ..)`",
        )),
    }
}

fn object_name<K: Resource>(obj: &K) -> Result<&str, Error> {
    match obj.meta().name.as_deref() {
        Some(name) if !name.is_empty() => Ok(name),
        _ => Err(validation(
            "the object has no metadata.name; set it before update or apply",
        )),
    }
}
