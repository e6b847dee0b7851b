//! Built-in kinds validated past their metadata, as kube-apiserver 1.36 validates them:
//! ConfigMap and Secret keys, sizes, types and immutability, Deployment selectors, pod
//! templates and strategies. Each request is refused with the real server's code, message
//! and fields.

use serde_json::{Value, json};

use crate::env::{Env, RUN_LABEL, case, run_id};

fn labels() -> Value {
    json!({RUN_LABEL: run_id()})
}

async fn post(env: &Env, group_version: &str, plural: &str, body: Value) -> crate::env::Raw {
    let path = env.path(group_version, plural);
    env.raw("POST", &path, "application/json", &body.to_string())
        .await
}

/// Sends each `(object, message)` and expects a 422 with exactly that message.
async fn refused(env: &Env, group_version: &str, plural: &str, cases: Vec<(Value, String)>) {
    for (body, want) in cases {
        let r = post(env, group_version, plural, body.clone()).await;
        assert_eq!(r.status(), (422, "Invalid"), "{body}: {}", r.body);
        assert_eq!(r.message(), want, "{body}");
    }
}

const KEY_MSG: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

#[tokio::test]
async fn configmap_keys_and_generation_are_checked() {
    case("kinds-configmap", |env| async move {
        let cm = |name: &str, data: Value, binary: Value| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": labels()}, "data": data, "binaryData": binary})
        };
        let cases = vec![
            (cm("dot", json!({".": "x"}), json!({})), "ConfigMap \"dot\" is invalid: data[.]: Invalid value: \".\": must not be '.'".to_owned()),
            (cm("slash", json!({"k/x": "x"}), json!({})), format!("ConfigMap \"slash\" is invalid: data[k/x]: Invalid value: \"k/x\": {KEY_MSG}")),
            (cm("space", json!({}), json!({"k k": "eA=="})), format!("ConfigMap \"space\" is invalid: binaryData[k k]: Invalid value: \"k k\": {KEY_MSG}")),
            (cm("both", json!({"k": "x"}), json!({"k": "eA=="})), "ConfigMap \"both\" is invalid: data[k]: Invalid value: \"k\": duplicate of key present in binaryData".to_owned()),
        ];
        refused(&env, "v1", "configmaps", cases).await;
        let mut body = cm("generation", json!({}), json!({}));
        body["metadata"]["generation"] = json!(-1);
        let r = post(&env, "v1", "configmaps", body).await;
        assert_eq!(r.message(), "ConfigMap \"generation\" is invalid: metadata.generation: Invalid value: -1: must be greater than or equal to 0");
        // Immutable: data may not change, and neither may `immutable`.
        let r = post(&env, "v1", "configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "frozen", "labels": labels()}, "data": {"k": "v"}, "immutable": true})).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let path = format!("{}/frozen", env.path("v1", "configmaps"));
        let patch = json!({"data": {"k": "w"}, "immutable": false}).to_string();
        let r = env.raw("PATCH", &path, "application/merge-patch+json", &patch).await;
        assert_eq!(r.message(), "ConfigMap \"frozen\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]");
    })
    .await;
}

#[tokio::test]
async fn secrets_need_base64_the_keys_of_their_type_and_keep_their_type() {
    case("kinds-secret", |env| async move {
        let secret = |name: &str, ty: &str, data: Value| {
            json!({"apiVersion": "v1", "kind": "Secret", "type": ty,
                "metadata": {"name": name, "labels": labels()}, "data": data})
        };
        let r = post(&env, "v1", "secrets", secret("b64", "Opaque", json!({"k": "%%%"}))).await;
        assert_eq!(r.status(), (400, "BadRequest"));
        assert_eq!(r.message(), "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0");
        let cases = vec![
            (secret("basic", "kubernetes.io/basic-auth", json!({})),
                "Secret \"basic\" is invalid: [data[username]: Required value, data[password]: Required value]".to_owned()),
            (secret("tls", "kubernetes.io/tls", json!({"tls.crt": ""})),
                "Secret \"tls\" is invalid: data[tls.key]: Required value".to_owned()),
            (secret("docker", "kubernetes.io/dockerconfigjson", json!({".dockerconfigjson": "e30="})), String::new()),
            (secret("docker-bad", "kubernetes.io/dockerconfigjson", json!({".dockerconfigjson": "YWJj"})),
                "Secret \"docker-bad\" is invalid: data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": invalid character 'a' looking for beginning of value".to_owned()),
            (secret("sa", "kubernetes.io/service-account-token", json!({})),
                "Secret \"sa\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value".to_owned()),
            (secret("key", "Opaque", json!({"a b": "eA=="})),
                format!("Secret \"key\" is invalid: data[a b]: Invalid value: \"a b\": {KEY_MSG}")),
        ];
        for (body, want) in cases {
            let r = post(&env, "v1", "secrets", body.clone()).await;
            if want.is_empty() {
                assert_eq!(r.code, 201, "{body}: {}", r.body);
            } else {
                assert_eq!(r.status(), (422, "Invalid"), "{body}: {}", r.body);
                assert_eq!(r.message(), want);
            }
        }
        // The type cannot change.
        let path = format!("{}/docker", env.path("v1", "secrets"));
        let patch = json!({"type": "Opaque"}).to_string();
        let r = env.raw("PATCH", &path, "application/merge-patch+json", &patch).await;
        assert_eq!(r.message(), "Secret \"docker\" is invalid: type: Invalid value: \"Opaque\": field is immutable");
    })
    .await;
}

fn deployment(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels()}, "spec": spec})
}

