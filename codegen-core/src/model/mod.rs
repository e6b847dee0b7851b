//! The validated model of one resource: what its client looks like, independent of syntax.
//!
//! Built from the raw attributes of `crate::attr`; this is where Go's `+genclient` rules
//! and the cross-checks against `#[kube]` live. Both front ends emit from this model only.
//! `+genclient:method` extension methods are checked in `methods`.

mod methods;

use heck::ToSnakeCase;
use proc_macro2::Span;
use syn::{DeriveInput, Ident};

use crate::attr::genclient::{GenclientAttrs, VerbList};
use crate::attr::kube::{KubeAttrs, Spanned};
use crate::diag::{Ctxt, Loc, did_you_mean};
use crate::naming;

/// A client verb, in code-generator's generation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Verb {
    /// `create`.
    Create,
    /// `update` (a replace).
    Update,
    /// `updateStatus`.
    UpdateStatus,
    /// `delete`.
    Delete,
    /// `deleteCollection`.
    DeleteCollection,
    /// `get` (also gives `get_opt`).
    Get,
    /// `list`.
    List,
    /// `watch`.
    Watch,
    /// `patch`.
    Patch,
    /// `apply` (server-side apply).
    Apply,
    /// `applyStatus`.
    ApplyStatus,
}

impl Verb {
    /// Every verb, in generation order.
    pub(crate) const ALL: [Verb; 11] = [
        Verb::Create,
        Verb::Update,
        Verb::UpdateStatus,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Patch,
        Verb::Apply,
        Verb::ApplyStatus,
    ];

    /// The name in Go markers (`updateStatus`).
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::UpdateStatus => "updateStatus",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deleteCollection",
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Patch => "patch",
            Verb::Apply => "apply",
            Verb::ApplyStatus => "applyStatus",
        }
    }

    /// The name of the generated method (`update_status`).
    pub(crate) fn rust_name(self) -> &'static str {
        match self {
            Verb::UpdateStatus => "update_status",
            Verb::DeleteCollection => "delete_collection",
            Verb::ApplyStatus => "apply_status",
            other => other.go_name(),
        }
    }

    /// Parses a verb written in either style.
    pub(crate) fn parse(word: &str) -> Option<Verb> {
        Verb::ALL
            .into_iter()
            .find(|v| v.go_name() == word || v.rust_name() == word)
    }

    /// Whether the verb writes the status subresource.
    pub(crate) fn is_status(self) -> bool {
        matches!(self, Verb::UpdateStatus | Verb::ApplyStatus)
    }

    fn candidates() -> impl Iterator<Item = &'static str> {
        Verb::ALL
            .into_iter()
            .flat_map(|v| [v.go_name(), v.rust_name()])
    }
}

/// Whether the kind lives in namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `#[kube(namespaced)]`.
    Namespaced,
    /// Cluster-scoped.
    Cluster,
}

/// The verbs an extension method may use (Go's rule: not updateStatus, delete,
/// deleteCollection or watch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MethodVerb {
    /// `create`: `POST`.
    Create,
    /// `update`: `PUT`.
    Update,
    /// `get`: `GET` one object.
    Get,
    /// `list`: `GET` the collection.
    List,
    /// `patch`: `PATCH`.
    Patch,
    /// `apply`: server-side apply.
    Apply,
}

impl MethodVerb {
    /// The same verb as a [`Verb`].
    pub(crate) fn verb(self) -> Verb {
        match self {
            MethodVerb::Create => Verb::Create,
            MethodVerb::Update => Verb::Update,
            MethodVerb::Get => Verb::Get,
            MethodVerb::List => Verb::List,
            MethodVerb::Patch => Verb::Patch,
            MethodVerb::Apply => Verb::Apply,
        }
    }

    fn from_verb(verb: Verb) -> Option<Self> {
        [
            Self::Create,
            Self::Update,
            Self::Get,
            Self::List,
            Self::Patch,
            Self::Apply,
        ]
        .into_iter()
        .find(|m| m.verb() == verb)
    }
}

