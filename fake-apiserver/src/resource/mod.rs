//! Which resources the server serves, and what each is: the built-in kinds (one row each in
//! [`BUILTINS`]), and the versions of established CRDs ([`crd::from_crd`]).

pub mod crd;

use serde_json::{Value, json};

use apiserver_rules::meta::MetaRules;
use apiserver_rules::names::NameRule;

/// The scale subresource's JSON paths.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalePaths {
    /// `.spec.replicas`.
    pub spec_replicas: String,
    /// `.status.replicas`.
    pub status_replicas: String,
    /// `.status.selector`, when set.
    pub label_selector: Option<String>,
}

/// When `metadata.generation` counts an object's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Not at all: the server keeps what the client sent on create, then the old value.
    Untracked,
    /// From 1, up by one whenever `.spec` changes.
    Spec,
    /// From 1, up by one whenever `.spec` or the annotations change (Deployment, whose
    /// annotations are copied to its ReplicaSets).
    SpecOrAnnotations,
    /// From 1, up by one whenever anything but metadata (and status, when that is a
    /// subresource) changes: custom resources.
    AllButMetadata,
}

/// How a kind words an unsupported field label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldLabels {
    /// Kinds with only `metadata.name` and `metadata.namespace`.
    MetaOnly,
    /// Core kinds with their own labels (Pod, Node, Namespace, Secret, Service, Event) and
    /// custom resources: `field label not supported: x`.
    Listed,
    /// `batch/v1` Jobs: `field label "x" not supported for Job`.
    Job,
}

/// An object of a served resource as a request names it: the type it is served as, its
/// namespace (ignored for cluster-scoped kinds), its name, and the subresource, if any.
#[derive(Debug, Clone, Copy)]
pub struct ObjectRef<'a> {
    /// The served type.
    pub rt: &'a ResourceType,
    /// The namespace.
    pub namespace: Option<&'a str>,
    /// The object's name.
    pub name: &'a str,
    /// `status`, `scale` or `finalize`.
    pub subresource: Option<&'a str>,
}

/// One served group/version/resource.
#[derive(Debug, Clone)]
pub struct ResourceType {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural (the path segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Whether `/status` is a subresource.
    pub status: bool,
    /// The scale subresource, if any.
    pub scale: Option<ScalePaths>,
    /// Short names (`deploy`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// The structural schema (`openAPIV3Schema`) of a CRD version.
    pub schema: Option<Value>,
    /// Field selectors this kind supports beyond `metadata.name` and `metadata.namespace`.
    pub selectable_fields: Vec<String>,
    /// The version objects are stored in (CRDs with several versions share one storage).
    pub storage_version: String,
    /// Whether the type comes from a CRD.
    pub custom: bool,
    /// A CRD version's printer columns: name, type, JSON path.
    pub printer_columns: Vec<(String, String, String)>,
    /// How object metadata is validated.
    pub meta: MetaRules,
    /// How an unsupported field selector is reported.
    pub field_labels: FieldLabels,
    /// When `metadata.generation` changes.
    pub generation: Generation,
    /// `Warning` headers of every request to this version (a deprecated CRD version's).
    pub warnings: Vec<String>,
    /// A CRD version's CEL rules, parsed once.
    pub rules: Option<std::sync::Arc<apiserver_rules::cel::Rules>>,
    /// The CRD's `spec.conversion.webhook` when its strategy is `Webhook`: objects stored
    /// in another version are converted by calling it.
    pub conversion: Option<std::sync::Arc<Value>>,
    /// A CRD's schemas (`openAPIV3Schema`) by version, served or not: what an object is
    /// pruned by on its way into the storage version and out of the version it is stored
    /// in. Empty for built-in kinds.
    pub schemas: std::sync::Arc<std::collections::BTreeMap<String, Value>>,
}

impl ResourceType {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The schema of `version` of this CRD (any of its versions, served or not).
    pub fn schema_of(&self, version: &str) -> Option<&Value> {
        self.schemas.get(version)
    }

