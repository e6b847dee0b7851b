//! RBAC escalation prevention, as kube-apiserver's storage of roles and bindings enforces
//! it: a ServiceAccount that may write Roles and RoleBindings cannot grant itself (or
//! anyone) what it does not hold, unless it holds `escalate` (roles) or `bind` (the role a
//! binding references); an `aggregationRule` needs cluster-admin's rules; and a server-side
//! apply that creates an object needs `create` besides `patch`. Each denial is the real
//! server's 403, word for word. Requests are sent as the ServiceAccount through the admin
//! client's impersonation, as `kubectl --as` sends them.

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::{Value, json};

use crate::authorization::{apply, resource_of};
use crate::env::{Env, Raw, case};

/// The ServiceAccount the cases act as.
const SA: &str = "writer";

fn user(env: &Env) -> String {
    format!("system:serviceaccount:{}:{SA}", env.ns)
}

/// The groups kube-apiserver gives the impersonated ServiceAccount, as its 403 prints them.
fn groups(env: &Env) -> String {
    format!(
        "[\"system:serviceaccounts\" \"system:serviceaccounts:{}\" \"system:authenticated\"]",
        env.ns
    )
}

/// `<resource>.rbac.authorization.k8s.io "<name>" is forbidden: user ... is attempting to
/// grant RBAC permissions not currently held:` and the missing rules.
fn escalating(env: &Env, resource: &str, name: &str, missing: &[&str]) -> String {
    format!(
        "{resource}.rbac.authorization.k8s.io \"{name}\" is forbidden: user \"{}\" (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user(env),
        groups(env),
        missing.join("\n")
    )
}

/// Sends `body` (of `content_type`) as the ServiceAccount.
async fn send(env: &Env, method: &str, path: &str, content_type: &str, body: &Value) -> Raw {
    use http_body_util::BodyExt;
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("impersonate-user", user(env))
        .header("content-type", content_type)
        .body(kube::client::Body::from(serde_json::to_vec(body).unwrap()))
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

fn rbac_path(env: &Env, resource: &str) -> String {
    format!(
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{}/{resource}",
        env.ns
    )
}

/// The ServiceAccount's own Role: write Roles and RoleBindings (not read them: they are
/// its grants alone), and `patch` ConfigMaps.
fn writer_role(env: &Env, extra: &[Value]) -> Value {
    let mut rules = vec![
        json!({"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
               "verbs": ["create", "update", "patch", "get"]}),
        json!({"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch", "get"]}),
    ];
    rules.extend(extra.iter().cloned());
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": SA, "namespace": env.ns}, "rules": rules})
}

async fn install(env: &Env) {
    apply(&env.client, &writer_role(env, &[])).await;
    apply(
        &env.client,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": SA, "namespace": env.ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": SA},
                "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": env.ns}]}),
    )
    .await;
    let patch = json!({"verb": "patch", "resource": "configmaps", "namespace": env.ns});
    settle(&env.client, &user(env), patch).await;
}

/// Waits until the authorizer allows `user` what `attributes` (a SubjectAccessReview's
/// `resourceAttributes`) ask (kube-apiserver's RBAC reads its objects from informers, a
/// moment after they are written).
async fn settle(client: &Client, user: &str, attributes: Value) {
    use k8s_openapi::api::authorization::v1::SubjectAccessReview;
    let reviews: Api<SubjectAccessReview> = Api::all(client.clone());
    let review: SubjectAccessReview =
        serde_json::from_value(json!({"spec": {"user": user, "resourceAttributes": attributes}}))
            .unwrap();
    crate::env::eventually("the policy in effect", || {
        let (reviews, review) = (reviews.clone(), review.clone());
        async move {
            let answer = reviews.create(&Default::default(), &review).await.ok()?;
            answer.status.filter(|s| s.allowed).map(|_| ())
        }
    })
    .await;
}

fn binding(env: &Env, name: &str, kind: &str, role: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": env.ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": env.ns}]})
}

fn role(env: &Env, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": env.ns}, "rules": rules})
}

const JSON: &str = "application/json";

