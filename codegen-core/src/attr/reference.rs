//! The marker reference of the book (`docs/src/reference/markers.md`), written from the
//! tables the checker reads markers with: [`KNOWN`] and friends say which markers exist and
//! where they go; [`DOCS`] adds what each one means, so a marker the checker accepts without
//! a line here fails a test rather than going undocumented.

use std::fmt::Write as _;

use super::genclient::MARKER_OPTIONS;
use super::marker::{ELEMENTS_PREFIX, IGNORED, KNOWN, Place, UNSUPPORTED, has_items_form};

/// What the reference says about one marker beyond the checker's table.
struct Doc {
    /// The name without the leading `+`, as in the checker's tables.
    name: &'static str,
    /// The value or arguments it takes (empty: none).
    args: &'static str,
    /// What it writes or changes.
    writes: &'static str,
    /// One line as a user writes it.
    example: &'static str,
}

/// Whether a marker (its name without `+`) belongs to a section of the reference.
type Belongs = fn(&str) -> bool;

/// The families of the reference, in order: a heading and a test on the marker's name.
const SECTIONS: &[(&str, Belongs)] = &[
    ("Client markers", |n| {
        n.starts_with("genclient") || n == "resourceName"
    }),
    ("Package markers", |n| {
        n == "groupName" || n == "groupGoName"
    }),
    ("CRD validation markers", |n| {
        n.starts_with("kubebuilder:validation:") || n == "kubebuilder:default"
    }),
    ("Kubernetes-wide field markers", |n| {
        (!n.contains(':') || n.starts_with("k8s:")) && !is_client(n)
    }),
    ("CRD resource and version markers", |n| {
        (n.starts_with("kubebuilder:") || n.starts_with("kube-codegen:"))
            && !n.starts_with("kubebuilder:validation:")
            && n != "kubebuilder:default"
            && !is_elsewhere(n)
    }),
    ("RBAC and webhook markers", |n| {
        matches!(
            n,
            "kubebuilder:rbac" | "kubebuilder:webhook" | "kubebuilder:webhookconfiguration"
        )
    }),
    ("Accepted and ignored", |n| {
        IGNORED.contains(&n) && n != "kubebuilder:rbac"
    }),
];

fn is_client(name: &str) -> bool {
    name.starts_with("genclient") || matches!(name, "resourceName" | "groupName" | "groupGoName")
}

fn is_elsewhere(name: &str) -> bool {
    IGNORED.contains(&name)
        || matches!(
            name,
            "kubebuilder:webhook" | "kubebuilder:webhookconfiguration"
        )
}

/// One marker the checker accepts, with where it goes and how its value is written.
struct Accepted {
    name: String,
    place: &'static str,
    form: &'static str,
}

/// Every marker the checker accepts, from its own tables.
fn accepted() -> Vec<Accepted> {
    let mut out: Vec<Accepted> = KNOWN
        .iter()
        .map(|&(name, place, takes)| Accepted {
            name: name.to_owned(),
            place: match place {
                Place::Field => "a field",
                Place::Type => "a type (the spec struct for resource markers)",
                Place::Both => "a field or a type",
            },
            form: match takes {
                Some(true) => "`=value`",
                Some(false) => "`:key=value,...`",
                None => "no value",
            },
        })
        .collect();
    let client = |name: String, form| Accepted {
        name,
        place: "the spec type",
        form,
    };
    out.push(client("genclient".to_owned(), "no value"));
    for option in MARKER_OPTIONS {
        let form = match *option {
            "onlyVerbs" | "skipVerbs" => "`=value`",
            "method" => "`=Name,key=value,...`",
            _ => "no value",
        };
        out.push(client(format!("genclient:{option}"), form));
    }
    out.push(client("resourceName".to_owned(), "`=value`"));
    for package in ["groupName", "groupGoName"] {
        out.push(Accepted {
            name: package.to_owned(),
            place: "the `//!` docs of a version module (`mod.rs`)",
            form: "`=value`",
        });
    }
    for marker in ["kubebuilder:webhook", "kubebuilder:webhookconfiguration"] {
        out.push(Accepted {
            name: marker.to_owned(),
            place: "any comment line of any `.rs` file, or a type's doc comment",
            form: "`:key=value,...`",
        });
    }
    for name in IGNORED {
        out.push(Accepted {
            name: (*name).to_owned(),
            place: if *name == "kubebuilder:rbac" {
                "any comment line of the controller's sources"
            } else {
                "anywhere"
            },
            form: if *name == "kubebuilder:rbac" {
                "`:key=value,...`"
            } else {
                "anything"
            },
        });
    }
    out
}