    /// Whether `api_version` is this served version's (without building the string).
    pub fn is_api_version(&self, api_version: &str) -> bool {
        match api_version.split_once('/') {
            Some((g, v)) => g == self.group && v == self.version,
            None => self.group.is_empty() && api_version == self.version,
        }
    }

    /// Whether an object stored in `api_version` is served in this version by the CRD's
    /// conversion webhook (strategy `Webhook`) rather than by rewriting its `apiVersion`.
    pub fn converts(&self, api_version: &str) -> bool {
        self.conversion.is_some() && !self.is_api_version(api_version)
    }

    /// Sets `apiVersion` and `kind` to this served version (conversion strategy `None`).
    pub fn rewrite(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("apiVersion".to_owned(), Value::String(self.api_version()));
            map.insert("kind".to_owned(), Value::String(self.kind.clone()));
        }
    }

    /// `obj` (as stored) with this version's `apiVersion` and `kind`; an object the CRD's
    /// conversion webhook converts is left as stored (the request converts it). An object
    /// stored in another version of a CRD is read as kube-apiserver's storage codec reads
    /// it ([`ResourceType::read_as_served`]).
    pub fn served(&self, obj: &Value) -> Value {
        let mut out = obj.clone();
        let stored = obj.get("apiVersion").and_then(Value::as_str);
        if !stored.is_some_and(|v| self.converts(v)) {
            self.read_as_served(&mut out);
        }
        out
    }

    /// `obj`, stored in a version of this CRD (with strategy `None`, or already converted),
    /// as this version serves it: coerced and defaulted by the schema of the version it is
    /// stored in, then `apiVersion` rewritten and coerced by this version's schema (no
    /// defaults), as kube-apiserver's storage codec reads it. Objects stored in this version
    /// and built-in kinds only get their `apiVersion` and `kind`.
    pub fn read_as_served(&self, obj: &mut Value) {
        let stored = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(|v| v.rsplit('/').next().unwrap_or(v).to_owned());
        let other = stored.as_deref().filter(|v| *v != self.version);
        if let Some(from) = other.and_then(|v| self.schema_of(v)) {
            apiserver_rules::schema::coerce(from, obj, true);
        }
        self.rewrite(obj);
        if other.is_some()
            && let Some(schema) = &self.schema
        {
            apiserver_rules::schema::coerce(schema, obj, false);
        }
    }

    /// `obj`, converted into the storage version `storage` of this CRD, as kube-apiserver's
    /// storage codec writes it: coerced by that version's schema (unknown fields pruned,
    /// disallowed `null`s dropped), the pruned paths discarded. The storage version's
    /// defaults are applied too: kube-apiserver applies them on every read of the object,
    /// and the fake serves what it stored.
    pub fn coerce_for_storage(&self, obj: &mut Value, storage: &str) {
        if let Some(schema) = self.schema_of(storage) {
            apiserver_rules::schema::coerce(schema, obj, true);
        }
    }

    /// Whether this is `plural` of `group`.
    pub fn is(&self, group: &str, plural: &str) -> bool {
        self.group == group && self.plural == plural
    }

    /// The key kube-apiserver stores an object under in etcd (which some of its errors
    /// quote): `/registry/<prefix>/<namespace>/<name>`, where the prefix is the resource,
    /// or `<group>/<resource>` for custom resources and CRDs. A dry run's key has no
    /// `/registry`.
    pub fn etcd_key(&self, namespace: Option<&str>, name: &str, dry_run: bool) -> String {
        let prefix = match (self.group.as_str(), self.plural.as_str()) {
            ("", "services") => "services/specs".to_owned(),
            ("networking.k8s.io", "ingresses") => "ingress".to_owned(),
            (group, plural) if self.custom || group == "apiextensions.k8s.io" => {
                format!("{group}/{plural}")
            }
            (_, plural) => plural.to_owned(),
        };
        let root = if dry_run { "" } else { "/registry" };
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{root}/{prefix}/{ns}/{name}"),
            None => format!("{root}/{prefix}/{name}"),
        }
    }

    /// The storage key of the group and resource, shared by all versions.
    pub fn storage_key(&self) -> (String, String) {
        (self.group.clone(), self.plural.clone())
    }

    /// The entry of this resource in an `APIResourceList`.
    pub fn discovery_entries(&self) -> Vec<Value> {
        let verbs = vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        let mut out = vec![json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
            "shortNames": self.short_names,
            "categories": self.categories,
        })];
        if self.status {
            out.push(json!({
                "name": format!("{}/status", self.plural), "singularName": "", "namespaced": self.namespaced,
                "kind": self.kind, "verbs": ["get", "patch", "update"],
            }));
        }
        if self.scale.is_some() {
            out.push(json!({
                "name": format!("{}/scale", self.plural), "singularName": "", "namespaced": self.namespaced,
                "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"],
            }));
        }
        out
    }
}

