//! Admission webhooks (feature `webhook`): typed defaulting and validation of a kind, served
//! over HTTPS to the API server.
//!
//! A [`Defaulter`] changes a typed object; the JSON patch the API server applies is computed
//! from the object before and after, so a defaulter never writes a patch by hand. A
//! [`Validator`] accepts or refuses a create, an update (seeing the old object too) or a
//! delete, with warnings the API server passes on to the client. Both are the kube-rs form
//! of controller-runtime's `CustomDefaulter` and `CustomValidator`, over
//! `kube::core::admission`; a [`WebhookServer`] routes each path to one of them, or to the
//! [`conversion::Conversion`] of a kind served in several versions.
//!
//! ```no_run
//! # use kube_codegen_runtime::webhook::{Defaulter, Denial, Request, Validator, Warnings, WebhookServer};
//! # #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
//! # struct Foo { spec: FooSpec, metadata: kube::core::ObjectMeta }
//! # #[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
//! # struct FooSpec { deployment_name: String }
//! # impl kube::Resource for Foo { type DynamicType = (); type Scope = kube::core::NamespaceResourceScope;
//! #   fn kind(_: &()) -> std::borrow::Cow<'_, str> { "Foo".into() } fn group(_: &()) -> std::borrow::Cow<'_, str> { "example.com".into() }
//! #   fn version(_: &()) -> std::borrow::Cow<'_, str> { "v1".into() } fn plural(_: &()) -> std::borrow::Cow<'_, str> { "foos".into() }
//! #   fn meta(&self) -> &kube::core::ObjectMeta { &self.metadata } fn meta_mut(&mut self) -> &mut kube::core::ObjectMeta { &mut self.metadata } }
//! struct FooWebhook;
//!
//! impl Defaulter<Foo> for FooWebhook {
//!     async fn default(&self, foo: &mut Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
//!         if foo.spec.deployment_name.is_empty() {
//!             foo.spec.deployment_name = foo.metadata.name.clone().unwrap_or_default();
//!         }
//!         Ok(Warnings::new())
//!     }
//! }
//!
//! impl Validator<Foo> for FooWebhook {
//!     async fn validate_create(&self, foo: &Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
//!         if foo.spec.deployment_name.contains('_') {
//!             return Err(Denial::new("spec.deploymentName: `_` is not allowed in a name"));
//!         }
//!         Ok(Warnings::new())
//!     }
//! }
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = WebhookServer::new()
//!     .defaulting::<Foo, _>("/mutate-example-com-v1-foo", FooWebhook)
//!     .validating::<Foo, _>("/validate-example-com-v1-foo", FooWebhook);
//! server
//!     .serve("127.0.0.1:9443".parse().unwrap(), "/tmp/serving-certs", std::future::pending())
//!     .await
//! # }
//! ```
//!
//! # What is answered, and what is refused
//!
//! A webhook is called by the API server, but anything that reaches its port can call it,
//! so requests are checked before a handler sees them, as controller-runtime checks them
//! (`pkg/webhook/admission/http.go`, `validator_custom.go`, `defaulter_custom.go`,
//! `pkg/webhook/conversion/conversion.go`), and a little further where controller-runtime
//! lets something through. The server's time and memory limits are in
//! [`WebhookServer`]'s docs ([Limits](WebhookServer#limits)).
//!
//! | request | answer | controller-runtime |
//! |---|---|---|
//! | a path not served; a method other than `POST` | 404; 405 | 404; its handlers answer any method |
//! | `Content-Type` other than `application/json` (parameters such as `charset` allowed) | 415 | admission: a review denying with code 400 (`contentType=…, expected application/json`), the header compared whole; conversion: not checked |
//! | a body over [`max_body`](WebhookServer::max_body) (8 MiB), or of more than 262,144 JSON values | 413 | admission: a review with code 413 over 7 MiB; conversion: no limit |
//! | not JSON, no `request`, or a review other than `admission.k8s.io/v1` `AdmissionReview` (on an admission path) or `apiextensions.k8s.io/v1` `ConversionReview` (on a conversion path), `foo/v9` say | 400, naming what came | admission: `v1beta1` is answered in kind, a review without `apiVersion` and `kind` is read as `v1`, and any other `apiVersion` is decoded and echoed back; conversion: the type is not checked and is echoed |
//! | a request `uid` over 128 bytes (the API server sends a 36-byte UUID) | 400 | not checked |
//! | on a typed route, a request whose `kind` is not the webhook's group, version and kind, or whose `object` or `oldObject` has another `apiVersion` or `kind` | a review denying with code 400, reason `BadRequest`, before the handler runs: `this webhook admits samplecontroller.k8s.io/v1alpha1, Kind=Foo, not example.com/v9, Kind=Bar`; no patch | decoding into the typed object fails: a review denying with code 400 (`unable to decode …`); the request's `kind` is not compared. An object without `apiVersion` and `kind` is read as the webhook's kind by both |
//! | an object that does not decode as the kind | a review denying with code 422, reason `Invalid` | code 400 |
//! | a ConversionReview whose `desiredAPIVersion`, or one of whose objects, is not a version of the route's kind (another group included, even an object already in the desired version), or an object of another kind | a review with result `Failure` and no objects: `other.example.com/v1 is not a version of Gizmo this webhook converts (it converts …)`, `the object is a Widget, not a Gizmo` | `Failure`: no such kind in its scheme, or `… does not belong to same API Group` |
//! | a ConversionReview object already in the desired version, of the kind | returned as it is | `Failure` (`conversion is not allowed between same type`); the API server never sends one |
//! | a handler slower than [`timeout`](WebhookServer::timeout) | 504 | no limit of its own |
//!
//! The status codes other than 200 reach the API server as a failed call, so the webhook's
//! `failurePolicy` decides; the API server itself always sends `application/json` reviews of
//! the types above. [`KnownKind`] says which kinds are checked: those fixed at compile time
//! (`DynamicObject` webhooks see every kind).

