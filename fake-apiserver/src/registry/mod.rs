//! The registry: what each verb does to a served resource, as kube-apiserver's REST
//! handlers and generic registry do it. [`run`] takes a request the HTTP layer has routed
//! (anything but a watch) through the admission webhooks, runs the verb over the locked
//! state, and runs it again once a CRD's conversion webhook has converted what it met.
//!
//! A verb reads its options and body ([`admission::decode`](crate::admission::decode)),
//! then: [`read`] gets and lists; [`create`], [`update`] and [`patch`] write through
//! admission (lifecycle, defaulting, validation), conversion to the storage version,
//! [`managed`] fields and the store; [`delete`] honours preconditions, propagation and
//! finalizers. [`scale`] and [`strategy`] hold the subresources and kinds with rules of
//! their own; [`client`] lets the controllers write through the same verbs.

pub mod client;
pub mod create;
pub mod delete;
pub mod managed;
pub mod patch;
pub mod read;
pub mod reply;
pub mod review;
pub mod scale;
pub mod strategy;
pub mod table;
pub mod update;

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Value, json};

use crate::admission::Ctx;
use crate::admission::decode::options::{ListOptions, WriteOptions};
use crate::admission::decode::type_meta::Expected;
use crate::admission::decode::{decode_body, decode_builtin, delete_options};
use crate::admission::webhooks::{self, Call};
use crate::conversion::{self, Conversions};
use crate::error::ApiError;
use crate::meta::name_of;
use crate::resource::{ObjectRef, ResourceType};
use crate::store::{Shared, State};
use reply::{Answer, Out};

/// A request for a served resource that is not a watch, as the HTTP layer routed it.
#[derive(Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The server.
    pub shared: &'a Arc<Shared>,
    /// The object or collection the path names (an empty name for a collection).
    pub at: ObjectRef<'a>,
    /// `User-Agent`, whose product names the field manager when the query does not.
    pub user_agent: &'a str,
    /// Whether `Accept` asks for a `Table` (`as=Table`).
    pub table: bool,
    /// Who asks.
    pub user: &'a crate::admission::authorization::User,
}

/// Runs a request: through the admission webhooks when configurations register some,
/// and again after converting what a CRD's conversion webhook must convert (objects it
/// has not converted stop the request before it changes anything).
pub(crate) async fn run(req: &Request<'_>, call: Call<'_>) -> Result<Answer, ApiError> {
    let mut conversions = Conversions::default();
    let mut rounds = 0;
    loop {
        let result = run_once(req, &conversions, call).await;
        match result.as_ref().err().and_then(conversion::pending_of) {
            Some((objects, desired)) if rounds < conversion::ROUNDS => {
                rounds += 1;
                let rt = req.at.rt;
                conversion::webhook::convert(req.shared, rt, &objects, &desired, &mut conversions)
                    .await?;
            }
            Some(_) => {
                return Err(ApiError::internal(
                    "the objects of this request kept changing while they were converted",
                ));
            }
            None => return result,
        }
    }
}

/// One run of a request: through the admission webhooks the configurations register,
/// when it writes and there are any.
async fn run_once(
    req: &Request<'_>,
    conversions: &Conversions,
    call: Call<'_>,
) -> Result<Answer, ApiError> {
    let writes = matches!(call.verb, "create" | "update" | "patch" | "delete");
    let verb = Verb { req, conversions };
    if writes && webhooks::configured(&req.shared.lock()) {
        let respond = |call: Call<'_>| {
            verb.respond(call)
                .map(|(code, out, warnings)| (code, out.into_value(), warnings))
        };
        webhooks::admit(req.shared, req.at, call, respond)
            .await
            .map(|(code, value, warnings)| (code, Out::Owned(value), warnings))
    } else {
        verb.respond(call)
    }
}

/// The server's own handling of one run of a request.
#[derive(Clone, Copy)]
struct Verb<'a> {
    req: &'a Request<'a>,
    /// What the CRD's conversion webhook has converted for the request so far.
    conversions: &'a Conversions,
}