/// One row of the built-in table: what differs from kind to kind.
struct Builtin {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
    scale: bool,
    short_names: &'static [&'static str],
    fields: &'static [&'static str],
    names: NameRule,
    standard_finalizers: bool,
}

/// A row with the common values: no scale, short names or selectable fields, subdomain
/// names, standard finalizers.
const fn b(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    status: bool,
) -> Builtin {
    Builtin {
        group,
        version,
        kind,
        plural,
        namespaced,
        status,
        scale: false,
        short_names: &[],
        fields: &[],
        names: NameRule::Subdomain,
        standard_finalizers: true,
    }
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];
const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The built-in kinds, one row each: a new kind the server serves is a new row (with its
/// validation in apiserver-rules, its defaults in `admission::defaulting`).
const BUILTINS: &[Builtin] = &[
    Builtin {
        short_names: &["ns"],
        fields: &["status.phase"],
        names: NameRule::Label,
        ..b("", "v1", "Namespace", "namespaces", false, true)
    },
    Builtin {
        short_names: &["po"],
        fields: POD_FIELDS,
        ..b("", "v1", "Pod", "pods", true, true)
    },
    Builtin {
        short_names: &["svc"],
        fields: &["spec.clusterIP", "spec.type"],
        names: NameRule::Label,
        ..b("", "v1", "Service", "services", true, true)
    },
    Builtin {
        short_names: &["cm"],
        ..b("", "v1", "ConfigMap", "configmaps", true, false)
    },
    Builtin {
        fields: &["type"],
        ..b("", "v1", "Secret", "secrets", true, false)
    },
    Builtin {
        short_names: &["ev"],
        fields: EVENT_FIELDS,
        names: NameRule::PathSegment,
        standard_finalizers: false,
        ..b("", "v1", "Event", "events", true, false)
    },
    Builtin {
        short_names: &["no"],
        fields: &["spec.unschedulable"],
        ..b("", "v1", "Node", "nodes", false, true)
    },
    Builtin {
        short_names: &["sa"],
        ..b("", "v1", "ServiceAccount", "serviceaccounts", true, false)
    },
    Builtin {
        short_names: &["ep"],
        ..b("", "v1", "Endpoints", "endpoints", true, false)
    },
    Builtin {
        short_names: &["pvc"],
        ..b(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            true,
        )
    },
    Builtin {
        short_names: &["deploy"],
        scale: true,
        ..b("apps", "v1", "Deployment", "deployments", true, true)
    },
    Builtin {
        short_names: &["rs"],
        scale: true,
        ..b("apps", "v1", "ReplicaSet", "replicasets", true, true)
    },
    Builtin {
        short_names: &["ds"],
        ..b("apps", "v1", "DaemonSet", "daemonsets", true, true)
    },
    Builtin {
        short_names: &["sts"],
        scale: true,
        names: NameRule::Label,
        ..b("apps", "v1", "StatefulSet", "statefulsets", true, true)
    },
    Builtin {
        fields: &["status.successful"],
        ..b("batch", "v1", "Job", "jobs", true, true)
    },
    Builtin {
        short_names: &["cj"],
        names: NameRule::CronJob,
        ..b("batch", "v1", "CronJob", "cronjobs", true, true)
    },
    Builtin {
        short_names: &["ev"],
        fields: EVENT_FIELDS,
        ..b("events.k8s.io", "v1", "Event", "events", true, false)
    },
    Builtin {
        standard_finalizers: false,
        ..b("coordination.k8s.io", "v1", "Lease", "leases", true, false)
    },
    Builtin {
        names: NameRule::PathSegment,
        ..b(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            false,
        )
    },
    Builtin {
        names: NameRule::PathSegment,
        ..b(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            false,
        )
    },
    Builtin {
        names: NameRule::PathSegment,
        ..b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            false,
        )
    },
    Builtin {
        names: NameRule::PathSegment,
        ..b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            false,
        )
    },
    Builtin {
        short_names: &["ing"],
        ..b(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            true,
        )
    },
    Builtin {
        short_names: &["netpol"],
        ..b(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            false,
        )
    },
    Builtin {
        ..b(
            "networking.k8s.io",
            "v1",
            "IngressClass",
            "ingressclasses",
            false,
            false,
        )
    },
    Builtin {
        short_names: &["hpa"],
        ..b(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            true,
        )
    },
    Builtin {
        ..b(
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
            "endpointslices",
            true,
            false,
        )
    },
    Builtin {
        short_names: &["pc"],
        ..b(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
            false,
        )
    },
    Builtin {
        short_names: &["pdb"],
        names: NameRule::PathSegment,
        standard_finalizers: false,
        ..b(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            true,
        )
    },
    Builtin {
        ..b(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            false,
        )
    },
    Builtin {
        ..b(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            false,
        )
    },
    Builtin {
        short_names: &["crd", "crds"],
        standard_finalizers: false,
        ..b(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            true,
        )
    },
];

