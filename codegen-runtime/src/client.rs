//! [`Handle`]: the typed operations every generated client delegates to.
//!
//! It adds to [`kube::Api`] what generated clients promise: update takes the name from the
//! object, server-side apply uses the clientset's field manager, `apply_status` builds the
//! apply body itself, and `+genclient:method` extension methods may use other input and
//! result types than the resource's own.

use std::fmt::Debug;

use either::Either;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::autoscaling::v1::Scale;
use kube::api::{
    Api, DeleteParams, GetParams, ListParams, ObjectList, Patch, PatchParams, PostParams, Request,
    WatchEvent, WatchParams,
};
use kube::core::Status;
use kube::{Client, Error, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

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

/// A [`kube::Api`] and a [`FieldManager`]: what a generated client holds.
#[derive(Clone)]
pub struct Handle<K> {
    api: Api<K>,
    client: Client,
    field_manager: FieldManager,
}

impl<K: Resource> Debug for Handle<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("url", &self.api.resource_url())
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

fn validation(message: &str) -> Error {
    Error::BuildRequest(kube::core::request::Error::Validation(message.to_owned()))
}

impl<K> Handle<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
{
    /// The objects of `K` in one namespace.
    pub fn namespaced(client: Client, namespace: &str, field_manager: FieldManager) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        let api = Api::namespaced(client.clone(), namespace);
        Self {
            api,
            client,
            field_manager,
        }
    }

    /// The objects of `K` across all namespaces, or of a cluster-scoped `K`.
    pub fn all(client: Client, field_manager: FieldManager) -> Self {
        let api = Api::all(client.clone());
        Self {
            api,
            client,
            field_manager,
        }
    }

    /// The underlying [`kube::Api`], for anything the typed client does not cover.
    pub fn api(&self) -> &Api<K> {
        &self.api
    }

    /// The field manager used by `apply` and `apply_status`.
    pub fn field_manager(&self) -> &FieldManager {
        &self.field_manager
    }

    /// `POST` a new object.
    pub async fn create(&self, obj: &K, pp: &PostParams) -> Result<K, Error> {
        self.api.create(pp, obj).await
    }

    /// `PUT` the object, named by its `metadata.name`.
    pub async fn update(&self, obj: &K, pp: &PostParams) -> Result<K, Error> {
        let name = object_name(obj)?;
        self.api.replace(name, pp, obj).await
    }

    /// `PUT` the object's status subresource, named by its `metadata.name`.
    pub async fn update_status(&self, obj: &K, pp: &PostParams) -> Result<K, Error> {
        let name = object_name(obj)?;
        self.api.replace_status(name, pp, obj).await
    }

    /// `DELETE` one object: the object while finalizers hold it, or the server's status.
    pub async fn delete(&self, name: &str, dp: &DeleteParams) -> Result<Either<K, Status>, Error> {
        self.api.delete(name, dp).await
    }

    /// `DELETE` every object matched by `lp`.
    pub async fn delete_collection(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<Either<ObjectList<K>, Status>, Error> {
        self.api.delete_collection(dp, lp).await
    }

    /// `GET` one object; a missing object is an error (`404`).
    pub async fn get(&self, name: &str) -> Result<K, Error> {
        self.api.get(name).await
    }

    /// `GET` one object; a missing object is `None`.
    pub async fn get_opt(&self, name: &str) -> Result<Option<K>, Error> {
        self.api.get_opt(name).await
    }

    /// `GET` the collection.
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<K>, Error> {
        self.api.list(lp).await
    }

    /// Watch the collection from `resource_version` (`"0"`: from any recent state).
    pub async fn watch(
        &self,
        wp: &WatchParams,
        resource_version: &str,
    ) -> Result<impl futures::Stream<Item = Result<WatchEvent<K>, Error>> + use<K>, Error> {
        self.api.watch(wp, resource_version).await
    }

    /// `PATCH` one object (merge, JSON, strategic or apply patch).
    pub async fn patch<P: Serialize + Debug>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, Error> {
        self.api.patch(name, pp, patch).await
    }

    /// Server-side apply of `obj` with the field manager; `managedFields` are not sent.
    pub async fn apply(&self, obj: &K) -> Result<K, Error> {
        let name = object_name(obj)?.to_owned();
        let mut body = serde_json::to_value(obj).map_err(Error::SerdeError)?;
        if let Some(meta) = body
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            meta.remove("managedFields");
        }
        self.api
            .patch(
                &name,
                &self.field_manager.apply_params(),
                &Patch::Apply(body),
            )
            .await
    }

    /// Server-side apply of the status of object `name` with the field manager.
    ///
    /// Sends exactly `{apiVersion, kind, metadata.name, status}`, so only status fields are
    /// claimed by this manager. `S` is the resource's status type.
    pub async fn apply_status<S: Serialize>(&self, name: &str, status: &S) -> Result<K, Error> {
        let body = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": { "name": name },
            "status": status,
        });
        self.api
            .patch_status(
                name,
                &self.field_manager.apply_params(),
                &Patch::Apply(body),
            )
            .await
    }

    /// Server-side apply of an apply configuration with the field manager: this manager
    /// then owns exactly the fields the configuration sets.
    pub async fn apply_configuration<C>(&self, config: &C) -> Result<K, Error>
    where
        C: crate::apply::ObjectConfiguration + Debug,
    {
        let name = configuration_name(config)?.to_owned();
        let body = with_type_meta::<K, _>(config)?;
        self.api
            .patch(
                &name,
                &self.field_manager.apply_params(),
                &Patch::Apply(body),
            )
            .await
    }

    /// Server-side apply of an apply configuration to the status subresource.
    pub async fn apply_status_configuration<C>(&self, config: &C) -> Result<K, Error>
    where
        C: crate::apply::ObjectConfiguration + Debug,
    {
        let name = configuration_name(config)?.to_owned();
        let body = with_type_meta::<K, _>(config)?;
        self.api
            .patch_status(
                &name,
                &self.field_manager.apply_params(),
                &Patch::Apply(body),
            )
            .await
    }

    /// `GET` the scale subresource.
    pub async fn get_scale(&self, name: &str) -> Result<Scale, Error> {
        self.api.get_scale(name).await
    }

    /// `PUT` the scale subresource.
    pub async fn update_scale(
        &self,
        name: &str,
        scale: &Scale,
        pp: &PostParams,
    ) -> Result<Scale, Error> {
        self.api.replace_scale(name, pp, scale).await
    }

    /// `PATCH` the scale subresource.
    pub async fn patch_scale<P: Serialize + Debug>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<Scale, Error> {
        self.api.patch_scale(name, pp, patch).await
    }

    // Extension methods (`+genclient:method`): any input and result type.

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
        &self,
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
        &self,
        lp: &ListParams,
    ) -> Result<ObjectList<R>, Error> {
        self.send(self.request().list(lp)).await
    }

    /// `POST` `data` to the collection, or to `subresource` of object `name`.
    pub async fn create_as<I: Serialize, R: DeserializeOwned>(
        &self,
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
        &self,
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
        &self,
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

    /// Server-side apply of `data` to object `name`, or to its `subresource`.
    pub async fn apply_as<I: Serialize + Debug, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        data: &I,
    ) -> Result<R, Error> {
        self.patch_as(
            name,
            subresource,
            &self.field_manager.apply_params(),
            &Patch::Apply(data),
        )
        .await
    }
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

fn configuration_name<C: crate::apply::ObjectConfiguration>(config: &C) -> Result<&str, Error> {
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