pub mod certs;
mod conn;
pub mod conversion;
pub mod dev;
mod requests;
mod server;
mod tls;

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use kube::core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind, TypeMeta};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub use server::WebhookServer;
pub use tls::TlsFiles;

/// The AdmissionReview version answered: what kube-apiserver sends when a webhook lists it
/// first in `admissionReviewVersions` (it has since Kubernetes 1.16).
const ADMISSION_REVIEW: (&str, &str) = ("admission.k8s.io/v1", "AdmissionReview");

/// The longest review `uid` answered. The API server sends a UUID (36 bytes), and the uid
/// is written back in the answer, so a long one would only cost memory twice.
pub(crate) const MAX_UID: usize = 128;

/// A request refused with an HTTP status, not answered with a review.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: http::StatusCode,
    pub(crate) message: String,
}

impl Refusal {
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: http::StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }
}

/// `text` as a message quotes it: whole when short, else its first 256 bytes and its length,
/// so what a client sent is never echoed back at any size.
pub(crate) fn clip(text: &str) -> Cow<'_, str> {
    const MAX: usize = 256;
    if text.len() <= MAX {
        return Cow::Borrowed(text);
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}... ({} bytes)", &text[..end], text.len()))
}

/// A review's envelope, read before its request: the type and the request still as text.
#[derive(Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    pub(crate) api_version: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    #[serde(borrow, default)]
    pub(crate) request: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    /// The envelope of `body`, if it is a review of `api_version` and `kind` with a request
    /// whose uid is at most [`MAX_UID`] bytes; the request, still as text.
    pub(crate) fn read(
        body: &'a [u8],
        (api_version, kind): (&str, &str),
    ) -> Result<&'a RawValue, Refusal> {
        let envelope: Envelope<'a> = serde_json::from_slice(body).map_err(|e| {
            Refusal::bad_request(format!("the body does not decode as a review: {e}"))
        })?;
        let got = (envelope.api_version.as_deref(), envelope.kind.as_deref());
        if got != (Some(api_version), Some(kind)) {
            return Err(Refusal::bad_request(format!(
                "expected apiVersion `{api_version}` kind `{kind}`, got apiVersion `{}` kind `{}`",
                clip(got.0.unwrap_or_default()),
                clip(got.1.unwrap_or_default()),
            )));
        }
        let request = envelope
            .request
            .ok_or_else(|| Refusal::bad_request(format!("the {kind} has no request")))?;
        #[derive(Deserialize)]
        struct Uid<'a> {
            #[serde(borrow)]
            uid: Option<Cow<'a, str>>,
        }
        if let Ok(Uid { uid: Some(uid) }) = serde_json::from_str::<Uid<'_>>(request.get())
            && uid.len() > MAX_UID
        {
            return Err(Refusal::bad_request(format!(
                "the request's uid is {} bytes, over {MAX_UID}",
                uid.len()
            )));
        }
        Ok(request)
    }
}

