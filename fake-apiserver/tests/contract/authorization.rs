//! Authorization: requests made as a ServiceAccount or a user (impersonated with the
//! `Impersonate-User` / `Impersonate-Group` headers `kubectl --as` / `--as-group` send) are
//! allowed and refused by the Roles, ClusterRoles and bindings stored in the server, with
//! kube-apiserver's 403; the access reviews answer; and `kubectl --as` and `kubectl auth
//! can-i` say the same on either server.

use std::path::PathBuf;
use std::process::Command;

use fake_apiserver::FakeApiServer;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Value, json};

use crate::env::{Env, Raw, case, run_id};

/// The ServiceAccount the cases act as.
const SA: &str = "ctl";

/// The objects of a case: a Role (configmaps listed and watched, one configmap read by
/// name, `pods/status` read) bound to ServiceAccount `ctl` and to a group, and a
/// ClusterRole (nodes listed) bound to the ServiceAccount.
fn policy(ns: &str, cluster_role: &str, group: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "cm-reader", "namespace": ns},
               "rules": [
                   {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]},
                   {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["allowed"]},
                   {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "cm-reader", "namespace": ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
               "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": ns},
                            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": cluster_role},
               "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": cluster_role},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
               "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": ns}]}),
    ]
}

/// Applies the case's policy (the cluster-scoped objects deleted when the case ends).
async fn install(env: &Env) -> (String, String) {
    // Named after the case's namespace: cases run at once, each with its own.
    let cluster_role = format!("{}-nodes", env.ns);
    let group = format!("{}-devs", env.ns);
    for object in policy(&env.ns, &cluster_role, &group) {
        apply(&env.client, &object).await;
        if object["metadata"].get("namespace").is_none() {
            env.delete_later(resource_of(&object), &cluster_role);
        }
    }
    settle(&env.client, &env.ns, &group).await;
    (cluster_role, group)
}

/// Waits until the server's authorizer sees the policy: kube-apiserver's RBAC reads its
/// objects from informers, a moment after they are written.
async fn settle(client: &Client, ns: &str, group: &str) {
    use k8s_openapi::api::authorization::v1::SubjectAccessReview;
    let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
    let user = format!("system:serviceaccount:{ns}:{SA}");
    let asks = [
        json!({"user": user, "resourceAttributes": {"verb": "list", "resource": "nodes"}}),
        json!({"user": user, "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": ns}}),
        json!({"user": "jane", "groups": [group], "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": ns}}),
    ];
    for spec in asks {
        let review: SubjectAccessReview = serde_json::from_value(json!({"spec": spec})).unwrap();
        crate::env::eventually("the policy in effect", || {
            let (reviews, review) = (reviews.clone(), review.clone());
            async move {
                let answer = reviews.create(&Default::default(), &review).await.ok()?;
                answer.status.filter(|s| s.allowed).map(|_| ())
            }
        })
        .await;
    }
}

pub(super) fn resource_of(object: &Value) -> ApiResource {
    let kind = object["kind"].as_str().unwrap_or("");
    ApiResource::from_gvk(&GroupVersionKind::gvk(
        "rbac.authorization.k8s.io",
        "v1",
        kind,
    ))
}

pub(super) async fn apply(client: &Client, object: &Value) {
    let resource = resource_of(object);
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        name,
        &PatchParams::apply("contract-suite").force(),
        &Patch::Apply(object),
    )
    .await
    .unwrap_or_else(|e| panic!("applying {name}: {e}"));
}

/// The ServiceAccount's user name.
fn sa_user(env: &Env) -> String {
    format!("system:serviceaccount:{}:{SA}", env.ns)
}

/// Sends a request as `user` (and `groups`), through the admin client's impersonation.
pub(super) async fn send_as(
    env: &Env,
    user: &str,
    groups: &[&str],
    method: &str,
    path: &str,
    body: &str,
) -> Raw {
    use http_body_util::BodyExt;
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("impersonate-user", user);
    for g in groups {
        req = req.header("impersonate-group", *g);
    }
    if !body.is_empty() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(kube::client::Body::from(body.as_bytes().to_vec()))
        .expect("a valid request");
    let response = env.client.send(req).await.expect("a response");
    let code = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    Raw {
        code,
        warnings: Vec::new(),
        body: serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into())),
    }
}