/// A `+genclient:method` extension method, validated.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    /// The Rust method name (`get_scale`).
    pub(crate) name: Ident,
    /// What it does on the wire.
    pub(crate) verb: MethodVerb,
    /// `subresource=`, if any.
    pub(crate) subresource: Option<String>,
    /// `input=`; the resource type when absent.
    pub(crate) input: Option<syn::Type>,
    /// `result=`; the resource type when absent.
    pub(crate) result: Option<syn::Type>,
    /// Single-name types the method refers to (the CLI imports them from the API module).
    pub(crate) local_types: Vec<Ident>,
}

/// One resource's client, validated.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The visibility of the spec struct, which kube gives the generated type too.
    pub(crate) vis: syn::Visibility,
    /// The Rust type kube generates (`Foo`; `root` when set).
    pub(crate) ident: Ident,
    /// The annotated spec struct (`FooSpec`).
    pub(crate) spec_ident: Ident,
    /// Where the spec struct is named, for diagnostics that concern the whole type.
    pub span: Span,
    /// API group.
    pub(crate) group: String,
    /// API version.
    pub(crate) version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name (the REST path segment).
    pub(crate) plural: String,
    /// Namespaced or cluster-scoped.
    pub(crate) scope: Scope,
    /// Whether `#[kube(status)]` is set: the object has a `status` field.
    pub(crate) has_status: bool,
    /// Whether the CRD has the status subresource, which the status verbs use: with a
    /// status, unless `+kube-codegen:noStatusSubresource` makes it a plain field.
    pub(crate) status_subresource: bool,
    /// Whether `#[kube(scale)]` is set.
    pub(crate) has_scale: bool,
    /// The status type `apply_status` takes, when the resource has a status.
    pub(crate) status_type: Option<syn::Type>,
    /// A built-in kind from k8s-openapi (declared with a type alias), not a CRD.
    pub(crate) builtin: bool,
    /// `+kubebuilder:storageversion`: the version stored when a kind has several.
    pub(crate) storage_version: bool,
    /// `+kube-codegen:conversion` (on the storage version): the kind's versions convert
    /// through it, and `conversion.rs` wires them.
    pub(crate) conversion: bool,
    /// `+kube-codegen:consumed`: the kind is someone else's API (imported from their CRD):
    /// it gets clients, listers, informers and apply configurations, but its CRD is not
    /// ours to build, install, convert, document or lint.
    pub(crate) consumed: bool,
    /// `+kubebuilder:ac:generate=true` (on the type or, with the CLI, its package), or a
    /// built-in kind: an apply configuration and typed `apply` are generated.
    pub(crate) apply_configuration: bool,
    /// The verbs to generate, in generation order.
    pub(crate) verbs: Vec<Verb>,
    /// `#[kube(...)]` as written, parsed once here: later stages (paths, CRD markers,
    /// apply configurations) read it from the resource rather than parse it again.
    pub(crate) kube: KubeAttrs,
    /// Extension methods, in the order written.
    pub(crate) methods: Vec<Method>,
}

impl Resource {
    /// Whether the client has `verb`.
    pub(crate) fn has(&self, verb: Verb) -> bool {
        self.verbs.contains(&verb)
    }

    /// Whether an informer and lister are generated: they need list and watch, as in Go.
    pub(crate) fn has_informer(&self) -> bool {
        self.has(Verb::List) && self.has(Verb::Watch)
    }

    /// `FooInformer`.
    pub(crate) fn informer_ident(&self) -> Ident {
        naming::ident(&format!("{}Informer", self.ident))
    }

    /// `FooLister`.
    pub(crate) fn lister_ident(&self) -> Ident {
        naming::ident(&format!("{}Lister", self.ident))
    }

    /// `FooNamespaceLister`.
    pub(crate) fn namespace_lister_ident(&self) -> Ident {
        naming::ident(&format!("{}NamespaceLister", self.ident))
    }

    /// The name of the generated client type (`FooClient`).
    pub(crate) fn client_ident(&self) -> Ident {
        naming::ident(&format!("{}Client", self.ident))
    }

    /// `FooVerbs`: the client's verb set, marked with the runtime's `verbs` traits.
    pub(crate) fn verbs_ident(&self) -> Ident {
        naming::ident(&format!("{}Verbs", self.ident))
    }