/// The dynamic type of a typed webhook's kind. `()` for kinds fixed at compile time (what
/// `#[derive(CustomResource)]` and k8s-openapi's types have): the server checks each request
/// is for that group, version and kind. [`ApiResource`], for [`DynamicObject`]: any kind is
/// admitted, the webhook decides.
pub trait KnownKind: Sized {
    /// The dynamic type that names the kind, when it is known without a request.
    fn known() -> Option<Self>;
}

impl KnownKind for () {
    fn known() -> Option<Self> {
        Some(())
    }
}

impl KnownKind for ApiResource {
    fn known() -> Option<Self> {
        None
    }
}

/// The group, version and kind a typed webhook admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WebhookKind {
    group: String,
    version: String,
    kind: String,
}

impl WebhookKind {
    /// `K`'s, when fixed at compile time.
    pub(crate) fn of<K: kube::Resource>() -> Option<Self>
    where
        K::DynamicType: KnownKind,
    {
        let dt = K::DynamicType::known()?;
        Some(Self {
            group: K::group(&dt).into_owned(),
            version: K::version(&dt).into_owned(),
            kind: K::kind(&dt).into_owned(),
        })
    }

    fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// `<apiVersion>, Kind=<kind>`, as kube-apiserver writes a group, version and kind.
impl std::fmt::Display for WebhookKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, Kind={}", self.api_version(), self.kind)
    }
}

/// Whether `req` is for the kind the webhook admits (`None`: any kind): the request's kind,
/// and the `apiVersion` and `kind` of its objects where they have them (the API server
/// writes them; an object without them is read as the webhook's kind, as
/// controller-runtime reads it).
fn check_kind(
    expected: Option<&WebhookKind>,
    req: &AdmissionRequest<DynamicObject>,
) -> Result<(), Denial> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let bad_request = |message: String| Denial {
        message,
        code: 400,
        reason: "BadRequest".to_owned(),
    };
    let GroupVersionKind {
        group,
        version,
        kind,
    } = &req.kind;
    if (group, version, kind) != (&expected.group, &expected.version, &expected.kind) {
        return Err(bad_request(format!(
            "this webhook admits {expected}, not {}, Kind={}",
            clip(&api_version(group, version)),
            clip(kind)
        )));
    }
    for (which, object) in [("object", &req.object), ("old object", &req.old_object)] {
        let Some(types) = object.as_ref().and_then(|o| o.types.as_ref()) else {
            continue;
        };
        if types.api_version != expected.api_version() || types.kind != expected.kind {
            return Err(bad_request(format!(
                "the {which} is {}, Kind={}: this webhook admits {expected}",
                clip(&types.api_version),
                clip(&types.kind)
            )));
        }
    }
    Ok(())
}

/// What a webhook tells the client besides allowing the request: `Warning` headers.
pub type Warnings = Vec<String>;