/// The Markdown of the marker reference; an error names the markers the checker accepts
/// that have no entry in [`DOCS`].
pub(crate) fn markdown() -> Result<String, String> {
    let accepted = accepted();
    let missing: Vec<&str> = accepted
        .iter()
        .filter(|a| !DOCS.iter().any(|d| d.name == a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "markers without a reference entry in codegen-core/src/attr/reference.rs: +{}",
            missing.join(", +")
        ));
    }
    let mut out = String::from(
        "# Marker reference\n\n\
         <!-- Generated from codegen-core's marker tables (codegen-core/src/attr/reference.rs) \
         by hack/update-docs.sh; do not edit. -->\n\n\
         Every marker kube-codegen's checker accepts. Markers are written in doc comments \
         (`/// +name`) or, for the CLI, in line comments right above the item (`// +name`); \
         the derive sees only `///` doc comments. Unknown `+kubebuilder:` and `+kube-codegen:` \
         markers are errors with a suggestion.\n",
    );
    for (title, belongs) in SECTIONS {
        let _ = write!(out, "\n## {title}\n");
        for a in accepted.iter().filter(|a| belongs(&a.name)) {
            let doc = DOCS
                .iter()
                .find(|d| d.name == a.name)
                .expect("checked above");
            let _ = write!(out, "\n### `+{}`\n\n", a.name);
            let _ = writeln!(out, "- **where**: {}", a.place);
            let args = if doc.args.is_empty() {
                a.form.to_owned()
            } else {
                format!("{}: {}", a.form, doc.args)
            };
            let _ = writeln!(out, "- **arguments**: {args}");
            if has_items_form(&a.name) {
                let base = a.name.trim_start_matches("kubebuilder:validation:");
                let _ = writeln!(
                    out,
                    "- **inside a field**: `+kubebuilder:validation:items:{base}` on a list's \
                     items, `+{ELEMENTS_PREFIX}<steps>{base}` (steps: `items:`, `values:`) deeper"
                );
            }
            let _ = writeln!(out, "- **writes**: {}", doc.writes);
            let _ = writeln!(out, "\n```rust,ignore\n{}\n```", doc.example);
        }
    }
    out.push_str(
        "\n## Not supported\n\ncontroller-gen markers kube-codegen refuses with an error that \
         says so (rather than a guess at a similar name):\n\n",
    );
    for name in UNSUPPORTED {
        let _ = writeln!(out, "- `+{name}`");
    }
    Ok(out)
}