/// kube-apiserver's denial, after `<what> is forbidden: `.
fn cannot(user: &str, verb: &str, resource: &str, ns: Option<&str>) -> String {
    let scope = match ns {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_owned(),
    };
    format!("User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"\" {scope}")
}

#[tokio::test]
async fn a_service_account_gets_what_its_roles_allow_and_a_403_otherwise() {
    case("rbac-sa", |env| async move {
        install(&env).await;
        let user = sa_user(&env);
        let ns = env.ns.clone();
        let cms = env.path("v1", "configmaps");
        let r = send_as(&env, &user, &[], "GET", &cms, "").await;
        assert_eq!(r.code, 200, "{}", r.body);

        let r = send_as(
            &env,
            &user,
            &[],
            "POST",
            &cms,
            r#"{"metadata":{"name":"x"}}"#,
        )
        .await;
        assert_eq!(r.status(), (403, "Forbidden"));
        let expected = format!(
            "configmaps is forbidden: {}",
            cannot(&user, "create", "configmaps", Some(&ns))
        );
        assert_eq!(r.message(), expected);
        assert_eq!(r.body["details"], json!({"kind": "configmaps"}));

        let r = send_as(
            &env,
            &user,
            &[],
            "GET",
            "/api/v1/namespaces/default/configmaps",
            "",
        )
        .await;
        let expected = format!(
            "configmaps is forbidden: {}",
            cannot(&user, "list", "configmaps", Some("default"))
        );
        assert_eq!((r.code, r.message()), (403, expected.as_str()));

        // resourceNames: `allowed` may be read (and is absent), `other` may not.
        let r = send_as(&env, &user, &[], "GET", &format!("{cms}/allowed"), "").await;
        assert_eq!(r.status(), (404, "NotFound"));
        let r = send_as(&env, &user, &[], "GET", &format!("{cms}/other"), "").await;
        let expected = format!(
            "configmaps \"other\" is forbidden: {}",
            cannot(&user, "get", "configmaps", Some(&ns))
        );
        assert_eq!((r.code, r.message()), (403, expected.as_str()));
        assert_eq!(
            r.body["details"],
            json!({"name": "other", "kind": "configmaps"})
        );

        // A subresource is its own resource: `pods/status` allows the status only.
        let pods = env.path("v1", "pods");
        let r = send_as(&env, &user, &[], "GET", &format!("{pods}/p/status"), "").await;
        assert_eq!(r.status(), (404, "NotFound"));
        let r = send_as(&env, &user, &[], "GET", &format!("{pods}/p"), "").await;
        let expected = format!(
            "pods \"p\" is forbidden: {}",
            cannot(&user, "get", "pods", Some(&ns))
        );
        assert_eq!((r.code, r.message()), (403, expected.as_str()));

        // The ClusterRoleBinding: nodes are listed, not read one by one.
        let r = send_as(&env, &user, &[], "GET", "/api/v1/nodes", "").await;
        assert_eq!(r.code, 200, "{}", r.body);
        let r = send_as(&env, &user, &[], "GET", "/api/v1/nodes/n1", "").await;
        let expected = format!(
            "nodes \"n1\" is forbidden: {}",
            cannot(&user, "get", "nodes", None)
        );
        assert_eq!((r.code, r.message()), (403, expected.as_str()));
    })
    .await;
}

#[tokio::test]
async fn every_authenticated_user_may_discover_and_nothing_more_by_default() {
    case("rbac-default", |env| async move {
        let user = format!("system:serviceaccount:{}:nobody", env.ns);
        for path in ["/api", "/apis", "/api/v1", "/apis/apps/v1", "/version"] {
            let r = send_as(&env, &user, &[], "GET", path, "").await;
            assert_eq!(r.code, 200, "{path}: {}", r.body);
        }
        let r = send_as(&env, &user, &[], "GET", "/metrics", "").await;
        let expected = format!("forbidden: User \"{user}\" cannot get path \"/metrics\"");
        assert_eq!((r.code, r.message()), (403, expected.as_str()));
        assert_eq!(r.body["details"], json!({}));
        // A resource that does not exist is refused before it is looked up.
        let r = send_as(
            &env,
            &user,
            &[],
            "GET",
            "/apis/nope.example.com/v1/things",
            "",
        )
        .await;
        assert_eq!(r.status(), (403, "Forbidden"));
    })
    .await;
}