    /// The snake-case accessor in the group client (`foos`).
    pub(crate) fn accessor(&self) -> String {
        self.plural.to_snake_case()
    }
}

/// Which front end is reading, which decides whether `+genclient` is required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `#[derive(GenClient)]`: the derive itself asks for a client.
    Derive,
    /// The CLI: only types marked `+genclient` (or `#[genclient]`) get a client.
    Cli,
}

/// Reads and validates one annotated spec type. `Ok(None)` means the CLI should skip it.
pub(crate) fn resource_from_input(
    cx: &mut Ctxt,
    input: &DeriveInput,
    origin: Origin,
) -> Option<Resource> {
    let kube = KubeAttrs::from_attrs(cx, &input.attrs);
    let genclient = GenclientAttrs::from_attrs(cx, &input.attrs);
    if origin == Origin::Cli && genclient.enabled.is_none() {
        if let Some(loc) = &genclient.first_option {
            cx.error_at(loc, "`+genclient:...` options need `+genclient` too; add `/// +genclient` above the type");
        }
        return None;
    }
    if let syn::Data::Union(u) = &input.data {
        cx.error(
            u.union_token.span,
            "`GenClient` does not support unions; the spec must be a struct or an enum",
        );
        return None;
    }
    let span = input.ident.span();
    let Some(kube_span) = kube.span else {
        cx.error(
            span,
            "missing `#[kube(group = \"...\", version = \"...\", kind = \"...\")]`; clients are generated for `#[derive(CustomResource)]` types",
        );
        return None;
    };
    let mut missing = |key: &str| {
        cx.error(
            kube_span,
            format!("missing `{key}` in `#[kube(...)]`; add `{key} = \"...\"`"),
        );
    };
    let (Some(group), Some(version), Some(kind)) = (&kube.group, &kube.version, &kube.kind) else {
        for (key, v) in [
            ("group", &kube.group),
            ("version", &kube.version),
            ("kind", &kube.kind),
        ] {
            if v.is_none() {
                missing(key);
            }
        }
        return None;
    };
    check_group_version(cx, group, version);
    let ident = type_ident(cx, &kube, kind)?;
    let plural = plural(cx, &kube, kind);
    let has_status = kube.status.is_some();
    let status_subresource = has_status && !has_marker(&input.attrs, NO_STATUS_SUBRESOURCE);
    // `+kubebuilder:subresource:scale` alone gives the scale methods too.
    let has_scale =
        kube.scale.is_some() || has_marker(&input.attrs, "+kubebuilder:subresource:scale");
    if let (Some(scale), false) = (&kube.scale, has_status) {
        cx.error(
            scale.span.unwrap_or(kube_span),
            "`scale` needs `status`: kube drops the scale subresource of a resource without status; add `status = \"...\"` to `#[kube]`",
        );
    }
    let scope = if kube.namespaced.is_some() {
        Scope::Namespaced
    } else {
        Scope::Cluster
    };
    if let (Some(loc), Scope::Namespaced) = (&genclient.non_namespaced, scope) {
        cx.error_at(
            loc,
            "`+genclient:nonNamespaced` contradicts `namespaced` in `#[kube]`; remove one of them",
        );
    }
    if let Some(rn) = &genclient.resource_name
        && rn.value != plural
    {
        cx.error_at(
            &rn.loc,
            format!(
                "`+resourceName={}` does not match the plural `{plural}` that `#[kube]` gives; set `plural = \"{}\"` in `#[kube(...)]`",
                rn.value, rn.value
            ),
        );
    }

    let resource = Resource {
        vis: input.vis.clone(),
        status_type: has_status
            .then(|| syn::parse_quote!(<#ident as ::kube::core::object::HasStatus>::Status)),
        ident,
        spec_ident: input.ident.clone(),
        span,
        group: group.value.clone(),
        version: version.value.clone(),
        kind: kind.value.clone(),
        plural,
        scope,
        has_status,
        status_subresource,
        has_scale: has_scale && has_status,
        builtin: false,
        storage_version: storage_version_marker(&input.attrs),
        conversion: has_marker(&input.attrs, "+kube-codegen:conversion"),
        consumed: has_marker(&input.attrs, "+kube-codegen:consumed"),
        apply_configuration: has_marker(&input.attrs, "+kubebuilder:ac:generate=true"),
        verbs: Vec::new(),
        methods: Vec::new(),
        kube: kube.clone(),
    };
    Some(complete(cx, resource, &genclient, origin))
}

/// `group` is a DNS name with a dot and `version` a Kubernetes API version, as
/// kube-apiserver wants them.
fn check_group_version(cx: &mut Ctxt, group: &Spanned<String>, version: &Spanned<String>) {
    if !naming::is_dns_subdomain(&group.value) {
        cx.error(
            group.span,
            format!(
                "group `{}` is not a lowercase DNS name; use the form `example.com`",
                group.value
            ),
        );
    } else if !group.value.contains('.') {
        cx.error(
            group.span,
            format!(
                "group `{0}` has no dot: kube-apiserver refuses the CRD (`spec.group: Invalid value: \"{0}\": should be a domain with at least one dot`); use a domain you control, e.g. `{0}.example.com`",
                group.value
            ),
        );
    }
    if !naming::is_kube_version(&version.value) {
        cx.error(
            version.span,
            format!(
                "version `{}` is not a Kubernetes API version; use the form `v1`, `v1beta1` or `v1alpha1`",
                version.value
            ),
        );
    }
}

/// The Rust type kube generates (`root`, or the kind): a name to which `Client`, `Lister`...
/// can be appended, or `None` (reported).
fn type_ident(cx: &mut Ctxt, kube: &KubeAttrs, kind: &Spanned<String>) -> Option<Ident> {
    let type_name = kube.root.as_ref().unwrap_or(kind);
    // A type name to which `Client`, `Lister`... can be appended: no keyword, no `r#`.
    let plain = naming::module_segment(&type_name.value).is_ok_and(|s| !s.starts_with("r#"));
    let parsed = plain.then(|| Ident::new(&type_name.value, proc_macro2::Span::call_site()));
    if parsed.is_none() {
        cx.error(
            type_name.span,
            format!(
                "`{}` is not a valid Rust type name (letters, digits and `_`, not a keyword or a raw identifier); kube names the type after the kind",
                type_name.value
            ),
        );
    }
    parsed
}

/// The plural resource name: `plural`, or the singular's plural; checked as a resource name.
fn plural(cx: &mut Ctxt, kube: &KubeAttrs, kind: &Spanned<String>) -> String {
    let singular = kube
        .singular
        .as_ref()
        .map_or_else(|| kind.value.to_ascii_lowercase(), |s| s.value.clone());
    let plural = kube
        .plural
        .as_ref()
        .map_or_else(|| naming::plural_of(&singular), |p| p.value.clone());
    let plural_span = kube.plural.as_ref().map_or(kind.span, |p| p.span);
    if !naming::is_plural_name(&plural) {
        cx.error(
            plural_span,
            format!("plural `{plural}` is not a lowercase resource name; set `plural = \"...\"` in `#[kube(...)]` to letters and digits, starting with a letter"),
        );
    }
    plural
}

/// The marker that keeps a status a plain field: the CRD gets no status subresource and
/// the client no status verbs (what a CRD with a `status` property and no `subresources`
/// says).
pub(crate) const NO_STATUS_SUBRESOURCE: &str = "+kube-codegen:noStatusSubresource";

/// Whether the doc comments carry `+kubebuilder:storageversion`.
fn storage_version_marker(attrs: &[syn::Attribute]) -> bool {
    has_marker(attrs, "+kubebuilder:storageversion")
}

/// Whether a doc marker is `marker`, alone or followed by `:` arguments.
fn has_marker(attrs: &[syn::Attribute], marker: &str) -> bool {
    let mut found = false;
    crate::attr::genclient::for_each_marker(attrs, |text, _| {
        found |= text == marker
            || text
                .strip_prefix(marker)
                .is_some_and(|r| r.starts_with(':'))
    });
    found
}

/// Applies the `+genclient` verb options and extension methods to a resource's identity.
pub(crate) fn complete(
    cx: &mut Ctxt,
    mut resource: Resource,
    genclient: &GenclientAttrs,
    origin: Origin,
) -> Resource {
    resource.verbs = select_verbs(cx, genclient, &resource);
    let mut taken = methods::generated_method_names(&resource);
    for m in &genclient.methods {
        if let Some(method) = methods::method_from_attr(cx, m, &resource, &mut taken, origin) {
            resource.methods.push(method);
        }
    }
    resource
}

/// Applies `noVerbs`, `readonly`, `onlyVerbs`, `skipVerbs` and `noStatus`, with Go's rules.
fn select_verbs(cx: &mut Ctxt, g: &GenclientAttrs, r: &Resource) -> Vec<Verb> {
    if let Some(no_verbs) = &g.no_verbs {
        let others = [
            g.readonly.as_ref().map(|_| "readonly"),
            g.only_verbs.as_ref().map(|_| "onlyVerbs"),
            g.skip_verbs.as_ref().map(|_| "skipVerbs"),
        ];
        for other in others.into_iter().flatten() {
            cx.error_at(
                no_verbs,
                format!(
                    "`+genclient:noVerbs` conflicts with `+genclient:{other}`; keep one of them"
                ),
            );
        }
    }
    if let (Some(readonly), Some(_)) = (&g.readonly, &g.only_verbs) {
        cx.error_at(
            readonly,
            "`+genclient:readonly` already means `onlyVerbs=get,list,watch`; keep one of them",
        );
    }
    let only = g
        .only_verbs
        .as_ref()
        .map(|l| parse_verb_list(cx, l, "onlyVerbs"));
    let skip = g
        .skip_verbs
        .as_ref()
        .map(|l| parse_verb_list(cx, l, "skipVerbs"))
        .unwrap_or_default();
    if let Some(only) = &only {
        for (verb, loc) in &skip {
            if only.iter().any(|(v, _)| v == verb) {
                cx.error_at(
                    loc,
                    format!(
                        "verb `{}` is in both `onlyVerbs` and `skipVerbs`; remove it from one",
                        verb.go_name()
                    ),
                );
            }
        }
        for (verb, loc) in only {
            if verb.is_status() && !r.status_subresource {
                cx.error_at(
                    loc,
                    format!(
                        "verb `{}` needs a status subresource; {}",
                        verb.go_name(),
                        no_status_subresource_fix(r)
                    ),
                );
            }
        }
    }
    if g.no_verbs.is_some() {
        return Vec::new();
    }
    let base: Vec<Verb> = match (&only, &g.readonly) {
        (Some(only), _) => only.iter().map(|(v, _)| *v).collect(),
        (None, Some(_)) => vec![Verb::Get, Verb::List, Verb::Watch],
        (None, None) => Verb::ALL.to_vec(),
    };
    let mut verbs: Vec<Verb> = base
        .into_iter()
        .filter(|v| !skip.iter().any(|(s, _)| s == v))
        .filter(|v| !v.is_status() || (r.status_subresource && g.no_status.is_none()))
        .collect();
    verbs.sort();
    verbs.dedup();
    verbs
}

/// What gives `r` the status subresource it lacks.
pub(crate) fn no_status_subresource_fix(r: &Resource) -> String {
    if r.has_status {
        format!("`{NO_STATUS_SUBRESOURCE}` leaves it out; remove that marker")
    } else {
        "add `status = \"...\"` to `#[kube]`".to_owned()
    }
}

fn parse_verb_list(cx: &mut Ctxt, list: &VerbList, what: &str) -> Vec<(Verb, Loc)> {
    if list.verbs.is_empty() {
        cx.error_at(
            &list.loc,
            format!("`+genclient:{what}` needs at least one verb; use `+genclient:noVerbs` for a client without verbs"),
        );
    }
    let mut out: Vec<(Verb, Loc)> = Vec::new();
    for word in &list.verbs {
        match Verb::parse(&word.value) {
            Some(verb) if out.iter().any(|(v, _)| *v == verb) => {
                cx.error_at(&word.loc, format!("verb `{}` is listed twice", word.value));
            }
            Some(verb) => out.push((verb, word.loc.clone())),
            None => cx.error_at(
                &word.loc,
                format!(
                    "unknown verb `{}`{}",
                    word.value,
                    did_you_mean(&word.value, Verb::candidates())
                ),
            ),
        }
    }
    out
}
