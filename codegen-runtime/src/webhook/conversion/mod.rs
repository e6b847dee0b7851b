//! Conversion webhooks: a kind served in several versions whose Rust types differ, converted
//! through its hub, the storage version (controller-runtime's hub and spoke).
//!
//! The conversions are plain Rust: `TryFrom` (or `From`) between each other version's type
//! and the hub's, in both directions. A missing one is a compile error naming the two types
//! (``the trait bound `v1alpha1::Foo: From<v1beta1::Foo>` is not satisfied``). Any two
//! versions convert through the hub; `apiVersion` and `kind` are the target's. Of
//! `metadata`, what a conversion returns counts for the labels and annotations only, as on
//! kube-apiserver (which keeps those two and restores the rest): so a field that only a
//! spoke has survives a trip through the hub in an annotation ([`Stash`]), and a conversion
//! that builds a fresh `ObjectMeta` loses the object's labels.
//!
//! ```ignore
//! // v1alpha1::Foo is the hub (`+kubebuilder:storageversion`); v1beta1 nests the Deployment.
//! impl From<v1beta1::Foo> for v1alpha1::Foo {
//!     fn from(foo: v1beta1::Foo) -> Self {
//!         let spec = v1alpha1::FooSpec {
//!             deployment_name: foo.spec.deployment.name,
//!             replicas: foo.spec.deployment.replicas,
//!         };
//!         Self { metadata: foo.metadata, spec, status: foo.status }
//!     }
//! }
//! // ... and From<v1alpha1::Foo> for v1beta1::Foo.
//!
//! let conversion = Conversion::hub::<v1alpha1::Foo>().spoke::<v1beta1::Foo, v1alpha1::Foo>();
//! WebhookServer::new().conversion("/convert-samplecontroller-k8s-io-foo", conversion);
//! ```
//!
//! Tests: [`Conversion::assert_lossless`] checks one object, of any version, against every
//! other version and back; [`Conversion::assert_round_trips`] (what the `conversion.rs` that
//! `kube-codegen generate` writes tests) does it for objects of every version drawn at random
//! from the kind's CRD ([`RoundTrips`]).

mod draw;
mod fields;
mod pattern;
mod round_trips;
mod stash;

pub use fields::{FieldsDiffer, same_fields};
pub use round_trips::RoundTrips;
pub use stash::{Stash, StashError};

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Display;

use kube::Resource;
use kube::core::conversion::{ConversionRequest, ConversionResponse};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Envelope, Refusal, clip};

/// The ConversionReview version answered, the only one `kube-codegen crds` asks for
/// (`conversionReviewVersions: ["v1"]`).
const CONVERSION_REVIEW: (&str, &str) = ("apiextensions.k8s.io/v1", "ConversionReview");

/// The path `kube-codegen crds --conversion-service` gives a kind's conversion webhook:
/// `/convert-<group with dashes>-<kind>`.
pub fn path<K: Resource<DynamicType = ()>>() -> String {
    format!(
        "/convert-{}-{}",
        K::group(&()).replace('.', "-"),
        K::kind(&()).to_ascii_lowercase()
    )
}

/// One direction of a conversion, on JSON.
type Step = Box<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;

struct Spoke {
    to_hub: Step,
    from_hub: Step,
    /// An object of this version read as its Rust type and written back, when it has one.
    canonical: Option<Step>,
}

/// The conversions of one kind: its hub and the versions that convert to and from it.
pub struct Conversion {
    kind: String,
    hub: String,
    /// The CRD's name (`<plural>.<group>`), when known from the hub's type.
    crd: Option<String>,
    spokes: BTreeMap<String, Spoke>,
    /// A hub object read as its Rust type and written back, once a typed spoke says the type.
    hub_canonical: Option<Step>,
}

