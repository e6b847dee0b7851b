//! Conversion webhooks: a kind served in several versions whose Rust types differ, converted
//! through its hub, the storage version (controller-runtime's hub and spoke).
//!
//! The conversions are plain Rust: `TryFrom` (or `From`) between each other version's type
//! and the hub's, in both directions. A missing one is a compile error naming the two types
//! (``the trait bound `v1alpha1::Foo: From<v1beta1::Foo>` is not satisfied``). Any two
//! versions convert through the hub; the object's `metadata` is carried over untouched
//! whatever a conversion does with it, and `apiVersion` and `kind` are the target's.
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
}

/// The conversions of one kind: its hub and the versions that convert to and from it.
pub struct Conversion {
    kind: String,
    hub: String,
    /// The CRD's name (`<plural>.<group>`), when known from the hub's type.
    crd: Option<String>,
    spokes: BTreeMap<String, Spoke>,
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
        }
    }

    /// Adds `api_version`, converted on JSON: `to_hub` gets an object of this version and
    /// returns it as the hub's, `from_hub` the reverse. `apiVersion`, `kind` and `metadata`
    /// are set afterwards whatever they return.
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
        self.version(
            &S::api_version(&()),
            |value| {
                let from: S = read(value)?;
                write(&H::try_from(from).map_err(|e| e.to_string())?)
            },
            |value| {
                let hub: H = read(value)?;
                write(&S::try_from(hub).map_err(|e| e.to_string())?)
            },
        )
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

    /// `object` in `desired` (an `apiVersion`), through the hub; its `metadata` untouched.
    /// The object must be of this kind and of a version this converts, and so must
    /// `desired`; an object already in `desired` is returned as it is.
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
        if let Some(map) = out.as_object_mut() {
            map.insert("apiVersion".into(), Value::from(desired));
            map.insert("kind".into(), Value::from(self.kind.as_str()));
            match metadata {
                Some(metadata) => map.insert("metadata".into(), metadata),
                None => map.remove("metadata"),
            };
        }
        Ok(out)
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

    /// Checks that `hub` (an object of the hub version, as JSON) comes back unchanged from
    /// every other version: hub -> version -> hub. The first version that loses something,
    /// with the object before and after, or why a conversion failed.
    pub fn round_trip(&self, hub: &Value) -> Result<(), String> {
        for version in self.spokes.keys() {
            let there = self.convert(hub.clone(), version)?;
            let back = self.convert(there, &self.hub)?;
            if back != *hub {
                return Err(format!(
                    "{} -> {version} -> {} is not lossless:\n  before: {hub}\n  after:  {back}",
                    self.hub, self.hub
                ));
            }
        }
        Ok(())
    }

    /// [`Conversion::round_trip`] for test code: panics with the difference.
    ///
    /// # Panics
    ///
    /// When a round trip through any version changes `hub` or fails.
    #[track_caller]
    pub fn assert_lossless<H: Serialize>(&self, hub: &H) {
        let value = serde_json::to_value(hub).expect("the hub object serializes");
        if let Err(why) = self.round_trip(&value) {
            panic!("{why}");
        }
    }
}

/// Appends `value` as JSON; strings, values and statuses always serialize.
fn put<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let _ = serde_json::to_writer(out, value);
}

/// Why [`same_fields`] could not convert: a field of one version with no place in the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsDiffer(String);

impl Display for FieldsDiffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FieldsDiffer {}

/// The conversion of two versions of a kind whose fields are the same: the object read as
/// `T`, its `apiVersion` `T`'s. What `kube-codegen create webhook --conversion` writes for
/// the versions of a kind while their fields still agree. Nothing is dropped: once a field
/// of one version has no place in the other, or is read back otherwise, converting is an
/// error naming it (the conversion webhook then fails the request), and the conversion is
/// yours to write field by field.
///
/// ```
/// # use kube_codegen_runtime::webhook::conversion::same_fields;
/// # mod v1 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v1", kind = "Backup", namespaced, schema = "disabled")]
/// #     pub struct BackupSpec { pub replicas: i32 }
/// # }
/// # mod v2 {
/// #     use kube::CustomResource; use serde::{Deserialize, Serialize};
/// #     #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
/// #     #[kube(group = "example.com", version = "v2", kind = "Backup", namespaced, schema = "disabled")]
/// #     pub struct BackupSpec { pub replicas: i32, pub paused: Option<bool> }
/// # }
/// let old = v1::Backup::new("nightly", v1::BackupSpec { replicas: 2 });
/// let new: v2::Backup = same_fields(&old).unwrap();
/// assert_eq!(new.spec.replicas, 2);
///
/// // v2's `paused` has no place in v1: an error, not a silent loss.
/// let paused = v2::Backup::new("nightly", v2::BackupSpec { replicas: 2, paused: Some(true) });
/// let err = same_fields::<_, v1::Backup>(&paused).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "`spec.paused` of example.com/v2 has no place in example.com/v1: \
///      write this conversion field by field"
/// );
/// ```
pub fn same_fields<F, T>(from: &F) -> Result<T, FieldsDiffer>
where
    F: Serialize,
    T: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    let mut value = serde_json::to_value(from).map_err(|e| FieldsDiffer(e.to_string()))?;
    let source = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("the source version")
        .to_owned();
    let target = T::api_version(&()).into_owned();
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(target.as_str()));
    }
    let converted: T = serde_json::from_value(value.clone())
        .map_err(|e| FieldsDiffer(format!("{source} does not read as {target}: {e}")))?;
    let back = serde_json::to_value(&converted).map_err(|e| FieldsDiffer(e.to_string()))?;
    match first_difference(&value, &back, "") {
        None => Ok(converted),
        Some(path) => Err(FieldsDiffer(format!(
            "`{path}` of {source} has no place in {target}: write this conversion field by field"
        ))),
    }
}

/// The dotted path of the first value of `a` that `b` does not hold (`a`'s fields in order):
/// what converting `a` would lose. A `null` held as absent is no loss, nor is a field `b` has
/// beside them (a field the target added, at its default).
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(k, v)| match b.get(k) {
            Some(w) => first_difference(v, w, &at(k)),
            None => (!v.is_null()).then(|| at(k)),
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, &format!("{path}[{i}]"))),
        _ => (a != b).then(|| path.to_owned()),
    }
}