#[tokio::test]
async fn groups_are_impersonated_with_the_user() {
    case("rbac-group", |env| async move {
        let (_, group) = install(&env).await;
        let cms = env.path("v1", "configmaps");
        let r = send_as(&env, "jane", &[group.as_str()], "GET", &cms, "").await;
        assert_eq!(r.code, 200, "{}", r.body);
        let r = send_as(&env, "jane", &[], "GET", &cms, "").await;
        let expected = format!(
            "configmaps is forbidden: {}",
            cannot("jane", "list", "configmaps", Some(&env.ns))
        );
        assert_eq!((r.code, r.message()), (403, expected.as_str()));
    })
    .await;
}

/// A `SelfSubjectAccessReview` for `verb` on `resource` in the case's namespace.
fn self_review(ns: &str, verb: &str, resource: &str, name: &str) -> String {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
           "spec": {"resourceAttributes": {"namespace": ns, "verb": verb, "resource": resource, "name": name}}})
    .to_string()
}

#[tokio::test]
async fn access_reviews_answer_as_the_authorizer_decides() {
    case("rbac-review", |env| async move {
        install(&env).await;
        let user = sa_user(&env);
        let ns = env.ns.clone();
        let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        let ask = |verb: &'static str, resource: &'static str, name: &'static str| {
            let env = env.clone();
            let (user, ns) = (user.clone(), ns.clone());
            async move {
                let body = self_review(&ns, verb, resource, name);
                let r = send_as(&env, &user, &[], "POST", path, &body).await;
                assert_eq!(r.code, 201, "{}", r.body);
                r.body["status"].clone()
            }
        };
        assert_eq!(
            ask("list", "configmaps", "").await,
            json!({"allowed": true, "reason": format!(
                "RBAC: allowed by RoleBinding \"cm-reader/{ns}\" of Role \"cm-reader\" to ServiceAccount \"{SA}/{ns}\"")})
        );
        assert_eq!(
            ask("create", "configmaps", "").await,
            json!({"allowed": false})
        );
        assert_eq!(ask("get", "configmaps", "allowed").await["allowed"], true);
        assert_eq!(ask("get", "configmaps", "other").await["allowed"], false);

        // A SubjectAccessReview (the admin asks about the ServiceAccount), and its checks.
        let sar = |spec: Value| {
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
                .to_string()
        };
        let path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
        let spec = json!({"user": user, "resourceAttributes": {"namespace": ns, "verb": "watch", "resource": "configmaps"}});
        let r = env.raw("POST", path, "application/json", &sar(spec)).await;
        assert_eq!(
            (r.code, r.body["status"]["allowed"].clone()),
            (201, json!(true))
        );
        let spec = json!({"resourceAttributes": {"verb": "get", "resource": "pods"}});
        let r = env.raw("POST", path, "application/json", &sar(spec)).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.causes(), [("FieldValueInvalid".into(), "spec.user".into())]);
    })
    .await;
}

/// kubectl with a kubeconfig for the server a case runs on: the cluster's, or one for a
/// fake served on loopback for the case.
struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    /// Exit success, stdout and stderr (trimmed) of `kubectl <args>`.
    fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .output()
            .expect("kubectl runs (install it, or set KUBECTL)");
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }
}

