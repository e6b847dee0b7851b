//! Namespaces as a cluster keeps them: a `kube-root-ca.crt` ConfigMap and a `default`
//! ServiceAccount in each (kube-controller-manager puts them there and back), the name
//! label and `kubernetes` finalizer, and deletion that empties the namespace, honours the
//! finalizers of its content, reports what remains and then removes it.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use serde_json::json;

use crate::env::{RUN_LABEL, case, configmap, eventually, run_id, status};

#[tokio::test]
async fn every_namespace_has_a_root_ca_configmap_and_a_default_service_account() {
    case("ns-defaults", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let sas: Api<ServiceAccount> = env.api();
        let ca = eventually("kube-root-ca.crt appears", || async {
            cms.get_opt("kube-root-ca.crt").await.unwrap()
        })
        .await;
        assert!(ca.data.as_ref().unwrap().contains_key("ca.crt"));
        assert!(
            ca.annotations()["kubernetes.io/description"]
                .starts_with("Contains a CA bundle that can be used to verify the kube-apiserver")
        );
        eventually("the default ServiceAccount appears", || async {
            sas.get_opt("default").await.unwrap()
        })
        .await;

        // Deleted: put back, as a new object.
        let uid = ca.uid().unwrap();
        cms.delete("kube-root-ca.crt", &DeleteParams::default())
            .await
            .unwrap();
        eventually("kube-root-ca.crt comes back", || async {
            let again = cms.get_opt("kube-root-ca.crt").await.unwrap()?;
            (again.uid().unwrap() != uid).then_some(())
        })
        .await;
        // Its data changed: put back.
        cms.patch(
            "kube-root-ca.crt",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"extra": "x"}})),
        )
        .await
        .unwrap();
        eventually("kube-root-ca.crt's data is reverted", || async {
            let again = cms.get("kube-root-ca.crt").await.unwrap();
            let keys: Vec<String> = again.data.unwrap().into_keys().collect();
            (keys == ["ca.crt"]).then_some(())
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn a_namespace_carries_its_name_label_and_the_kubernetes_finalizer() {
    case("ns-shape", |env| async move {
        let namespaces: Api<Namespace> = Api::all(env.client.clone());
        let ns = namespaces.get(&env.ns).await.unwrap();
        assert_eq!(ns.labels()["kubernetes.io/metadata.name"], env.ns);
        assert_eq!(
            ns.spec.unwrap().finalizers,
            Some(vec!["kubernetes".to_owned()])
        );
        assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
        // The label cannot be changed, and spec.finalizers only through `finalize`.
        let patched = namespaces
            .patch(
                &env.ns,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"kubernetes.io/metadata.name": "other"}}, "spec": {"finalizers": []}})),
            )
            .await
            .unwrap();
        assert_eq!(patched.labels()["kubernetes.io/metadata.name"], env.ns);
        assert_eq!(
            patched.spec.unwrap().finalizers,
            Some(vec!["kubernetes".to_owned()])
        );
    })
    .await;
}

#[tokio::test]
async fn deleting_a_namespace_empties_it_and_waits_for_finalizers() {
    case("ns-delete", |env| async move {
        let namespaces: Api<Namespace> = Api::all(env.client.clone());
        let name = env.unique("ct-doomed");
        env.delete_later(ApiResource::erase::<Namespace>(&()), &name);
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.clone());
        ns.metadata.labels = Some([(RUN_LABEL.to_owned(), run_id().to_owned())].into());
        namespaces.create(&PostParams::default(), &ns).await.unwrap();
        let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
        let mut held = configmap("held", &[]);
        held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        cms.create(&PostParams::default(), &held).await.unwrap();
        cms.create(&PostParams::default(), &configmap("plain", &[]))
            .await
            .unwrap();

        let deleting = namespaces
            .delete(&name, &DeleteParams::default())
            .await
            .unwrap()
            .left()
            .expect("the namespace, terminating");
        assert!(deleting.metadata.deletion_timestamp.is_some());
        assert_eq!(
            deleting.status.unwrap().phase.as_deref(),
            Some("Terminating")
        );

        // Nothing new goes into a terminating namespace.
        let s = status(
            cms.create(&PostParams::default(), &configmap("late", &[]))
                .await
                .unwrap_err(),
        );
        assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
        assert_eq!(
            s.message,
            format!("configmaps \"late\" is forbidden: unable to create new content in namespace {name} because it is being terminated")
        );
        assert_eq!(
            crate::env::causes(&s),
            [("NamespaceTerminating".to_owned(), "metadata.namespace".to_owned())]
        );
        // Nor a namespace of the same name.
        let s = status(namespaces.create(&PostParams::default(), &ns).await.unwrap_err());
        assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
        assert_eq!(
            s.message,
            format!("object is being deleted: namespaces \"{name}\" already exists")
        );

        // The content without finalizers goes; the held ConfigMap is marked and reported.
        let conditions = eventually("the namespace reports what remains", || async {
            let ns = namespaces.get(&name).await.ok()?;
            let conditions = ns.status?.conditions?;
            conditions
                .iter()
                .any(|c| c.type_ == "NamespaceFinalizersRemaining" && c.status == "True")
                .then_some(conditions)
        })
        .await;
        let message = |t: &str| {
            conditions
                .iter()
                .find(|c| c.type_ == t)
                .and_then(|c| c.message.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            message("NamespaceContentRemaining"),
            "Some resources are remaining: configmaps. has 1 resource instances"
        );
        assert_eq!(
            message("NamespaceFinalizersRemaining"),
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        );
        assert!(cms.get_opt("plain").await.unwrap().is_none());
        let held = cms.get("held").await.unwrap();
        assert!(held.metadata.deletion_timestamp.is_some());

        cms.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
        eventually("the namespace goes once its content is gone", || async {
            namespaces.get_opt(&name).await.unwrap().is_none().then_some(())
        })
        .await;
    })
    .await;
}