/// The built-in kinds the server knows from the start.
pub fn builtins() -> Vec<ResourceType> {
    BUILTINS.iter().map(Builtin::resource_type).collect()
}

impl Builtin {
    /// The served type of this row; what the table leaves out follows from the kind.
    fn resource_type(&self) -> ResourceType {
        ResourceType {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
            singular: self.kind.to_ascii_lowercase(),
            namespaced: self.namespaced,
            status: self.status,
            scale: self.scale.then(|| ScalePaths {
                spec_replicas: ".spec.replicas".to_owned(),
                status_replicas: ".status.replicas".to_owned(),
                label_selector: Some(".status.selector".to_owned()),
            }),
            short_names: self.short_names.iter().map(|s| (*s).to_owned()).collect(),
            categories: if matches!(
                self.kind,
                "Pod"
                    | "Service"
                    | "Deployment"
                    | "ReplicaSet"
                    | "DaemonSet"
                    | "StatefulSet"
                    | "Job"
                    | "CronJob"
                    | "HorizontalPodAutoscaler"
            ) {
                vec!["all".to_owned()]
            } else {
                Vec::new()
            },
            schema: None,
            selectable_fields: self.fields.iter().map(|s| (*s).to_owned()).collect(),
            storage_version: self.version.to_owned(),
            custom: false,
            printer_columns: Vec::new(),
            meta: MetaRules {
                name: self.names,
                standard_finalizers: self.standard_finalizers,
            },
            field_labels: match (self.group, self.kind) {
                ("batch", "Job") => FieldLabels::Job,
                (_, "Pod" | "Node" | "Namespace" | "Secret" | "Service" | "Event") => {
                    FieldLabels::Listed
                }
                _ => FieldLabels::MetaOnly,
            },
            // The kinds whose registry strategies set and bump it.
            generation: match self.kind {
                "Deployment" => Generation::SpecOrAnnotations,
                "Pod"
                | "ReplicaSet"
                | "DaemonSet"
                | "StatefulSet"
                | "Job"
                | "CronJob"
                | "Ingress"
                | "IngressClass"
                | "NetworkPolicy"
                | "PriorityClass"
                | "PodDisruptionBudget"
                | "CustomResourceDefinition" => Generation::Spec,
                // Up on any change but metadata's (labels count too, which this misses).
                "EndpointSlice" => Generation::AllButMetadata,
                _ => Generation::Untracked,
            },
            warnings: Vec::new(),
            rules: None,
            conversion: None,
            schemas: Default::default(),
        }
    }
}