/// A refused request: the message the client sees after `admission webhook "<name>" denied
/// the request: `, and the HTTP code the API server answers with (403 by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// Why.
    pub message: String,
    /// The HTTP status code (`403` Forbidden unless set).
    pub code: u16,
    /// The `reason` of the API server's Status (`Forbidden` unless set).
    pub reason: String,
}

impl Denial {
    /// Refuses with `message` (403 Forbidden).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 403,
            reason: "Forbidden".to_owned(),
        }
    }

    /// Refuses as invalid: 422 Invalid, as schema validation refuses.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 422,
            reason: "Invalid".to_owned(),
        }
    }
}

/// What a webhook knows of the request beyond the object: who asks, what for, dry run.
#[derive(Debug, Clone, Copy)]
pub struct Request<'r> {
    /// The whole admission request, as `kube::core::admission` reads it.
    pub inner: &'r AdmissionRequest<DynamicObject>,
}

impl Request<'_> {
    /// The operation: create, update, delete or connect.
    pub fn operation(&self) -> &Operation {
        &self.inner.operation
    }

    /// The namespace of the object (`None` for cluster-scoped kinds).
    pub fn namespace(&self) -> Option<&str> {
        self.inner.namespace.as_deref()
    }

    /// Whether the request is a dry run: a webhook with side effects must skip them.
    pub fn dry_run(&self) -> bool {
        self.inner.dry_run
    }

    /// The user making the request.
    pub fn user(&self) -> Option<&str> {
        self.inner.user_info.username.as_deref()
    }
}

/// Defaults objects of kind `K` before the API server validates and stores them.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Changes `obj` in place; what changed becomes the JSON patch of the response.
    fn default(
        &self,
        obj: &mut K,
        req: &Request<'_>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send;
}

/// Validates creates, updates and deletes of objects of kind `K`. Each check allows by
/// default; implement the ones the kind needs.
pub trait Validator<K: Sync>: Send + Sync + 'static {
    /// A create of `obj`.
    fn validate_create(
        &self,
        obj: &K,
        req: &Request<'_>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (obj, req);
        async { Ok(Warnings::new()) }
    }

    /// An update from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
        req: &Request<'_>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (old, new, req);
        async { Ok(Warnings::new()) }
    }

    /// A delete of `obj` (as it is before the delete).
    fn validate_delete(
        &self,
        obj: &K,
        req: &Request<'_>,
    ) -> impl Future<Output = Result<Warnings, Denial>> + Send {
        let _ = (obj, req);
        async { Ok(Warnings::new()) }
    }
}

/// The objects of an admission request as the body has them: what a typed webhook decodes
/// its kind from, with no copy in between.
#[derive(Deserialize, Default)]
pub(crate) struct RawObjects<'a> {
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "oldObject")]
    old_object: Option<&'a RawValue>,
}

/// A request's object read as `K`, or why it could not be.
fn typed<K: DeserializeOwned>(object: Option<&RawValue>, which: &str) -> Result<K, Denial> {
    let Some(object) = object else {
        return Err(Denial::invalid(format!("the request has no {which}")));
    };
    serde_json::from_str(object.get()).map_err(|e| {
        Denial::invalid(format!(
            "the {which} does not decode as this webhook's kind: {e}"
        ))
    })
}

fn deny(req: &AdmissionRequest<DynamicObject>, denial: &Denial) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(req).deny(&denial.message);
    response.result.code = denial.code;
    response.result.reason = denial.reason.clone();
    response
}

fn allow(req: &AdmissionRequest<DynamicObject>, warnings: Warnings) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(req);
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// One route of the server: an admission request in, the response out.
pub(crate) trait Handler: Send + Sync {
    fn handle<'a>(
        &'a self,
        req: &'a AdmissionRequest<DynamicObject>,
        raw: &'a RawObjects<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = AdmissionResponse> + Send + 'a>>;
}