// kubectl blocks a worker while the served fake answers it on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_as_and_auth_can_i_agree_with_kube_apiserver() {
    let dir = std::env::temp_dir().join(format!("ct-rbac-kubectl-{}", run_id()));
    std::fs::create_dir_all(&dir).unwrap();
    // On the fake, the case runs on a server of its own, served for kubectl.
    let (client, kubeconfig, _served) = if let Some(path) = crate::env::kubeconfig().await {
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&path).unwrap(),
            &Default::default(),
        )
        .await
        .unwrap();
        (Client::try_from(config).unwrap(), path, None)
    } else {
        let fake = FakeApiServer::new();
        let served = fake.serve(([127, 0, 0, 1], 0).into()).await.unwrap();
        let path = dir.join("kubeconfig");
        std::fs::write(&path, served.kubeconfig()).unwrap();
        (Client::new(fake, "default"), path, Some(served))
    };
    let kubectl = Kubectl {
        kubeconfig,
        cache: dir.join("cache"),
    };
    let ns = format!("ct-rbac-kubectl-{}", run_id());
    let cluster_role = format!("ct-rbac-kubectl-{}", run_id());
    let outcome = {
        use futures::FutureExt;
        std::panic::AssertUnwindSafe(kubectl_cases(&client, &kubectl, &ns, &cluster_role))
            .catch_unwind()
            .await
    };
    for (kind, name) in [
        ("ClusterRoleBinding", cluster_role.as_str()),
        ("ClusterRole", cluster_role.as_str()),
    ] {
        let api: Api<DynamicObject> =
            Api::all_with(client.clone(), &resource_of(&json!({"kind": kind})));
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn kubectl_cases(client: &Client, kubectl: &Kubectl, ns: &str, cluster_role: &str) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let object = serde_json::from_value(json!({"metadata": {"name": ns,
        "labels": {crate::env::RUN_LABEL: run_id()}}}))
    .unwrap();
    namespaces
        .create(&Default::default(), &object)
        .await
        .unwrap();
    let group = format!("ct-rbac-kubectl-devs-{}", run_id());
    for object in policy(ns, cluster_role, &group) {
        apply(client, &object).await;
    }
    settle(client, ns, &group).await;
    let as_sa = format!("--as=system:serviceaccount:{ns}:{SA}");
    let user = format!("system:serviceaccount:{ns}:{SA}");
    let can_i = |args: &[&str]| {
        let mut all = vec![as_sa.as_str(), "-n", ns, "auth", "can-i"];
        all.extend_from_slice(args);
        let (ok, out, _) = kubectl.run(&all);
        (ok, out)
    };
    let yes = (true, "yes".to_owned());
    let no = (false, "no".to_owned());
    assert_eq!(can_i(&["list", "configmaps"]), yes);
    assert_eq!(can_i(&["watch", "configmaps"]), yes);
    assert_eq!(can_i(&["create", "configmaps"]), no);
    assert_eq!(can_i(&["get", "configmaps/allowed"]), yes);
    assert_eq!(can_i(&["get", "configmaps/other"]), no);
    assert_eq!(can_i(&["get", "pods", "--subresource=status"]), yes);
    assert_eq!(can_i(&["get", "pods"]), no);
    assert_eq!(can_i(&["list", "nodes"]), yes);
    assert_eq!(can_i(&["list", "configmaps", "-n", "default"]), no);
    assert_eq!(can_i(&["impersonate", "serviceaccounts"]), no);
    assert_eq!(can_i(&["get", "/version"]), yes);
    assert_eq!(can_i(&["get", "/metrics"]), no);
    let (ok, out, _) = kubectl.run(&["-n", ns, "auth", "can-i", "create", "configmaps"]);
    assert_eq!((ok, out.as_str()), (true, "yes"), "the admin may");

    let (ok, _, err) = kubectl.run(&[&as_sa, "-n", ns, "get", "configmaps"]);
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl.run(&[&as_sa, "-n", ns, "create", "configmap", "x"]);
    assert!(!ok);
    assert_eq!(
        err,
        format!(
            "error: failed to create configmap: configmaps is forbidden: {}",
            cannot(&user, "create", "configmaps", Some(ns))
        )
    );
    let (ok, _, err) = kubectl.run(&[&as_sa, "get", "--raw", "/metrics"]);
    assert!(!ok);
    assert_eq!(
        err,
        format!(
            "Error from server (Forbidden): forbidden: User \"{user}\" cannot get path \"/metrics\""
        )
    );
}
