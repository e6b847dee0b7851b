//! Built-in kinds: `/// +genclient` on a type alias of a k8s-openapi type gives it the same
//! typed client, informer and lister as a CRD, in the same clientset and factory.
//!
//! ```text
//! /// +genclient
//! pub type Deployment = k8s_openapi::api::apps::v1::Deployment;
//! ```

use proc_macro2::Span;
use quote::ToTokens;
use syn::ItemType;

use crate::attr::genclient::GenclientAttrs;
use crate::diag::{Ctxt, did_you_mean};
use crate::model::{self, Origin, Resource, Scope};

/// `(module group, version, kind, API group, plural, namespaced, status, scale)`.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    bool,
    bool,
);

/// The built-in kinds, one line each. A kind added here gets clients through `+genclient`
/// aliases and, once `hack/update-codegen.sh` has run, apply configurations shipped in the
/// runtime (its shape must be in `apiserver-rules`' table, `hack/builtin-types.py`).
#[rustfmt::skip]
const KINDS: &[Row] = &[
    // (module group, version, kind, API group, plural, namespaced, status, scale)
    ("core", "v1", "Namespace", "", "namespaces", false, true, false),
    ("core", "v1", "Pod", "", "pods", true, true, false),
    ("core", "v1", "Service", "", "services", true, true, false),
    ("core", "v1", "ConfigMap", "", "configmaps", true, false, false),
    ("core", "v1", "Secret", "", "secrets", true, false, false),
    ("core", "v1", "Event", "", "events", true, false, false),
    ("core", "v1", "Node", "", "nodes", false, true, false),
    ("core", "v1", "ServiceAccount", "", "serviceaccounts", true, false, false),
    ("core", "v1", "Endpoints", "", "endpoints", true, false, false),
    ("core", "v1", "PersistentVolumeClaim", "", "persistentvolumeclaims", true, true, false),
    ("apps", "v1", "Deployment", "apps", "deployments", true, true, true),
    ("apps", "v1", "ReplicaSet", "apps", "replicasets", true, true, true),
    ("apps", "v1", "DaemonSet", "apps", "daemonsets", true, true, false),
    ("apps", "v1", "StatefulSet", "apps", "statefulsets", true, true, true),
    ("batch", "v1", "Job", "batch", "jobs", true, true, false),
    ("batch", "v1", "CronJob", "batch", "cronjobs", true, true, false),
    ("events", "v1", "Event", "events.k8s.io", "events", true, false, false),
    ("coordination", "v1", "Lease", "coordination.k8s.io", "leases", true, false, false),
    ("rbac", "v1", "Role", "rbac.authorization.k8s.io", "roles", true, false, false),
    ("rbac", "v1", "RoleBinding", "rbac.authorization.k8s.io", "rolebindings", true, false, false),
    ("rbac", "v1", "ClusterRole", "rbac.authorization.k8s.io", "clusterroles", false, false, false),
    ("rbac", "v1", "ClusterRoleBinding", "rbac.authorization.k8s.io", "clusterrolebindings", false, false, false),
    ("networking", "v1", "Ingress", "networking.k8s.io", "ingresses", true, true, false),
    ("networking", "v1", "IngressClass", "networking.k8s.io", "ingressclasses", false, false, false),
    ("networking", "v1", "NetworkPolicy", "networking.k8s.io", "networkpolicies", true, false, false),
    ("policy", "v1", "PodDisruptionBudget", "policy", "poddisruptionbudgets", true, true, false),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "autoscaling", "horizontalpodautoscalers", true, true, false),
    ("discovery", "v1", "EndpointSlice", "discovery.k8s.io", "endpointslices", true, false, false),
    ("scheduling", "v1", "PriorityClass", "scheduling.k8s.io", "priorityclasses", false, false, false),
];

