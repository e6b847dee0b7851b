//! Foo's admission webhooks: defaulting and validation, served by the runtime's
//! `WebhookServer` and declared by the markers below (`kube-codegen webhooks` writes
//! `artifacts/webhooks/manifests.yaml` from them). The same server answers Foo's conversion
//! between v1alpha1 and v1beta1 (`generated::conversion`).
//!
//! - Defaulting: an empty `deploymentName` becomes the Foo's own name.
//! - Validation: a `deploymentName` naming a Deployment that exists and is not controlled
//!   by this Foo is refused at once, where the controller could only report it afterwards
//!   with an `ErrResourceExists` event.
//
// +kubebuilder:webhook:path=/mutate-samplecontroller-k8s-io-v1alpha1-foo,mutating=true,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1alpha1,name=mfoo.samplecontroller.k8s.io,admissionReviewVersions=v1,serviceName=sample-controller-webhook,serviceNamespace=default
// +kubebuilder:webhook:path=/validate-samplecontroller-k8s-io-v1alpha1-foo,mutating=false,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1alpha1,name=vfoo.samplecontroller.k8s.io,admissionReviewVersions=v1,serviceName=sample-controller-webhook,serviceNamespace=default
// +kubebuilder:webhookconfiguration:mutating=true,name=sample-controller
// +kubebuilder:webhookconfiguration:mutating=false,name=sample-controller
//
// The self-managed serving certificate (`run::WEBHOOK_CERT_SECRET`): its Secret, and the CA
// injected into the configurations above and Foo's conversion.
// RBAC cannot limit `create` or the watch's `list` to one name: the Secrets rule is the
// namespace's; the others name the sample's objects.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update,namespace=default
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;patch,resourceNames=sample-controller
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames=foos.samplecontroller.k8s.io

use kube::ResourceExt;
use kube_codegen_runtime::webhook::{
    Defaulter, Denial, Request, Validator, Warnings, WebhookServer, mutate_path, validate_path,
};

use crate::apis::samplecontroller::v1alpha1::Foo;
use crate::controller::controller_of;
use crate::generated::apps::v1::DeploymentLister;

/// The Foo webhooks, reading Deployments from the shared informer's cache.
#[derive(Clone, Debug)]
pub struct FooWebhook {
    /// Deployment cache.
    pub deployments: DeploymentLister,
}

impl Defaulter<Foo> for FooWebhook {
    async fn default(&self, foo: &mut Foo, _: &Request<'_>) -> Result<Warnings, Denial> {
        if foo.spec.deployment_name.is_empty() {
            foo.spec.deployment_name = foo.name_any();
        }
        Ok(Warnings::new())
    }
}

impl FooWebhook {
    /// Refuses a `deploymentName` that names a Deployment this Foo does not control.
    fn check(&self, foo: &Foo, req: &Request<'_>) -> Result<Warnings, Denial> {
        let name = &foo.spec.deployment_name;
        let namespace = req.namespace().unwrap_or_default();
        let Ok(deployment) = self.deployments.deployments(namespace).get(name) else {
            return Ok(Warnings::new());
        };
        // A Foo being created has no uid yet: a Deployment left by an earlier Foo of the
        // same name is its own.
        let ours = controller_of::<Foo>(&*deployment).is_some_and(|owner| match foo.uid() {
            Some(uid) => owner.uid == uid,
            None => owner.name == foo.name_any(),
        });
        if ours {
            return Ok(Warnings::new());
        }
        Err(Denial::new(format!(
            "spec.deploymentName: Deployment \"{name}\" already exists and is not managed by Foo \"{}\"",
            foo.name_any()
        )))
    }
}

impl Validator<Foo> for FooWebhook {
    async fn validate_create(&self, foo: &Foo, req: &Request<'_>) -> Result<Warnings, Denial> {
        self.check(foo, req)
    }

    async fn validate_update(
        &self,
        old: &Foo,
        new: &Foo,
        req: &Request<'_>,
    ) -> Result<Warnings, Denial> {
        if old.spec.deployment_name == new.spec.deployment_name {
            return Ok(Warnings::new());
        }
        self.check(new, req)
    }
}

/// The server of both webhooks, at the paths of the markers above.
pub fn server(webhook: FooWebhook) -> WebhookServer {
    WebhookServer::new()
        .defaulting::<Foo, _>(mutate_path::<Foo>(), webhook.clone())
        .validating::<Foo, _>(validate_path::<Foo>(), webhook)
}

/// Foo's CRD, whose conversion between v1alpha1 and v1beta1 the server answers.
pub const FOO_CRD: &str = "foos.samplecontroller.k8s.io";

/// The configurations `kube-codegen webhooks` wrote from the markers above.
pub const MANIFESTS: &str = include_str!("../artifacts/webhooks/manifests.yaml");