/// What each accepted marker means; the test below keeps its names equal to the checker's.
const DOCS: &[Doc] = &[
    Doc {
        name: "kubebuilder:validation:Minimum",
        args: "a number",
        writes: "`minimum` in the field's schema (numbers only)",
        example: "/// +kubebuilder:validation:Minimum=1",
    },
    Doc {
        name: "kubebuilder:validation:Maximum",
        args: "a number",
        writes: "`maximum` in the field's schema (numbers only)",
        example: "/// +kubebuilder:validation:Maximum=10",
    },
    Doc {
        name: "kubebuilder:validation:ExclusiveMinimum",
        args: "`true` or `false` (alone: `true`)",
        writes: "`exclusiveMinimum`: the `Minimum` itself is refused",
        example: "/// +kubebuilder:validation:ExclusiveMinimum",
    },
    Doc {
        name: "kubebuilder:validation:ExclusiveMaximum",
        args: "`true` or `false` (alone: `true`)",
        writes: "`exclusiveMaximum`: the `Maximum` itself is refused",
        example: "/// +kubebuilder:validation:ExclusiveMaximum=true",
    },
    Doc {
        name: "kubebuilder:validation:MultipleOf",
        args: "a number greater than 0",
        writes: "`multipleOf` in the field's schema",
        example: "/// +kubebuilder:validation:MultipleOf=5",
    },
    Doc {
        name: "kubebuilder:validation:MinLength",
        args: "a length",
        writes: "`minLength` (strings)",
        example: "/// +kubebuilder:validation:MinLength=1",
    },
    Doc {
        name: "kubebuilder:validation:MaxLength",
        args: "a length",
        writes: "`maxLength` (strings)",
        example: "/// +kubebuilder:validation:MaxLength=63",
    },
    Doc {
        name: "kubebuilder:validation:Pattern",
        args: "a regular expression, optionally in backquotes",
        writes: "`pattern` (strings)",
        example: "/// +kubebuilder:validation:Pattern=`^[a-z]+$`",
    },
    Doc {
        name: "kubebuilder:validation:MinItems",
        args: "a count",
        writes: "`minItems` (lists)",
        example: "/// +kubebuilder:validation:MinItems=1",
    },
    Doc {
        name: "kubebuilder:validation:MaxItems",
        args: "a count",
        writes: "`maxItems` (lists); CEL rules over a list need it to stay within the cost budget",
        example: "/// +kubebuilder:validation:MaxItems=16",
    },
    Doc {
        name: "kubebuilder:validation:UniqueItems",
        args: "`true` (alone: `true`)",
        writes: "`x-kubernetes-list-type: set`, since the API server rejects `uniqueItems`",
        example: "/// +kubebuilder:validation:UniqueItems=true",
    },
    Doc {
        name: "kubebuilder:validation:MinProperties",
        args: "a count",
        writes: "`minProperties` (maps and structs)",
        example: "/// +kubebuilder:validation:MinProperties=1",
    },
    Doc {
        name: "kubebuilder:validation:MaxProperties",
        args: "a count",
        writes: "`maxProperties` (maps and structs)",
        example: "/// +kubebuilder:validation:MaxProperties=8",
    },
    Doc {
        name: "kubebuilder:validation:Enum",
        args: "values separated by `;`",
        writes: "`enum` (strings, numbers, booleans; a Rust enum already lists its values)",
        example: "/// +kubebuilder:validation:Enum=Daily;Weekly",
    },
    Doc {
        name: "kubebuilder:validation:Format",
        args: "a format name, or `\"\"` for none",
        writes: "`format`; `\"\"` removes the one the Rust type writes (`int64` for `i64`)",
        example: "/// +kubebuilder:validation:Format=email",
    },
    Doc {
        name: "kubebuilder:validation:XValidation",
        args: "`rule=\"...\"` (required), `message=`, `messageExpression=`, `reason=`, `fieldPath=`",
        writes: "an `x-kubernetes-validations` CEL rule, type-checked against the Rust type when generated",
        example: "/// +kubebuilder:validation:XValidation:rule=\"self.minReplicas <= self.maxReplicas\",message=\"min over max\"",
    },
    Doc {
        name: "kubebuilder:validation:EmbeddedResource",
        args: "",
        writes: "`x-kubernetes-embedded-resource: true` (maps, structs, `serde_json::Value`)",
        example: "/// +kubebuilder:validation:EmbeddedResource",
    },
    Doc {
        name: "kubebuilder:validation:Optional",
        args: "",
        writes: "leaves the field out of its parent's `required` (as `+optional`)",
        example: "/// +kubebuilder:validation:Optional",
    },
    Doc {
        name: "kubebuilder:validation:Required",
        args: "",
        writes: "puts the field in its parent's `required` (as `+required`)",
        example: "/// +kubebuilder:validation:Required",
    },
    Doc {
        name: "kubebuilder:validation:Type",
        args: "an OpenAPI type",
        writes: "overrides the schema's `type`",
        example: "/// +kubebuilder:validation:Type=string",
    },
    Doc {
        name: "kubebuilder:validation:Schemaless",
        args: "",
        writes: "a schema of the field's description alone: its type is not looked into, and its other markers (`Type`, `XPreserveUnknownFields`, ...) say what it is",
        example: "/// +kubebuilder:validation:Schemaless",
    },
    Doc {
        name: "kubebuilder:validation:ExactlyOneOf",
        args: "the JSON names of optional fields of the struct, separated by `;`",
        writes: "an `x-kubernetes-validations` rule on the struct: exactly one of them is set (controller-gen's rule and message)",
        example: "/// +kubebuilder:validation:ExactlyOneOf=configMapRef;secretRef",
    },
    Doc {
        name: "kubebuilder:validation:AtMostOneOf",
        args: "the JSON names of optional fields of the struct, separated by `;`",
        writes: "an `x-kubernetes-validations` rule on the struct: at most one of them is set",
        example: "/// +kubebuilder:validation:AtMostOneOf=configMapRef;secretRef",
    },
    Doc {
        name: "kubebuilder:validation:AtLeastOneOf",
        args: "the JSON names of optional fields of the struct, separated by `;`",
        writes: "an `x-kubernetes-validations` rule on the struct: at least one of them is set",
        example: "/// +kubebuilder:validation:AtLeastOneOf=email;phone",
    },
    Doc {
        name: "kubebuilder:validation:XIntOrString",
        args: "",
        writes: "an int-or-string: `x-kubernetes-int-or-string: true`, `anyOf` integer/string, no `type`",
        example: "/// +kubebuilder:validation:XIntOrString",
    },
    Doc {
        name: "kubebuilder:validation:XPreserveUnknownFields",
        args: "",
        writes: "`x-kubernetes-preserve-unknown-fields: true`",
        example: "/// +kubebuilder:validation:XPreserveUnknownFields",
    },
    Doc {
        name: "kubebuilder:validation:XEmbeddedResource",
        args: "",
        writes: "`x-kubernetes-embedded-resource: true` (as `EmbeddedResource`)",
        example: "/// +kubebuilder:validation:XEmbeddedResource",
    },
    Doc {
        name: "kubebuilder:default",
        args: "JSON, or plain text for a string",
        writes: "`default`, typed like the field and checked against its own validations; `+default=<JSON>` is read as this marker",
        example: "/// +kubebuilder:default=3",
    },
    Doc {
        name: "k8s:immutable",
        args: "",
        writes: "`x-kubernetes-validations` `self == oldSelf` (\"field is immutable\") on the field and, for an optional field, `!has(oldSelf.f) || has(self.f)` on its struct",
        example: "/// +k8s:immutable",
    },
    Doc {
        name: "kubebuilder:title",
        args: "text",
        writes: "`title` (documentation only)",
        example: "/// +kubebuilder:title=\"Replica count\"",
    },
    Doc {
        name: "kubebuilder:example",
        args: "a value of the field's type, written as for `+kubebuilder:default`",
        writes: "`example` (documentation only; the API server does not check it)",
        example: "/// +kubebuilder:example=3",
    },
    Doc {
        name: "kubebuilder:externalDocs",
        args: "`url=` (http or https; `url=<https://...>` keeps rustdoc's bare-URL lint quiet), `description=`",
        writes: "`externalDocs` (documentation only)",
        example: "/// +kubebuilder:externalDocs:url=https://example.com/docs/widgets,description=\"Widgets\"",
    },
    Doc {
        name: "kubebuilder:pruning:PreserveUnknownFields",
        args: "",
        writes: "`x-kubernetes-preserve-unknown-fields: true` (maps, structs, `serde_json::Value`)",
        example: "/// +kubebuilder:pruning:PreserveUnknownFields",
    },
    Doc {
        name: "kubebuilder:printcolumn",
        args: "`name=`, `type=`, `JSONPath=` (checked against the struct), `description=`, `format=`, `priority=`",
        writes: "an `additionalPrinterColumns` entry of the version",
        example: "/// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=.status.ready",
    },
    Doc {
        name: "kubebuilder:resource",
        args: "`shortName=` (`;`-separated), `categories=`, `singular=`, `scope=`, `path=` (scope and path must agree with `#[kube]`)",
        writes: "the CRD's `names` and scope",
        example: "/// +kubebuilder:resource:shortName=fo;f,categories=all",
    },
    Doc {
        name: "kubebuilder:subresource:status",
        args: "",
        writes: "the status subresource (needs `#[kube(status = ...)]`)",
        example: "/// +kubebuilder:subresource:status",
    },
    Doc {
        name: "kubebuilder:subresource:scale",
        args: "`specpath=`, `statuspath=`, `selectorpath=`",
        writes: "the scale subresource, and the client's scale methods",
        example: "/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas",
    },
    Doc {
        name: "kubebuilder:selectablefield",
        args: "`JSONPath=` (checked against the struct)",
        writes: "a `selectableFields` entry: the field can be used in field selectors",
        example: "/// +kubebuilder:selectablefield:JSONPath=.spec.color",
    },
    Doc {
        name: "kubebuilder:storageversion",
        args: "",
        writes: "this version is the stored one of a multi-version kind",
        example: "/// +kubebuilder:storageversion",
    },
    Doc {
        name: "kube-codegen:conversion",
        args: "",
        writes: "(ours, on the storage version) the kind's versions convert through it: `generate` writes `conversion.rs`",
        example: "/// +kube-codegen:conversion",
    },
    Doc {
        name: "kube-codegen:consumed",
        args: "",
        writes: "(ours, on every version of a kind) nothing: the kind is someone else's API (`import` writes it), so it gets clients, listers, informers and apply configurations, and no CRD, docs, lint or conversion of ours",
        example: "/// +kube-codegen:consumed",
    },
    Doc {
        name: "kube-codegen:noStatusSubresource",
        args: "",
        writes: "(ours) with `#[kube(status = ...)]`, no status subresource: the status is a plain field, the client has no status verbs",
        example: "/// +kube-codegen:noStatusSubresource",
    },
    Doc {
        name: "kube-codegen:listKind",
        args: "a kind name",
        writes: "(ours) the CRD's `names.listKind`, when it is not `<Kind>List`",
        example: "/// +kube-codegen:listKind=BackupCollection",
    },
    Doc {
        name: "kube-codegen:rootRequired",
        args: "root properties separated by `;`",
        writes: "(ours) properties kube writes itself (`apiVersion`, `kind`, `metadata`, `status`) in the root schema's `required`",
        example: "/// +kube-codegen:rootRequired=metadata;kind",
    },
    Doc {
        name: "kube-codegen:compat:acknowledge",
        args: "a reason (required)",
        writes: "(ours) nothing in the CRD: `kube-codegen compat` still prints a breaking change at this field or struct, as acknowledged, and exits 0 for it",
        example: "/// +kube-codegen:compat:acknowledge=\"no release ever set it\"",
    },
    Doc {
        name: "kube-codegen:lint",
        args: "",
        writes: "(ours) nothing in the CRD: the derives report `kube-codegen lint`'s findings for this struct as compiler warnings",
        example: "/// +kube-codegen:lint",
    },
    Doc {
        name: "kube-codegen:lint:ignore",
        args: "a rule id and a reason (required)",
        writes: "(ours) nothing in the CRD: silences that lint rule at this field, or at every field of this struct",
        example: "/// +kube-codegen:lint:ignore=no-bools the API is frozen at v1",
    },
    Doc {
        name: "kubebuilder:skipversion",
        args: "",
        writes: "leaves this version out of the CRD",
        example: "/// +kubebuilder:skipversion",
    },
    Doc {
        name: "kubebuilder:unservedversion",
        args: "",
        writes: "`served: false` for this version",
        example: "/// +kubebuilder:unservedversion",
    },
    Doc {
        name: "kubebuilder:deprecatedversion",
        args: "optional `warning=\"...\"`",
        writes: "`deprecated: true` and the `deprecationWarning` of this version",
        example: "/// +kubebuilder:deprecatedversion:warning=\"use v1\"",
    },
    Doc {
        name: "kubebuilder:metadata:annotations",
        args: "`key=value`",
        writes: "an annotation of the CRD (a `*.k8s.io` group needs `api-approved.kubernetes.io`)",
        example: "/// +kubebuilder:metadata:annotations=\"api-approved.kubernetes.io=https://github.com/kubernetes/enhancements/pull/1111\"",
    },
    Doc {
        name: "kubebuilder:metadata:labels",
        args: "`key=value`",
        writes: "a label of the CRD",
        example: "/// +kubebuilder:metadata:labels=\"team=storage\"",
    },
    Doc {
        name: "kubebuilder:ac:generate",
        args: "`true` or `false`",
        writes: "apply configurations (typed server-side apply builders) for the kind, or in `//!` docs for every kind of the version",
        example: "/// +kubebuilder:ac:generate=true",
    },
    Doc {
        name: "optional",
        args: "",
        writes: "leaves the field out of `required` (needs `Option<_>` or `#[serde(default)]`); `+k8s:optional` is read as this marker",
        example: "/// +optional",
    },
    Doc {
        name: "required",
        args: "",
        writes: "puts the field in its parent's `required`; `+k8s:required` is read as this marker",
        example: "/// +required",
    },
    Doc {
        name: "nullable",
        args: "`true` or `false` (alone: `true`)",
        writes: "`nullable`; `+nullable=false` takes back the `nullable: true` of an `Option`",
        example: "/// +nullable=false",
    },
    Doc {
        name: "listType",
        args: "`atomic`, `set` or `map`",
        writes: "`x-kubernetes-list-type`; `+k8s:listType` is read as this marker",
        example: "/// +listType=map",
    },
    Doc {
        name: "listMapKey",
        args: "a field of the item struct (required or defaulted); repeat for several keys",
        writes: "`x-kubernetes-list-map-keys`; `+k8s:listMapKey` is read as this marker",
        example: "/// +listMapKey=type",
    },
    Doc {
        name: "mapType",
        args: "`atomic` or `granular`",
        writes: "`x-kubernetes-map-type`",
        example: "/// +mapType=atomic",
    },
    Doc {
        name: "structType",
        args: "`atomic` or `granular`",
        writes: "`x-kubernetes-map-type` of a struct",
        example: "/// +structType=atomic",
    },
    Doc {
        name: "genclient",
        args: "",
        writes: "a typed client, lister and informer for the kind (the derive implies it; the CLI requires it)",
        example: "/// +genclient",
    },
    Doc {
        name: "genclient:nonNamespaced",
        args: "",
        writes: "a cluster-scoped client; must agree with `#[kube(namespaced)]`",
        example: "/// +genclient:nonNamespaced",
    },
    Doc {
        name: "genclient:noStatus",
        args: "",
        writes: "no status verbs, even though the type has a status",
        example: "/// +genclient:noStatus",
    },
    Doc {
        name: "genclient:noVerbs",
        args: "",
        writes: "no verbs at all",
        example: "/// +genclient:noVerbs",
    },
    Doc {
        name: "genclient:readonly",
        args: "",
        writes: "only get, list and watch",
        example: "/// +genclient:readonly",
    },
    Doc {
        name: "genclient:onlyVerbs",
        args: "verbs separated by `,`",
        writes: "only these verbs",
        example: "/// +genclient:onlyVerbs=get,list",
    },
    Doc {
        name: "genclient:skipVerbs",
        args: "verbs separated by `,`",
        writes: "all verbs but these",
        example: "/// +genclient:skipVerbs=watch",
    },
    Doc {
        name: "genclient:method",
        args: "a method name, then `verb=` (create, update, get, list, patch, apply), `subresource=`, `input=`, `result=`",
        writes: "an extension method on the client",
        example: "/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale",
    },
    Doc {
        name: "resourceName",
        args: "the plural",
        writes: "nothing new: must match kube's plural",
        example: "/// +resourceName=foos",
    },
    Doc {
        name: "groupName",
        args: "the API group",
        writes: "nothing new: must match `#[kube(group)]`",
        example: "//! +groupName=samplecontroller.k8s.io",
    },
    Doc {
        name: "groupGoName",
        args: "a name",
        writes: "the name of the group accessor (`sample_controller_v1alpha1()`)",
        example: "//! +groupGoName=SampleController",
    },
    Doc {
        name: "kubebuilder:webhook",
        args: "controller-gen's keys: `path` or `url`, `mutating`, `failurePolicy`, `matchPolicy`, `sideEffects`, `timeoutSeconds`, `groups`, `resources`, `verbs`, `versions`, `name`, `serviceName`, `serviceNamespace`, `servicePort`, `admissionReviewVersions`, `reinvocationPolicy`, `webhookVersions`",
        writes: "one webhook of `manifests.yaml` (`kube-codegen webhooks`)",
        example: "// +kubebuilder:webhook:path=/validate-samplecontroller-k8s-io-v1alpha1-foo,mutating=false,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1alpha1,name=vfoo.samplecontroller.k8s.io,admissionReviewVersions=v1",
    },
    Doc {
        name: "kubebuilder:webhookconfiguration",
        args: "`mutating=`, `name=`",
        writes: "the name of the webhook configuration that holds the webhooks",
        example: "// +kubebuilder:webhookconfiguration:mutating=false,name=sample-controller-validating",
    },
    Doc {
        name: "kubebuilder:rbac",
        args: "`groups=`, `resources=`, `verbs=` (`;`-separated), `namespace=`, `resourceNames=`, `urls=`",
        writes: "a rule of the ClusterRole, or of a Role with `namespace=` (`kube-codegen rbac`)",
        example: "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update",
    },
    Doc {
        name: "kubebuilder:object:root",
        args: "",
        writes: "nothing: Go code generation",
        example: "// +kubebuilder:object:root=true",
    },
    Doc {
        name: "kubebuilder:object:generate",
        args: "",
        writes: "nothing: Go code generation",
        example: "// +kubebuilder:object:generate=true",
    },
    Doc {
        name: "kubebuilder:skip",
        args: "",
        writes: "nothing",
        example: "// +kubebuilder:skip",
    },
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn accepted_names() -> Vec<String> {
        accepted().into_iter().map(|a| a.name).collect()
    }

    #[test]
    fn the_reference_lists_exactly_the_markers_the_checker_accepts() {
        let accepted: BTreeSet<String> = accepted_names().into_iter().collect();
        let documented: BTreeSet<String> = DOCS.iter().map(|d| d.name.to_owned()).collect();
        let undocumented: Vec<_> = accepted.difference(&documented).collect();
        let unknown: Vec<_> = documented.difference(&accepted).collect();
        assert!(
            undocumented.is_empty() && unknown.is_empty(),
            "accepted but not documented: {undocumented:?}; documented but not accepted: {unknown:?}"
        );
        assert_eq!(documented.len(), DOCS.len(), "a marker documented twice");
    }

    #[test]
    fn every_accepted_marker_lands_in_exactly_one_section() {
        for name in accepted_names() {
            let sections = SECTIONS.iter().filter(|(_, b)| b(&name)).count();
            assert_eq!(sections, 1, "+{name} is in {sections} sections");
        }
        markdown().unwrap();
    }

    #[test]
    fn every_example_is_a_comment_naming_its_marker() {
        for doc in DOCS {
            let line = doc.example;
            assert!(line.starts_with("//"), "{line}");
            assert!(line.contains(&format!("+{}", doc.name)), "{line}");
        }
    }
}