/// The resource a `+genclient` type alias declares, or `None` when the alias is not marked.
pub(crate) fn resource_from_alias(cx: &mut Ctxt, item: &ItemType) -> Option<Resource> {
    let genclient = GenclientAttrs::from_attrs(cx, &item.attrs);
    if genclient.enabled.is_none() {
        if let Some(loc) = &genclient.first_option {
            cx.error_at(loc, "`+genclient:...` options need `+genclient` too; add `/// +genclient` above the type");
        }
        return None;
    }
    let span = item.ident.span();
    let syn::Type::Path(target) = &*item.ty else {
        cx.error(span, "a `+genclient` type alias must name a k8s-openapi type, such as `k8s_openapi::api::apps::v1::Deployment`");
        return None;
    };
    let segs: Vec<String> = target
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let target_span = target
        .path
        .segments
        .first()
        .map_or(span, |s| s.ident.span());
    let (module, version, kind) = match segs.as_slice() {
        [k, api, module, version, kind] if k == "k8s_openapi" && api == "api" => {
            (module.as_str(), version.as_str(), kind.as_str())
        }
        _ => {
            cx.error(
                target_span,
                format!(
                    "`{}` is not a k8s-openapi built-in kind; write `k8s_openapi::api::<group>::<version>::<Kind>`",
                    target.to_token_stream().to_string().replace(' ', "")
                ),
            );
            return None;
        }
    };
    let Some(row) = KINDS
        .iter()
        .find(|r| r.0 == module && r.1 == version && r.2 == kind)
    else {
        let known: Vec<String> = KINDS
            .iter()
            .map(|r| format!("{}::{}::{}", r.0, r.1, r.2))
            .collect();
        cx.error(
            target_span,
            format!(
                "kube-codegen does not know the built-in kind `{module}::{version}::{kind}`{}",
                did_you_mean(
                    &format!("{module}::{version}::{kind}"),
                    known.iter().map(String::as_str)
                )
            ),
        );
        return None;
    };
    if let (Some(loc), true) = (&genclient.non_namespaced, row.5) {
        cx.error_at(
            loc,
            format!(
                "`+genclient:nonNamespaced` contradicts `{kind}`, which is namespaced; remove it"
            ),
        );
    }
    let resource = resource(row, item.vis.clone(), item.ident.clone(), span);
    Some(model::complete(cx, resource, &genclient, Origin::Cli))
}

/// The resource of the kind in `row`, named `ident` (before the `+genclient` rules pick
/// its verbs).
fn resource(row: &Row, vis: syn::Visibility, ident: syn::Ident, span: Span) -> Resource {
    let &(module, version, kind, group, plural, namespaced, status, scale) = row;
    let status_type: Option<syn::Type> = status
        .then(|| {
            syn::parse_str(&format!(
                "::k8s_openapi::api::{module}::{version}::{kind}Status"
            ))
            .ok()
        })
        .flatten();
    Resource {
        vis,
        ident,
        spec_ident: crate::naming::ident(kind),
        span,
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
        apply_configuration: false,
        plural: plural.to_owned(),
        scope: if namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        },
        has_status: status,
        status_subresource: status,
        has_scale: scale,
        status_type,
        builtin: true,
        storage_version: false,
        conversion: false,
        consumed: false,
        verbs: Vec::new(),
        methods: Vec::new(),
        kube: Default::default(),
    }
}

/// Every built-in kind of the table, as a public alias named after the kind declares it:
/// the kinds whose apply configurations the runtime ships.
pub(crate) fn known_kinds() -> Vec<Resource> {
    KINDS
        .iter()
        .map(|row| {
            let vis = syn::parse_quote!(pub);
            resource(row, vis, crate::naming::ident(row.2), Span::call_site())
        })
        .collect()
}

/// The Go-style module group of a built-in API group (`events.k8s.io` -> `events`), which
/// names its accessors (`core_v1()`, `apps_v1()`, `events_v1()`).
pub(crate) fn module_group(group: &str) -> Option<&'static str> {
    KINDS.iter().find(|r| r.3 == group).map(|r| r.0)
}