fn template(labels: Value, containers: Value) -> Value {
    json!({"metadata": {"labels": labels}, "spec": {"containers": containers}})
}

#[tokio::test]
async fn deployments_are_validated_after_defaulting() {
    case("kinds-deployment", |env| async move {
        let web = || json!([{"name": "web", "image": "nginx"}]);
        let app = |a: &str| json!({"app": a});
        let sel = |a: &str| json!({"matchLabels": {"app": a}});
        let d = "Deployment.apps";
        let cases = vec![
            (deployment("no-selector", json!({"template": template(app("web"), web())})),
                format!("{d} \"no-selector\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {{\"app\":\"web\"}}: `selector` does not match template `labels`]")),
            (deployment("empty-selector", json!({"selector": {}, "template": template(app("web"), web())})),
                format!("{d} \"empty-selector\" is invalid: spec.selector: Invalid value: {{}}: empty selector is invalid for deployment")),
            (deployment("mismatch", json!({"selector": sel("a"), "template": template(app("b"), web())})),
                format!("{d} \"mismatch\" is invalid: spec.template.metadata.labels: Invalid value: {{\"app\":\"b\"}}: `selector` does not match template `labels`")),
            (deployment("no-containers", json!({"selector": sel("a"), "template": template(app("a"), json!([]))})),
                format!("{d} \"no-containers\" is invalid: spec.template.spec.containers: Required value")),
            (deployment("replicas", json!({"replicas": -1, "selector": sel("a"), "template": template(app("a"), web())})),
                format!("{d} \"replicas\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0")),
            (deployment("strategy", json!({"strategy": {"type": "Bogus"}, "selector": sel("a"), "template": template(app("a"), web())})),
                format!("{d} \"strategy\" is invalid: spec.strategy: Unsupported value: {{\"Type\":\"Bogus\",\"RollingUpdate\":null}}: supported values: \"Recreate\", \"RollingUpdate\"")),
            (deployment("recreate", json!({"strategy": {"type": "Recreate", "rollingUpdate": {}}, "selector": sel("a"), "template": template(app("a"), web())})),
                format!("{d} \"recreate\" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'")),
            (deployment("zero", json!({"strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}, "selector": sel("a"), "template": template(app("a"), web())})),
                format!("{d} \"zero\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0")),
            (deployment("container", json!({"selector": sel("a"), "template": template(app("a"), json!([{"ports": [{"containerPort": 70000, "protocol": "FOO"}, {"name": "http"}]}]))})),
                format!("{d} \"container\" is invalid: [spec.template.spec.containers[0].name: Required value, spec.template.spec.containers[0].image: Required value, spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.template.spec.containers[0].ports[0].protocol: Unsupported value: \"FOO\": supported values: \"SCTP\", \"TCP\", \"UDP\", spec.template.spec.containers[0].ports[1].containerPort: Required value]")),
            (deployment("restart", json!({"selector": sel("a"), "template": {"metadata": {"labels": app("a")}, "spec": {"restartPolicy": "OnFailure", "containers": web()}}})),
                format!("{d} \"restart\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"")),
            (deployment("mount", json!({"selector": sel("a"), "template": template(app("a"), json!([{"name": "web", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]))})),
                format!("{d} \"mount\" is invalid: spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\"")),
        ];
        refused(&env, "apps/v1", "deployments", cases).await;
        let ok = deployment("fine", json!({"selector": sel("a"), "template": template(app("a"), web())}));
        let r = post(&env, "apps/v1", "deployments", ok).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}