#[tokio::test]
async fn nobody_grants_what_they_do_not_hold() {
    case("escalation", |env| async move {
        install(&env).await;
        let (roles, bindings) = (rbac_path(&env, "roles"), rbac_path(&env, "rolebindings"));

        // A RoleBinding to cluster-admin for itself.
        let r = send(&env, "POST", &bindings, JSON, &binding(&env, "admin", "ClusterRole", "cluster-admin")).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert_eq!(
            r.message(),
            escalating(&env, "rolebindings", "admin", &[
                "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}",
                "{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}",
            ])
        );
        assert_eq!(
            r.body["details"],
            json!({"name": "admin", "group": "rbac.authorization.k8s.io", "kind": "rolebindings"})
        );

        // A Role granting everything.
        let all = json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]);
        let r = send(&env, "POST", &roles, JSON, &role(&env, "everything", all.clone())).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert_eq!(
            r.message(),
            escalating(&env, "roles", "everything", &["{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"])
        );

        // Its own Role, patched to read Secrets.
        let patch = json!([{"op": "add", "path": "/rules/-",
            "value": {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "get"]}}]);
        let r = send(&env, "PATCH", &format!("{roles}/{SA}"), "application/json-patch+json", &patch).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert_eq!(
            r.message(),
            escalating(&env, "roles", SA, &["{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\" \"get\"]}"])
        );

        // What it holds it may grant, on a Role and through a binding.
        let held = json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]);
        let r = send(&env, "POST", &roles, JSON, &role(&env, "cm-get", held)).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let r = send(&env, "POST", &bindings, JSON, &binding(&env, "cm-get", "Role", "cm-get")).await;
        assert_eq!(r.code, 201, "{}", r.body);

        // A binding to a role that does not exist: the registry's 404.
        let r = send(&env, "POST", &bindings, JSON, &binding(&env, "ghost", "Role", "ghost")).await;
        assert_eq!(r.status(), (404, "NotFound"), "{}", r.body);
        // kube-apiserver names the binding's resource, with the role's name.
        assert_eq!(r.message(), "rolebindings.rbac.authorization.k8s.io \"ghost\" not found");
        assert_eq!(
            r.body["details"],
            json!({"name": "ghost", "group": "rbac.authorization.k8s.io", "kind": "rolebindings"})
        );
        // A kind of role that does not exist: a 500 without a reason.
        let mut odd = binding(&env, "odd", "Role", "x");
        odd["roleRef"]["kind"] = json!("Foo");
        let r = send(&env, "POST", &bindings, JSON, &odd).await;
        assert_eq!(r.status(), (500, ""), "{}", r.body);
        assert_eq!(r.message(), "unsupported role reference kind: \"Foo\"");

        // `bind` on the ClusterRole `edit` alone: binding `edit` is allowed, `admin` not.
        let may_bind = json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
            "verbs": ["bind"], "resourceNames": ["edit"]}]);
        apply(&env.client, &writer_role(&env, may_bind.as_array().unwrap())).await;
        let bind = json!({"verb": "bind", "group": "rbac.authorization.k8s.io",
            "resource": "clusterroles", "name": "edit", "namespace": env.ns});
        settle(&env.client, &user(&env), bind).await;
        let r = send(&env, "POST", &bindings, JSON, &binding(&env, "edit", "ClusterRole", "edit")).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let r = send(&env, "POST", &bindings, JSON, &binding(&env, "admin", "ClusterRole", "admin")).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert!(
            r.message().starts_with(&format!(
                "rolebindings.rbac.authorization.k8s.io \"admin\" is forbidden: user \"{}\" (groups={}) is attempting to grant RBAC permissions not currently held:\n",
                user(&env),
                groups(&env)
            )),
            "{}",
            r.message()
        );

        // `escalate` on roles: any Role may be written.
        let may_escalate = json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]);
        apply(&env.client, &writer_role(&env, may_escalate.as_array().unwrap())).await;
        let escalate = json!({"verb": "escalate", "group": "rbac.authorization.k8s.io",
            "resource": "roles", "namespace": env.ns});
        settle(&env.client, &user(&env), escalate).await;
        let r = send(&env, "POST", &roles, JSON, &role(&env, "everything", all)).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn an_apply_that_creates_needs_create() {
    case("apply-create", |env| async move {
        install(&env).await;
        let cms = env.path("v1", "configmaps");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "applied", "labels": {crate::env::RUN_LABEL: crate::env::run_id()}},
            "data": {"a": "1"}});
        let path = format!("{cms}/applied?fieldManager=writer");
        let r = send(&env, "PATCH", &path, "application/apply-patch+yaml", &cm).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                "configmaps \"applied\" is forbidden: User \"{}\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"{}\"",
                user(&env),
                env.ns
            )
        );
        assert_eq!(r.body["details"], json!({"name": "applied", "kind": "configmaps"}));
        // Once it exists (applied by the admin for the same field manager), `patch` is enough.
        let admin: Api<DynamicObject> =
            Api::namespaced_with(env.client.clone(), &env.ns, &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()));
        admin
            .patch("applied", &kube::api::PatchParams::apply("writer"), &kube::api::Patch::Apply(&cm))
            .await
            .unwrap();
        let mut changed = cm.clone();
        changed["data"]["a"] = json!("2");
        let r = send(&env, "PATCH", &path, "application/apply-patch+yaml", &changed).await;
        assert_eq!(r.code, 200, "{}", r.body);
        assert_eq!(r.body["data"]["a"], "2");
    })
    .await;
}