pub(crate) struct Defaulting<K, D> {
    pub(crate) defaulter: D,
    /// The kind admitted; `None`: any.
    pub(crate) kind: Option<WebhookKind>,
    pub(crate) typed: std::marker::PhantomData<fn() -> K>,
}

impl<K, D> Handler for Defaulting<K, D>
where
    K: DeserializeOwned + Serialize + Send + Sync + 'static,
    D: Defaulter<K>,
{
    fn handle<'a>(
        &'a self,
        req: &'a AdmissionRequest<DynamicObject>,
        raw: &'a RawObjects<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = AdmissionResponse> + Send + 'a>> {
        Box::pin(async move {
            if let Err(denial) = check_kind(self.kind.as_ref(), req) {
                return deny(req, &denial);
            }
            if !matches!(req.operation, Operation::Create | Operation::Update) {
                return allow(req, Warnings::new());
            }
            let mut obj: K = match typed(raw.object, "object") {
                Ok(obj) => obj,
                Err(denial) => return deny(req, &denial),
            };
            let before = serde_json::to_value(&obj).unwrap_or_default();
            let request = Request { inner: req };
            match self.defaulter.default(&mut obj, &request).await {
                Ok(warnings) => {
                    let after = serde_json::to_value(&obj).unwrap_or_default();
                    let changes = json_patch::diff(&before, &after).0;
                    // Each rendering is as large as the object: only one pair at a time.
                    drop((obj, before, after));
                    // What the defaulter changed, laid over the object the API server holds
                    // (which may lack fields `K` writes, such as a `null` for `None`, and
                    // hold fields `K` does not know): the patch is against that object.
                    let raw = req
                        .object
                        .as_ref()
                        .and_then(|o| serde_json::to_value(o).ok())
                        .unwrap_or_default();
                    let mut changed = raw.clone();
                    for op in changes {
                        overlay(&mut changed, &op);
                    }
                    let patch = json_patch::diff(&raw, &changed);
                    let response = allow(req, warnings);
                    if patch.0.is_empty() {
                        return response;
                    }
                    response.with_patch(patch).unwrap_or_else(|e| {
                        deny(
                            req,
                            &Denial::invalid(format!(
                                "the defaulted object does not serialize: {e}"
                            )),
                        )
                    })
                }
                Err(denial) => deny(req, &denial),
            }
        })
    }
}

/// Applies one operation of a diff between two typed renderings to the raw object,
/// leniently: a value set where the raw object has no such member (or no parent) is added,
/// creating the parents; a removal of what is not there is nothing.
fn overlay(target: &mut serde_json::Value, op: &json_patch::PatchOperation) {
    use json_patch::PatchOperation;
    use serde_json::Value;
    let (path, value) = match op {
        PatchOperation::Add(o) => (o.path.to_string(), Some(o.value.clone())),
        PatchOperation::Replace(o) => (o.path.to_string(), Some(o.value.clone())),
        PatchOperation::Remove(o) => (o.path.to_string(), None),
        // A diff makes only adds, replaces and removes.
        _ => return,
    };
    let tokens: Vec<String> = path
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, parents)) = tokens.split_last() else {
        if let Some(value) = value {
            *target = value;
        }
        return;
    };
    let mut at = target;
    for token in parents {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        at = match at {
            Value::Object(map) => map.entry(token.clone()).or_insert(Value::Null),
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get_mut(i))
            {
                Some(item) => item,
                None => return,
            },
            _ => return,
        };
    }
    if at.is_null() && value.is_some() {
        *at = Value::Object(serde_json::Map::new());
    }
    match (at, value) {
        (Value::Object(map), Some(v)) => {
            map.insert(last.clone(), v);
        }
        (Value::Object(map), None) => {
            map.remove(last);
        }
        (Value::Array(items), v) => {
            let index = if last == "-" {
                items.len()
            } else {
                last.parse().unwrap_or(usize::MAX)
            };
            match (v, matches!(op, PatchOperation::Add(_))) {
                (Some(v), true) if index <= items.len() => items.insert(index, v),
                (Some(v), false) if index < items.len() => items[index] = v,
                (None, _) if index < items.len() => {
                    items.remove(index);
                }
                _ => {}
            }
        }
        _ => {}
    }
}

