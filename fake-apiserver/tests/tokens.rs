//! Identities over HTTP: a bearer token the server gave out
//! ([`FakeApiServer::token_for_service_account`], [`FakeApiServer::token_for_user`]) is that
//! user, authorized by RBAC like a token of a real cluster; any other token is
//! kube-apiserver's `401 Unauthorized`; the kubeconfig's own token is the admin.

use fake_apiserver::{FakeApiServer, User, kubeconfig_with_token};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

async fn client(url: &str, token: &str) -> kube::Client {
    let kubeconfig: kube::config::Kubeconfig =
        serde_saphyr::from_str(&kubeconfig_with_token(url, token)).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

fn status(err: kube::Error) -> (u16, String, String) {
    match err {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn tokens_are_their_users_and_unknown_tokens_are_refused() {
    let fake = FakeApiServer::new();
    fake.seed_yaml(
        r#"
apiVersion: v1
kind: Namespace
metadata: {name: apps}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: apps}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: apps}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: ctl, namespace: apps}]
"#,
    )
    .unwrap();
    let served = fake.serve(([127, 0, 0, 1], 0).into()).await.unwrap();
    let url = served.url();

    // A token the server never gave out: 401, whatever is asked.
    let stranger = client(&url, "not-a-token").await;
    let err = Api::<ConfigMap>::namespaced(stranger, "apps")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        status(err),
        (401, "Unauthorized".to_owned(), "Unauthorized".to_owned())
    );

    // The ServiceAccount's token: what its Role allows, and a 403 beyond it.
    let token = fake.token_for_service_account("apps", "ctl");
    let ctl = client(&url, &token).await;
    Api::<ConfigMap>::namespaced(ctl.clone(), "apps")
        .list(&ListParams::default())
        .await
        .expect("listed as the ServiceAccount");
    let err = Api::<ConfigMap>::namespaced(ctl.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        status(err),
        (
            403,
            "Forbidden".to_owned(),
            "configmaps is forbidden: User \"system:serviceaccount:apps:ctl\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
                .to_owned()
        )
    );

    // A user's token: that user, with `system:authenticated` only.
    let jane = client(&url, &fake.token_for_user(User::named("jane"))).await;
    let err = Api::<ConfigMap>::namespaced(jane, "apps")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        status(err).2,
        "configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"apps\""
    );
    // The kubeconfig's own token is the admin.
    let admin = client(&url, "fake").await;
    Api::<ConfigMap>::namespaced(admin, "default")
        .list(&ListParams::default())
        .await
        .expect("the admin lists anything");
    served.stop().await;
}