#[tokio::test]
async fn an_aggregation_rule_needs_cluster_admin() {
    case("aggregation", |env| async move {
        // The ServiceAccount may create ClusterRoles, and holds nothing else there.
        let writer = format!("{}-clusterroles", env.ns);
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": writer},
            "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["create"]}]});
        let bound = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": writer},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": writer},
            "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": env.ns}]});
        for object in [&role, &bound] {
            apply(&env.client, object).await;
            env.delete_later(resource_of(object), &writer);
        }
        let create = json!({"verb": "create", "group": "rbac.authorization.k8s.io", "resource": "clusterroles"});
        settle(&env.client, &user(&env), create).await;
        let name = format!("{}-aggregated", env.ns);
        env.delete_later(resource_of(&role), &name);
        let aggregated = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "yes"}}]}});
        let r = send(&env, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", JSON, &aggregated).await;
        assert_eq!(r.status(), (403, "Forbidden"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!("clusterroles.rbac.authorization.k8s.io \"{name}\" is forbidden: must have cluster-admin privileges to use the aggregationRule")
        );
    })
    .await;
}

#[tokio::test]
async fn binding_subjects_are_validated_as_kube_apiserver_validates_them() {
    case("binding-subjects", |env| async move {
        let name = format!("{}-crb", env.ns);
        let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl"}]});
        env.delete_later(resource_of(&crb), &name);
        let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource_of(&crb));
        let err = api
            .create(&Default::default(), &serde_json::from_value(crb).unwrap())
            .await
            .unwrap_err();
        let status = crate::env::status(err);
        assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            status.message,
            format!("ClusterRoleBinding.rbac.authorization.k8s.io \"{name}\" is invalid: subjects[0].namespace: Required value")
        );
        // A RoleBinding's ServiceAccount without a namespace is of the binding's; a User's
        // API group is defaulted.
        let rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "subjects", "namespace": env.ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl"}, {"kind": "User", "name": "jane"}]});
        let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource_of(&rb));
        let created = api
            .create(&Default::default(), &serde_json::from_value(rb).unwrap())
            .await
            .expect("a RoleBinding with a ServiceAccount of its own namespace");
        assert_eq!(created.data["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
        // A User of another API group, and a ServiceAccount with one.
        let odd = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "odd", "namespace": env.ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "jane", "apiGroup": "example.com"},
                         {"kind": "ServiceAccount", "name": "ctl", "apiGroup": "example.com"}]});
        let status = crate::env::status(
            api.create(&Default::default(), &serde_json::from_value(odd).unwrap())
                .await
                .unwrap_err(),
        );
        assert_eq!(
            status.message,
            "RoleBinding.rbac.authorization.k8s.io \"odd\" is invalid: [subjects[0].apiGroup: Unsupported value: \"example.com\": supported values: \"rbac.authorization.k8s.io\", subjects[1].apiGroup: Unsupported value: \"example.com\": supported values: \"\"]"
        );
    })
    .await;
}

#[tokio::test]
async fn a_put_of_a_missing_role_creates_it_as_the_real_server_does() {
    case("put-create", |env| async move {
        install(&env).await;
        let path = format!("{}/made-by-put", rbac_path(&env, "roles"));
        let held = json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]);
        // The writer may create and update roles: a PUT of a new one is a create (201).
        let r = send(
            &env,
            "PUT",
            &path,
            JSON,
            &role(&env, "made-by-put", held.clone()),
        )
        .await;
        assert_eq!(r.code, 201, "{}", r.body);
        let again = send(&env, "PUT", &path, JSON, &r.body).await;
        assert_eq!(again.code, 200, "{}", again.body);
    })
    .await;
}