impl Verb<'_> {
    /// The verb `call` names, on the object or collection of the request.
    fn respond(self, call: Call<'_>) -> Result<Answer, ApiError> {
        match (call.verb, self.req.at.subresource) {
            ("get", _) => self.get(call),
            ("list", _) => self.list(call),
            ("create", _) => self.create(call),
            ("update", Some("scale")) => self.update_scale(call),
            ("update", Some("finalize")) => self.finalize(call),
            ("update", _) => self.update(call),
            ("patch", _) => self.patch(call),
            ("delete", _) => self.delete(call),
            ("deletecollection", _) => self.delete_collection(call),
            _ => Err(ApiError::method_not_allowed()),
        }
    }

    fn get(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let shared = self.req.shared;
        if let Some(rv) = call.query.get("resourceVersion") {
            read::check_get_resource_version(rv, shared.lock().store.resource_version())?;
        }
        let value = read::get(&shared.lock(), self.req.at, self.conversions)?;
        Ok((StatusCode::OK, value, Vec::new()))
    }

    fn list(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let options = ListOptions::parse(call.query, false)?;
        let state = self.req.shared.lock();
        let value = read::list(
            &state,
            self.req.at,
            &options,
            self.req.table,
            self.conversions,
        )?;
        Ok((StatusCode::OK, value, Vec::new()))
    }

    fn create(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let mut ctx = self.write_ctx(call, "CreateOptions", false)?;
        let obj = self.decode_own(call)?;
        decode_builtin(at.rt, at.subresource, &obj, &mut ctx)?;
        let obj = create::create(
            &mut self.req.shared.lock(),
            at.rt,
            at.namespace,
            obj,
            &mut ctx,
        )?;
        Ok((StatusCode::CREATED, Out::Owned(obj), ctx.warnings))
    }

    fn update(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let mut ctx = self.write_ctx(call, "UpdateOptions", false)?;
        let obj = self.decode_own(call)?;
        decode_builtin(at.rt, at.subresource, &obj, &mut ctx)?;
        let mut state = self.req.shared.lock();
        update::check_uid_precondition(&state, at, &obj, ctx.dry_run)?;
        let missing = !state
            .store
            .contains(&State::key(at.rt, at.namespace, at.name));
        if missing && at.subresource.is_none() && create_on_update(at.rt) {
            // The RBAC kinds' strategies create on update: authorized as `create` too.
            ctx.authorize_create = true;
            let obj = create::create(&mut state, at.rt, at.namespace, obj, &mut ctx)?;
            return Ok((StatusCode::CREATED, Out::Owned(obj), ctx.warnings));
        }
        let obj = update::update(&mut state, at, obj, &mut ctx, None)?;
        Ok((StatusCode::OK, Out::Owned(obj), ctx.warnings))
    }

    fn update_scale(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let mut ctx = self.write_ctx(call, "UpdateOptions", false)?;
        let scale_type = Expected {
            api_version: "autoscaling/v1",
            kind: "Scale",
            custom: false,
        };
        let scale = decode_body(&scale_type, call.content_type, call.body)?;
        decode_builtin(at.rt, at.subresource, &scale, &mut ctx)?;
        let obj = scale::set_scale(&mut self.req.shared.lock(), at, &scale, &mut ctx)?;
        let scale = scale::scale_of(at.rt, &obj);
        Ok((StatusCode::OK, Out::Owned(scale), ctx.warnings))
    }

    fn finalize(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let ctx = self.write_ctx(call, "UpdateOptions", false)?;
        let obj = self.decode_own(call)?;
        let mut state = self.req.shared.lock();
        let finalized = strategy::finalize_namespace(&mut state, at.name, &obj)
            .ok_or_else(|| ApiError::not_found("", "namespaces", at.name))?;
        Ok((
            StatusCode::OK,
            Out::Owned(at.rt.served(&finalized)),
            ctx.warnings,
        ))
    }

    fn patch(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let kind = patch_kind(at.rt, call.content_type)?;
        let apply = kind == "application/apply-patch+yaml";
        let mut ctx = self.write_ctx(call, "PatchOptions", apply)?;
        let mut state = self.req.shared.lock();
        if at.subresource == Some("scale") {
            let obj = scale::patch_scale(&mut state, at, kind, call.body, &mut ctx)?;
            let scale = scale::scale_of(at.rt, &obj);
            return Ok((StatusCode::OK, Out::Owned(scale), ctx.warnings));
        }
        let existed = state
            .store
            .contains(&State::key(at.rt, at.namespace, at.name));
        let obj = patch::patch(&mut state, at, kind, call.body, &mut ctx)?;
        let code = if existed {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        };
        Ok((code, Out::Owned(obj), ctx.warnings))
    }

    fn delete(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let options = delete_options(call.content_type, call.body, call.query)?;
        let ctx = self.delete_ctx(options.dry_run);
        let obj = delete::delete(&mut self.req.shared.lock(), self.req.at, &options, &ctx)?;
        Ok((StatusCode::OK, Out::Owned(obj), Vec::new()))
    }

    fn delete_collection(self, call: Call<'_>) -> Result<Answer, ApiError> {
        let at = self.req.at;
        let options = delete_options(call.content_type, call.body, call.query)?;
        let list_options = ListOptions::parse(call.query, false)?;
        let ctx = self.delete_ctx(options.dry_run);
        let mut state = self.req.shared.lock();
        let listed = read::list(&state, at, &list_options, false, self.conversions)?.into_value();
        let mut deleted = Vec::new();
        for item in listed["items"].as_array().cloned().unwrap_or_default() {
            let item_ns = item
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let item_name = name_of(&item).unwrap_or("").to_owned();
            let item_at = ObjectRef {
                rt: at.rt,
                namespace: item_ns.as_deref(),
                name: &item_name,
                subresource: None,
            };
            deleted.push(delete::delete(&mut state, item_at, &options, &ctx)?);
        }
        let rv = state.store.resource_version();
        let rt = at.rt;
        Ok((
            StatusCode::OK,
            Out::Owned(
                json!({"apiVersion": rt.api_version(), "kind": format!("{}List", rt.kind), "metadata": {"resourceVersion": rv.to_string()}, "items": deleted}),
            ),
            Vec::new(),
        ))
    }

    /// The body as an object of the request's own type.
    fn decode_own(self, call: Call<'_>) -> Result<Value, ApiError> {
        let rt = self.req.at.rt;
        let api_version = rt.api_version();
        let own_type = Expected {
            api_version: &api_version,
            kind: &rt.kind,
            custom: rt.custom,
        };
        decode_body(&own_type, call.content_type, call.body)
    }

    /// The context of a create, update or patch, from its options (`kind`, such as
    /// `CreateOptions`; `apply` for a server-side apply).
    fn write_ctx(self, call: Call<'_>, kind: &str, apply: bool) -> Result<Ctx, ApiError> {
        let options = WriteOptions::parse(call.query, kind, apply)?;
        Ok(Ctx {
            manager: options
                .field_manager
                .clone()
                .unwrap_or_else(|| default_manager(self.req.user_agent)),
            dry_run: options.dry_run,
            field_validation: options.field_validation,
            warnings: Vec::new(),
            force: options.force,
            conversions: self.conversions.clone(),
            user: self.req.user.clone(),
            authorize_create: false,
        })
    }

    /// The context of a delete.
    fn delete_ctx(self, dry_run: bool) -> Ctx {
        let mut ctx = Ctx::named(&default_manager(self.req.user_agent));
        ctx.dry_run = dry_run;
        ctx.user = self.req.user.clone();
        ctx.conversions = self.conversions.clone();
        ctx
    }
}

/// Whether a PUT of an object that does not exist creates it, as the kind's strategy in
/// kube-apiserver allows (`AllowCreateOnUpdate`): the RBAC kinds.
fn create_on_update(rt: &ResourceType) -> bool {
    crate::admission::authorization::escalation::guards(&rt.group, &rt.plural)
}

/// The patch types a resource takes; anything else is a 415 (the router's for built-in
/// kinds, the handler's for custom resources, which have no strategic merge).
fn patch_kind<'a>(rt: &ResourceType, content_type: &'a str) -> Result<&'a str, ApiError> {
    match content_type {
        "application/json-patch+json"
        | "application/merge-patch+json"
        | "application/apply-patch+yaml" => Ok(content_type),
        "application/strategic-merge-patch+json" if !rt.custom => Ok(content_type),
        _ if rt.custom => Err(ApiError::unsupported_media_type(&[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ])),
        _ => Err(ApiError::unsupported_patch_type()),
    }
}

/// The field manager of a request without `fieldManager`: the user agent's product name.
fn default_manager(user_agent: &str) -> String {
    let name: String = user_agent
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect();
    if name.is_empty() {
        "unknown".to_owned()
    } else {
        name
    }
}
