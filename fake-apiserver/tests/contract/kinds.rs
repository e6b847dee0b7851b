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

/// `(apiVersion, plural, kind, fields besides metadata, expected message after the name)`.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    Value,
    &'static str,
);

#[tokio::test]
async fn workloads_services_rbac_and_leases_are_validated() {
    case("kinds-more", |env| async move {
        let template = |labels: Value| {
            json!({"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
        };
        let cases: Vec<Case> = vec![
            ("apps/v1", "replicasets", "ReplicaSet.apps", json!({"spec": {"template": template(json!({"a": "b"}))}}),
                "[spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`]"),
            ("apps/v1", "replicasets", "ReplicaSet.apps", json!({"spec": {"replicas": -2, "selector": {"matchLabels": {"a": "x"}}, "template": template(json!({"a": "b"}))}}),
                "[spec.replicas: Invalid value: -2: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`]"),
            ("apps/v1", "statefulsets", "StatefulSet.apps", json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template(json!({"a": "b"})), "podManagementPolicy": "Bogus", "updateStrategy": {"type": "Bogus"}}}),
                "[spec.podManagementPolicy: Invalid value: \"Bogus\": must be 'OrderedReady' or 'Parallel', spec.updateStrategy: Invalid value: {\"Type\":\"Bogus\",\"RollingUpdate\":null}: must be 'RollingUpdate' or 'OnDelete']"),
            ("apps/v1", "daemonsets", "DaemonSet.apps", json!({"spec": {"template": template(json!({"a": "b"}))}}),
                "spec.template.metadata.labels: Invalid value: {\"a\":\"b\"}: `selector` does not match template `labels`"),
            ("apps/v1", "daemonsets", "DaemonSet.apps", json!({"spec": {"selector": {}, "template": template(json!({"a": "b"}))}}),
                "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"),
            ("apps/v1", "daemonsets", "DaemonSet.apps", json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template(json!({"a": "b"})), "updateStrategy": {"type": "Bogus"}}}),
                "spec.updateStrategy: Unsupported value: {\"Type\":\"Bogus\",\"RollingUpdate\":null}: supported values: \"RollingUpdate\", \"OnDelete\""),
            ("batch/v1", "jobs", "Job.batch", json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}),
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""),
            ("batch/v1", "jobs", "Job.batch", json!({"spec": {"parallelism": -1, "completions": -1, "backoffLimit": -1, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
                "[spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.completions: Invalid value: -1: must be greater than or equal to 0, spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0]"),
            ("v1", "pods", "Pod", json!({"spec": {}}), "spec.containers: Required value"),
            ("v1", "pods", "Pod", json!({"spec": {"restartPolicy": "Sometimes", "containers": [{"name": "c", "image": "nginx"}]}}),
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""),
            ("v1", "pods", "Pod", json!({"spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}]}}),
                "spec.containers[0].resources.requests: Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi"),
            ("v1", "pods", "Pod", json!({"spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"memory": "-1"}}}]}}),
                "[spec.containers[0].resources.limits[memory]: Invalid value: \"-1\": must be greater than or equal to 0, spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0]"),
            ("v1", "services", "Service", json!({"spec": {}}), "spec.ports: Required value"),
            ("v1", "services", "Service", json!({"spec": {"ports": [{"port": 0}]}}),
                "[spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive]"),
            ("v1", "services", "Service", json!({"spec": {"type": "Bogus", "ports": [{"port": 80}, {"port": 81}]}}),
                "[spec.ports[0].name: Required value, spec.ports[1].name: Required value, spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"]"),
            ("v1", "services", "Service", json!({"spec": {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}}),
                "spec.ports[1].name: Duplicate value: \"a\""),
            ("v1", "services", "Service", json!({"spec": {"type": "ExternalName"}}), "spec.externalName: Required value"),
            ("rbac.authorization.k8s.io/v1", "roles", "Role.rbac.authorization.k8s.io", json!({"rules": [{"apiGroups": [""], "resources": ["pods"]}]}),
                "rules[0].verbs: Required value: verbs must contain at least one value"),
            ("rbac.authorization.k8s.io/v1", "roles", "Role.rbac.authorization.k8s.io", json!({"rules": [{"verbs": ["get"], "resources": ["pods"]}]}),
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group"),
            ("rbac.authorization.k8s.io/v1", "roles", "Role.rbac.authorization.k8s.io", json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}),
                "rules[0].nonResourceURLs: Invalid value: [\"/x\"]: namespaced rules cannot apply to non-resource URLs"),
            ("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding.rbac.authorization.k8s.io",
                json!({"roleRef": {"kind": "Bogus", "name": "x", "apiGroup": "rbac.authorization.k8s.io"}, "subjects": [{"kind": "Who", "name": ""}]}),
                "[roleRef.kind: Unsupported value: \"Bogus\": supported values: \"Role\", \"ClusterRole\", subjects[0].name: Required value, subjects[0].kind: Unsupported value: \"Who\": supported values: \"ServiceAccount\", \"User\", \"Group\"]"),
            ("coordination.k8s.io/v1", "leases", "Lease.coordination.k8s.io", json!({"spec": {"leaseDurationSeconds": -1, "leaseTransitions": -1}}),
                "[spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]"),
            // Validated as a core Event: no group in the message, and `regarding` must be in
            // the event's namespace (an empty one only in `default`).
            ("events.k8s.io/v1", "events", "Event", json!({"reason": "X"}),
                "[involvedObject.namespace: Invalid value: \"\": does not match event.namespace, eventTime: Required value, type: Invalid value: \"\": has invalid value: ]"),
        ];
        for (i, (gv, plural, qualified, fields, want)) in cases.into_iter().enumerate() {
            let kind = qualified.split('.').next().unwrap();
            let kind = if plural == "events" { "Event" } else { kind };
            let mut body = json!({"apiVersion": gv, "kind": kind,
                "metadata": {"name": format!("x{i}"), "labels": labels()}});
            for (k, v) in fields.as_object().unwrap() {
                body[k] = v.clone();
            }
            let r = post(&env, gv, plural, body).await;
            assert_eq!(r.status(), (422, "Invalid"), "{i} {plural}: {}", r.body);
            assert_eq!(r.message(), format!("{qualified} \"x{i}\" is invalid: {want}"), "{i} {plural}");
        }
    })
    .await;
}