pub(crate) struct Validating<K, V> {
    pub(crate) validator: V,
    /// The kind admitted; `None`: any.
    pub(crate) kind: Option<WebhookKind>,
    pub(crate) typed: std::marker::PhantomData<fn() -> K>,
}

impl<K, V> Handler for Validating<K, V>
where
    K: DeserializeOwned + Send + Sync + 'static,
    V: Validator<K>,
{
    fn handle<'a>(
        &'a self,
        req: &'a AdmissionRequest<DynamicObject>,
        raw: &'a RawObjects<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = AdmissionResponse> + Send + 'a>> {
        Box::pin(async move {
            if let Err(denial) = check_kind(self.kind.as_ref(), req) {
                return deny(req, &denial);
            }
            let request = Request { inner: req };
            let result = match req.operation {
                Operation::Create => match typed::<K>(raw.object, "object") {
                    Ok(obj) => self.validator.validate_create(&obj, &request).await,
                    Err(denial) => Err(denial),
                },
                Operation::Update => {
                    let new = typed::<K>(raw.object, "object");
                    let old = typed::<K>(raw.old_object, "old object");
                    match (old, new) {
                        (Ok(old), Ok(new)) => {
                            self.validator.validate_update(&old, &new, &request).await
                        }
                        (Err(denial), _) | (_, Err(denial)) => Err(denial),
                    }
                }
                Operation::Delete => match typed::<K>(raw.old_object, "old object") {
                    Ok(obj) => self.validator.validate_delete(&obj, &request).await,
                    Err(denial) => Err(denial),
                },
                Operation::Connect => Ok(Warnings::new()),
            };
            match result {
                Ok(warnings) => allow(req, warnings),
                Err(denial) => deny(req, &denial),
            }
        })
    }
}

/// Answers one AdmissionReview body with `handler`: the response review, or why the body is
/// refused (400: not an `admission.k8s.io/v1` AdmissionReview with a request).
pub(crate) async fn review(handler: &Arc<dyn Handler>, body: &[u8]) -> Result<Vec<u8>, Refusal> {
    let request = Envelope::read(body, ADMISSION_REVIEW)?;
    let mut req: AdmissionRequest<DynamicObject> =
        serde_json::from_str(request.get()).map_err(|e| {
            Refusal::bad_request(format!(
                "the AdmissionReview's request does not decode: {e}"
            ))
        })?;
    req.types = TypeMeta {
        api_version: ADMISSION_REVIEW.0.to_owned(),
        kind: ADMISSION_REVIEW.1.to_owned(),
    };
    let raw: RawObjects<'_> = serde_json::from_str(request.get()).unwrap_or_default();
    let response = handler.handle(&req, &raw).await;
    serde_json::to_vec(&response.into_review()).map_err(|e| Refusal {
        status: http::StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("the AdmissionReview's answer does not serialize: {e}"),
    })
}

/// kubebuilder's path for a kind's mutating webhook: `/mutate-<group with dashes>-<version>-<kind>`.
pub fn mutate_path<K: kube::Resource<DynamicType = ()>>() -> String {
    path::<K>("mutate")
}

/// kubebuilder's path for a kind's validating webhook: `/validate-<group with dashes>-<version>-<kind>`.
pub fn validate_path<K: kube::Resource<DynamicType = ()>>() -> String {
    path::<K>("validate")
}

/// controller-runtime's rule, the core group included (`/mutate--v1-pod`).
fn path<K: kube::Resource<DynamicType = ()>>(what: &str) -> String {
    let group = K::group(&()).replace('.', "-");
    let version = K::version(&());
    let kind = K::kind(&()).to_ascii_lowercase();
    format!("/{what}-{group}-{version}-{kind}")
}