impl std::fmt::Debug for Conversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversion")
            .field("kind", &self.kind)
            .field("hub", &self.hub)
            .field("versions", &self.spokes.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `value` read as `T`, or why not.
fn read<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn write<T: Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

impl Conversion {
    /// The conversions of the kind whose hub (storage version) is `H`.
    pub fn hub<H: Resource<DynamicType = ()>>() -> Self {
        Self {
            kind: H::kind(&()).into_owned(),
            hub: H::api_version(&()).into_owned(),
            crd: Some(format!("{}.{}", H::plural(&()), H::group(&()))),
            spokes: BTreeMap::new(),
            hub_canonical: None,
        }
    }

    /// The conversions of `kind` whose hub is `hub_api_version`, for kinds without Rust
    /// types (a group chosen at run time, say): add versions with [`Conversion::version`].
    pub fn untyped(kind: &str, hub_api_version: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            hub: hub_api_version.to_owned(),
            crd: None,
            spokes: BTreeMap::new(),
            hub_canonical: None,
        }
    }

    /// Adds `api_version`, converted on JSON: `to_hub` gets an object of this version and
    /// returns it as the hub's, `from_hub` the reverse. `apiVersion` and `kind` are set
    /// afterwards whatever they return; of their `metadata` only the labels and annotations
    /// count (the rest is the original's), as on kube-apiserver.
    #[must_use]
    pub fn version(
        mut self,
        api_version: &str,
        to_hub: impl Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
        from_hub: impl Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Self {
        let spoke = Spoke {
            to_hub: Box::new(to_hub),
            from_hub: Box::new(from_hub),
            canonical: None,
        };
        self.spokes.insert(api_version.to_owned(), spoke);
        self
    }

    /// Adds the version whose type is `S`, converted to and from the hub `H` with `TryFrom`.
    #[must_use]
    pub fn spoke<S, H>(self) -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + TryFrom<H> + 'static,
        H: Resource<DynamicType = ()> + Serialize + DeserializeOwned + TryFrom<S> + 'static,
        <S as TryFrom<H>>::Error: Display,
        <H as TryFrom<S>>::Error: Display,
    {
        let api_version = S::api_version(&());
        let mut this = self.version(
            &api_version,
            |value| {
                let from: S = read(value)?;
                write(&H::try_from(from).map_err(|e| e.to_string())?)
            },
            |value| {
                let hub: H = read(value)?;
                write(&S::try_from(hub).map_err(|e| e.to_string())?)
            },
        );
        if let Some(spoke) = this.spokes.get_mut(api_version.as_ref()) {
            spoke.canonical = Some(Box::new(|value| write(&read::<S>(value)?)));
        }
        this.hub_canonical = Some(Box::new(|value| write(&read::<H>(value)?)));
        this
    }

    /// The name of the kind's CRD (`<plural>.<group>`): known for [`Conversion::hub`], not
    /// for [`Conversion::untyped`].
    pub fn crd(&self) -> Option<&str> {
        self.crd.as_deref()
    }

    /// Every version converted: the hub's first.
    pub fn api_versions(&self) -> Vec<&str> {
        std::iter::once(self.hub.as_str())
            .chain(self.spokes.keys().map(String::as_str))
            .collect()
    }

    fn unknown(&self, api_version: &str) -> String {
        format!(
            "{} is not a version of {} this webhook converts (it converts {})",
            clip(api_version),
            self.kind,
            self.api_versions().join(", ")
        )
    }

    /// Whether `api_version` is one this converts: the hub's or a spoke's, so of the kind's
    /// group.
    fn check_version(&self, api_version: &str) -> Result<(), String> {
        if api_version == self.hub || self.spokes.contains_key(api_version) {
            Ok(())
        } else {
            Err(self.unknown(api_version))
        }
    }

    fn step(&self, api_version: &str) -> Result<&Spoke, String> {
        self.spokes
            .get(api_version)
            .ok_or_else(|| self.unknown(api_version))
    }

    /// `object` in `desired` (an `apiVersion`), through the hub. Its `metadata` is what
    /// kube-apiserver makes of the answer: the labels and annotations the conversions return
    /// (which must be valid ones), the rest the object's. The object must be of this kind
    /// and of a version this converts, and so must `desired`; an object already in
    /// `desired` is returned as it is.
    pub fn convert(&self, object: Value, desired: &str) -> Result<Value, String> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or("the object has no apiVersion")?
            .to_owned();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .ok_or("the object has no kind")?;
        if kind != self.kind {
            return Err(format!(
                "the object is a {}, not a {}",
                clip(kind),
                self.kind
            ));
        }
        self.check_version(&from)?;
        self.check_version(desired)?;
        if from == desired {
            return Ok(object);
        }
        let metadata = object.get("metadata").cloned();
        let hub = if from == self.hub {
            object
        } else {
            (self.step(&from)?.to_hub)(object)?
        };
        let mut out = if desired == self.hub {
            hub
        } else {
            (self.step(desired)?.from_hub)(hub)?
        };
        let map = out
            .as_object_mut()
            .ok_or("the conversion did not return an object")?;
        map.insert("apiVersion".into(), Value::from(desired));
        map.insert("kind".into(), Value::from(self.kind.as_str()));
        apiserver_rules::conversion::restore_object_meta(metadata.as_ref(), &mut out)
            .map_err(|e| format!("the conversion returned invalid metadata: {e}"))?;
        Ok(out)
    }

    /// `object`, of `api_version`, read as that version's Rust type and written back (as it
    /// is for a version without one): the form a typed client would send.
    fn canonical(&self, api_version: &str, object: Value) -> Result<Value, String> {
        let step = if api_version == self.hub {
            self.hub_canonical.as_ref()
        } else {
            self.step(api_version)?.canonical.as_ref()
        };
        match step {
            Some(step) => step(object),
            None => Ok(object),
        }
    }

    /// The answer to a ConversionReview's request: every object converted, in order, or a
    /// failure naming the first that could not be.
    pub fn review(&self, request: ConversionRequest) -> ConversionResponse {
        let desired = request.desired_api_version.clone();
        let converted: Result<Vec<Value>, String> = self.check_version(&desired).and_then(|()| {
            request
                .objects
                .iter()
                .map(|o| self.convert_named(o.clone(), &desired))
                .collect()
        });
        let response = ConversionResponse::for_request(request);
        match converted {
            Ok(objects) => response.success(objects),
            Err(message) => {
                response.failure(kube::core::Status::failure(&message, "ConversionFailed"))
            }
        }
    }

    /// [`Conversion::convert`], its error naming the object.
    fn convert_named(&self, object: Value, desired: &str) -> Result<Value, String> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .map(|n| clip(n).into_owned())
            .unwrap_or_default();
        self.convert(object, desired).map_err(|e| {
            format!(
                "converting {} \"{name}\" to {}: {e}",
                self.kind,
                clip(desired)
            )
        })
    }

    /// Answers one ConversionReview body, or refuses it (400: not an
    /// `apiextensions.k8s.io/v1` ConversionReview with a request). The objects are read,
    /// converted and written one at a time, so a review takes little more memory than its
    /// body and its answer, however many objects it holds.
    pub(crate) fn answer(&self, body: &[u8]) -> Result<Vec<u8>, Refusal> {
        #[derive(Deserialize)]
        struct Request<'a> {
            #[serde(borrow)]
            uid: Cow<'a, str>,
            #[serde(rename = "desiredAPIVersion", borrow)]
            desired: Cow<'a, str>,
            #[serde(borrow)]
            objects: Vec<&'a RawValue>,
        }
        let request = Envelope::read(body, CONVERSION_REVIEW)?;
        let request: Request<'_> = serde_json::from_str(request.get()).map_err(|e| {
            Refusal::bad_request(format!(
                "the ConversionReview's request does not decode: {e}"
            ))
        })?;
        let mut out = Vec::with_capacity(body.len() + 256);
        out.extend_from_slice(
            br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"#,
        );
        put(&mut out, request.uid.as_ref());
        out.extend_from_slice(br#","convertedObjects":["#);
        let objects_at = out.len();
        let converted = self.check_version(&request.desired).and_then(|()| {
            for (i, raw) in request.objects.iter().enumerate() {
                let object: Value = serde_json::from_str(raw.get())
                    .map_err(|e| format!("object {i} does not decode: {e}"))?;
                let object = self.convert_named(object, &request.desired)?;
                if i > 0 {
                    out.push(b',');
                }
                put(&mut out, &object);
            }
            Ok(())
        });
        let result = match converted {
            Ok(()) => kube::core::Status::success(),
            Err(message) => {
                out.truncate(objects_at);
                kube::core::Status::failure(&message, "ConversionFailed")
            }
        };
        out.extend_from_slice(br#"],"result":"#);
        put(&mut out, &result);
        out.extend_from_slice(b"}}");
        Ok(out)
    }

    /// Checks that `object` (of any version this converts, as JSON) comes back unchanged
    /// from every other version: for a hub object hub -> version -> hub, for a spoke's
    /// spoke -> hub -> spoke and on through the other versions. The first trip that changes
    /// something, with the object before and after and the first place they differ, or why
    /// a conversion failed.
    pub fn round_trip(&self, object: &Value) -> Result<(), String> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or("the object has no apiVersion")?;
        for version in self.api_versions() {
            if version == from {
                continue;
            }
            let there = self
                .convert(object.clone(), version)
                .map_err(|e| format!("{from} -> {version}: {e}"))?;
            let back = self
                .convert(there, from)
                .map_err(|e| format!("{from} -> {version} -> {from}: {e}"))?;
            if back != *object {
                let at = round_trips::difference(object, &back, "").unwrap_or_default();
                return Err(format!(
                    "{from} -> {version} -> {from} is not lossless (at `{at}`):\n  before: {object}\n  after:  {back}"
                ));
            }
        }
        Ok(())
    }

    /// [`Conversion::round_trip`] for test code: panics with the difference.
    ///
    /// # Panics
    ///
    /// When a round trip of `object` through any other version changes it or fails.
    #[track_caller]
    pub fn assert_lossless<T: Serialize>(&self, object: &T) {
        let value = serde_json::to_value(object).expect("the object serializes");
        if let Err(why) = self.round_trip(&value) {
            panic!("{why}");
        }
    }

    /// [`RoundTrips`] with its defaults, on this kind's CRD among `crds` (the tree's
    /// `crds()`): objects of every version, drawn from the CRD's schemas, convert to every
    /// other version and back unchanged.
    ///
    /// # Panics
    ///
    /// When `crds` has no CRD of this kind, or a round trip changes or fails an object (the
    /// message shows the smallest such object found).
    #[track_caller]
    pub fn assert_round_trips(
        &self,
        crds: &[k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition],
    ) {
        let group = self.hub.split_once('/').map_or("", |(g, _)| g);
        let crd = crds
            .iter()
            .find(|c| c.spec.group == group && c.spec.names.kind == self.kind)
            .unwrap_or_else(|| panic!("no CRD of {} in group {group}", self.kind));
        if let Err(why) = RoundTrips::new().check(self, crd) {
            panic!("{why}");
        }
    }
}

/// Appends `value` as JSON; strings, values and statuses always serialize.
fn put<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let _ = serde_json::to_writer(out, value);
}
