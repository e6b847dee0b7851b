//! Impersonation by someone who is not an administrator, as kube-apiserver 1.36 authorizes
//! it (constrained impersonation, on by default): a ServiceAccount, authenticated by a
//! token from a TokenRequest, impersonates users step by step as its grants allow, and
//! every refusal is the real server's 403, from `impersonate-on:user-info:<verb>` to the
//! refused `system:masters` group; a legacy `impersonate` grant works too, after which
//! that mode is tried first (and its refusal is the one reported).

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Value, json};

use crate::authorization::{apply, resource_of};
use crate::env::{Env, case};

/// The requestor.
const SA: &str = "requestor";

fn user(env: &Env) -> String {
    format!("system:serviceaccount:{}:{SA}", env.ns)
}

/// A token of the requestor, from a TokenRequest (the fake serves them too).
async fn token(env: &Env) -> String {
    let accounts: Api<DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        &env.ns,
        &kube::core::ApiResource::erase::<k8s_openapi::api::core::v1::ServiceAccount>(&()),
    );
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA}});
    accounts
        .create(
            &Default::default(),
            &serde_json::from_value(account).unwrap(),
        )
        .await
        .unwrap();
    let path = format!("/api/v1/namespaces/{}/serviceaccounts/{SA}/token", env.ns);
    let body = serde_json::to_vec(
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
    )
    .unwrap();
    let request = http::Request::post(path)
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    let answer: Value = env.client.request(request).await.expect("a TokenRequest");
    assert_eq!(answer["kind"], "TokenRequest", "{answer}");
    assert_eq!(answer["spec"]["expirationSeconds"], 3600, "{answer}");
    answer["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned()
}

/// The configmaps of the case's namespace, listed as `who` (and `groups`) impersonated by
/// `client`: the status code and message.
async fn list_as(client: &Client, env: &Env, who: &str, groups: &[&str]) -> (u16, String) {
    use http_body_util::BodyExt;
    let mut request = http::Request::get(format!("/api/v1/namespaces/{}/configmaps", env.ns))
        .header("impersonate-user", who);
    for g in groups {
        request = request.header("impersonate-group", *g);
    }
    let request = request.body(kube::client::Body::empty()).unwrap();
    let response = client.send(request).await.expect("a response");
    let code = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (code, body["message"].as_str().unwrap_or("").to_owned())
}

/// Grants the requestor `rules`: in the namespace (a Role), or cluster-wide (a ClusterRole
/// named after the namespace, deleted when the case ends).
async fn grant(env: &Env, name: &str, rules: Value, cluster: bool) {
    let (role_kind, binding_kind) = if cluster {
        ("ClusterRole", "ClusterRoleBinding")
    } else {
        ("Role", "RoleBinding")
    };
    let full = format!("{}-{name}", env.ns);
    let mut meta = json!({"name": full});
    if !cluster {
        meta["namespace"] = json!(env.ns);
    }
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": role_kind,
        "metadata": meta, "rules": rules});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding_kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": full},
        "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": env.ns}]});
    for object in [&role, &binding] {
        apply(&env.client, object).await;
        if cluster {
            env.delete_later(resource_of(object), &full);
        }
    }
}

/// Asks again until the answer is not `stale` (kube-apiserver's RBAC reads its objects
/// from informers, a moment after they are written).
async fn settled(
    client: &Client,
    env: &Env,
    who: &str,
    groups: &[&str],
    stale: &str,
) -> (u16, String) {
    for _ in 0..100 {
        let answer = list_as(client, env, who, groups).await;
        if answer.1 != stale {
            return answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    list_as(client, env, who, groups).await
}

#[tokio::test]
async fn impersonation_is_authorized_step_by_step_as_kube_apiserver_does() {
    case("impersonation", |env| async move {
        let token = token(&env).await;
        let client = env.client_with_token(&token).await;
        let me = user(&env);
        let ns = env.ns.clone();

        // Its own token, without impersonation: itself, with no grants.
        let answer = Api::<DynamicObject>::namespaced_with(
            client.clone(),
            &ns,
            &kube::core::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        )
        .list(&ListParams::default())
        .await
        .unwrap_err();
        assert!(answer.to_string().contains(&format!("User \"{me}\" cannot list resource \"configmaps\"")), "{answer}");

        // Nothing granted: the first mode that applies, user-info, refuses on the request.
        let first = format!("configmaps is forbidden: User \"{me}\" cannot impersonate-on:user-info:list resource \"configmaps\" in API group \"\" in the namespace \"{ns}\"");
        assert_eq!(list_as(&client, &env, "someone", &[]).await, (403, first.clone()));

        // impersonate-on granted: next, the user itself.
        grant(&env, "on", json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["impersonate-on:user-info:list"]}]), false).await;
        let users = format!("users.authentication.k8s.io \"someone\" is forbidden: User \"{me}\" cannot impersonate:user-info resource \"users\" in API group \"authentication.k8s.io\" at the cluster scope");
        assert_eq!(settled(&client, &env, "someone", &[], &first).await, (403, users.clone()));

        // The user granted: the request runs as `someone`, who may not list.
        grant(&env, "users", json!([{"apiGroups": ["authentication.k8s.io"], "resources": ["users"], "verbs": ["impersonate:user-info"]}]), true).await;
        let as_someone = format!("configmaps is forbidden: User \"someone\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"{ns}\"");
        assert_eq!(settled(&client, &env, "someone", &[], &users).await, (403, as_someone));

        // Groups must be granted too, and system:masters never is.
        let group = format!("groups.authentication.k8s.io \"g\" is forbidden: User \"{me}\" cannot impersonate:user-info resource \"groups\" in API group \"authentication.k8s.io\" at the cluster scope");
        assert_eq!(list_as(&client, &env, "someone", &["g"]).await, (403, group));
        let masters = format!("groups.authentication.k8s.io \"system:masters\" is forbidden: User \"{me}\" cannot impersonate:user-info resource \"groups\" in API group \"authentication.k8s.io\" at the cluster scope: impersonating the system:masters group is not allowed");
        assert_eq!(list_as(&client, &env, "someone", &["system:masters"]).await, (403, masters));

        // A legacy grant (`impersonate` on one user) works for a request user-info refuses
        // (secrets: no impersonate-on there); legacy is then tried first, and its refusal
        // is the one reported for another user.
        grant(&env, "legacy", json!([{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["legacyuser"]}]), true).await;
        let secrets = |who: &str| {
            let who = who.to_owned();
            let client = client.clone();
            let path = format!("/api/v1/namespaces/{ns}/secrets");
            async move {
                use http_body_util::BodyExt;
                let request = http::Request::get(path).header("impersonate-user", who).body(kube::client::Body::empty()).unwrap();
                let response = client.send(request).await.unwrap();
                let code = response.status().as_u16();
                let body: Value = serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap_or(Value::Null);
                (code, body["message"].as_str().unwrap_or("").to_owned())
            }
        };
        let as_legacy = format!("secrets is forbidden: User \"legacyuser\" cannot list resource \"secrets\" in API group \"\" in the namespace \"{ns}\"");
        let mut answer = secrets("legacyuser").await;
        for _ in 0..100 {
            if answer.1 == as_legacy {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            answer = secrets("legacyuser").await;
        }
        assert_eq!(answer, (403, as_legacy));
        let legacy = format!("users \"nobody\" is forbidden: User \"{me}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope");
        assert_eq!(secrets("nobody").await, (403, legacy));
    })
    .await;
}
