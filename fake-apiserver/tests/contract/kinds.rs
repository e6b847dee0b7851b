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

/// (group/version, plural, name, `kind` and fields, message).
type Refusal = (
    &'static str,
    &'static str,
    &'static str,
    Value,
    &'static str,
);

/// The collection of a kind the cases below use: IngressClasses and PriorityClasses are
/// cluster-scoped.
fn collection_of(env: &Env, group_version: &str, plural: &str) -> String {
    if matches!(plural, "ingressclasses" | "priorityclasses") {
        format!("/apis/{group_version}/{plural}")
    } else {
        env.path(group_version, plural)
    }
}

/// Sends `fields` (with `kind`) as a new object named `name` of the collection.
async fn post_named(
    env: &Env,
    group_version: &str,
    plural: &str,
    name: &str,
    fields: &Value,
) -> crate::env::Raw {
    let mut body = json!({"apiVersion": group_version,
        "metadata": {"name": name, "labels": labels()}});
    for (k, v) in fields.as_object().unwrap() {
        body[k] = v.clone();
    }
    let path = collection_of(env, group_version, plural);
    env.raw("POST", &path, "application/json", &body.to_string())
        .await
}

/// The kinds operators write besides workloads (issue 35): each refused with
/// kube-apiserver 1.36.2's message, after its defaults (an HPA's `minReplicas` and CPU
/// metric, a NetworkPolicy's protocols, an EndpointSlice's port protocols); and a few
/// shapes it accepts.
#[tokio::test]
async fn operator_kinds_are_validated() {
    case("kinds-operators", |env| async move {
        let cases: Vec<Refusal> = vec![
            ("networking.k8s.io/v1", "networkpolicies", "np-proto", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP", "port": 80}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-proto" is invalid: spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#),
            ("networking.k8s.io/v1", "networkpolicies", "np-port", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 0}, {"port": 70000}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-port" is invalid: [spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, spec.ingress[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive]"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-endport", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 80, "endPort": 70}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-endport" is invalid: spec.egress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-endport-named", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "egress": [{"ports": [{"port": "http", "endPort": 90}, {"endPort": 90}, {"port": "Bad_Name"}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-endport-named" is invalid: [spec.egress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric, spec.egress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is not specified, spec.egress[0].ports[2].port: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)]"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-peer-empty", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "ingress": [{"from": [{}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-peer-empty" is invalid: spec.ingress[0].from[0]: Required value: must specify a peer"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-peer-both", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-peer-both" is invalid: spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-cidr", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0"}}, {"ipBlock": {"cidr": ""}}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-cidr" is invalid: [spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64), spec.egress[0].to[1].ipBlock.cidr: Required value]"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-except", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.0.0.0/8"]}}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-except" is invalid: [spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`, spec.egress[0].to[0].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`]"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-types", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "policyTypes": ["Foo"]}}),
                r#"NetworkPolicy.networking.k8s.io "np-types" is invalid: spec.policyTypes[0]: Unsupported value: "Foo": supported values: "Ingress", "Egress""#),
            ("networking.k8s.io/v1", "networkpolicies", "np-types3", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress", "Ingress"]}}),
                r#"NetworkPolicy.networking.k8s.io "np-types3" is invalid: spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-selector", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {"matchLabels": {"a": "b c"}}}}),
                r#"NetworkPolicy.networking.k8s.io "np-selector" is invalid: spec.podSelector.matchLabels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#),
            ("networking.k8s.io/v1", "networkpolicies", "np-ns-selector", json!({"kind": "NetworkPolicy", "spec": {"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}}]}]}}),
                r#"NetworkPolicy.networking.k8s.io "np-ns-selector" is invalid: spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator"#),
            ("networking.k8s.io/v1", "ingressclasses", "ic-nocontroller", json!({"kind": "IngressClass", "spec": {}}),
                r#"IngressClass.networking.k8s.io "ic-nocontroller" is invalid: spec.controller: Required value"#),
            ("networking.k8s.io/v1", "ingressclasses", "ic-controller-bad", json!({"kind": "IngressClass", "spec": {"controller": "nginx"}}),
                r#"IngressClass.networking.k8s.io "ic-controller-bad" is invalid: spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")"#),
            ("networking.k8s.io/v1", "ingressclasses", "ic-params-scope", json!({"kind": "IngressClass", "spec": {"controller": "a.b/c", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}}),
                r#"IngressClass.networking.k8s.io "ic-params-scope" is invalid: spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"#),
            ("networking.k8s.io/v1", "ingressclasses", "ic-params-kind", json!({"kind": "IngressClass", "spec": {"controller": "a.b/c", "parameters": {"name": "n", "scope": "Foo"}}}),
                r#"IngressClass.networking.k8s.io "ic-params-kind" is invalid: [spec.parameters.kind: Required value, spec.parameters.scope: Unsupported value: "Foo": supported values: "Cluster", "Namespace"]"#),
            ("networking.k8s.io/v1", "ingressclasses", "ic-params-ns", json!({"kind": "IngressClass", "spec": {"controller": "a.b/c", "parameters": {"kind": "K", "name": "n", "namespace": "x"}}}),
                r#"IngressClass.networking.k8s.io "ic-params-ns" is invalid: spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"#),
            ("networking.k8s.io/v1", "ingresses", "ing-nopathtype", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "/", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-nopathtype" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"#),
            ("networking.k8s.io/v1", "ingresses", "ing-pathtype-bad", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Foo", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-pathtype-bad" is invalid: spec.rules[0].http.paths[0].pathType: Unsupported value: "Foo": supported values: "Exact", "ImplementationSpecific", "Prefix""#),
            ("networking.k8s.io/v1", "ingresses", "ing-path-relative", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "foo", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-path-relative" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#),
            ("networking.k8s.io/v1", "ingresses", "ing-path-exact-empty", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"pathType": "Exact", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-path-exact-empty" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "": must be an absolute path"#),
            ("networking.k8s.io/v1", "ingresses", "ing-nobackend", json!({"kind": "Ingress", "spec": {}}),
                r#"Ingress.networking.k8s.io "ing-nobackend" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"#),
            ("networking.k8s.io/v1", "ingresses", "ing-backend-both", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}, "resource": {"kind": "K", "name": "n"}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-backend-both" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends"#),
            ("networking.k8s.io/v1", "ingresses", "ing-backend-none", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-backend-none" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: "": resource or service backend is required"#),
            ("networking.k8s.io/v1", "ingresses", "ing-service-port", json!({"kind": "Ingress", "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {}}}}]}}]}}),
                r#"Ingress.networking.k8s.io "ing-service-port" is invalid: spec.rules[0].http.paths[0].backend: Required value: port name or number is required"#),
            ("networking.k8s.io/v1", "ingresses", "ing-service-port0", json!({"kind": "Ingress", "spec": {"defaultBackend": {"service": {"name": "S", "port": {"number": 0, "name": "x"}}}}}),
                r#"Ingress.networking.k8s.io "ing-service-port0" is invalid: spec.defaultBackend.service.name: Invalid value: "S": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#),
            ("networking.k8s.io/v1", "ingresses", "ing-host-bad", json!({"kind": "Ingress", "spec": {"rules": [{"host": "Example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}, {"host": "1.2.3.4"}, {"host": "*.a.b"}, {"host": "a.*.b"}]}}),
                r#"Ingress.networking.k8s.io "ing-host-bad" is invalid: [spec.rules[0].host: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.rules[1].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address, spec.rules[3].host: Invalid value: "a.*.b": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"#),
            ("networking.k8s.io/v1", "ingresses", "ing-class", json!({"kind": "Ingress", "spec": {"ingressClassName": "Bad_Class", "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}),
                r#"Ingress.networking.k8s.io "ing-class" is invalid: spec.ingressClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#),
            ("networking.k8s.io/v1", "ingresses", "ing-nopaths", json!({"kind": "Ingress", "spec": {"rules": [{"host": "a.b", "http": {"paths": []}}]}}),
                r#"Ingress.networking.k8s.io "ing-nopaths" is invalid: spec.rules[0].http.paths: Required value"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-empty", json!({"kind": "HorizontalPodAutoscaler", "spec": {}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-empty" is invalid: [spec.maxReplicas: Required value: must be set and greater than 0, spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value, spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group]"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-min0", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "minReplicas": 0, "maxReplicas": 3}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-min0" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-max-lt-min", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "minReplicas": 5, "maxReplicas": 3}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-max-lt-min" is invalid: spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-metric-type", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, "metrics": [{"type": "Foo"}]}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-metric-type" is invalid: spec.metrics[0].type: Unsupported value: "Foo": supported values: "ContainerResource", "External", "Object", "Pods", "Resource""#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-resource-missing", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, "metrics": [{"type": "Resource"}, {"type": "Pods"}, {"type": "Object"}, {"type": "External"}, {"type": "ContainerResource"}]}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-resource-missing" is invalid: [spec.metrics[0].resource: Required value: must populate information for the given metric source, spec.metrics[1].pods: Required value: must populate information for the given metric source, spec.metrics[2].object: Required value: must populate information for the given metric source, spec.metrics[3].external: Required value: must populate information for the given metric source, spec.metrics[4].containerResource: Required value: must populate information for the given metric source]"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-target-bad", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}, {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Foo"}}}, {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageUtilization": 50}}}]}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-target-bad" is invalid: [spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization, spec.metrics[1].resource.target.type: Invalid value: "Foo": must be either Utilization, Value, or AverageValue, spec.metrics[1].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization]"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-two-sources", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}, "pods": {"metric": {"name": "m"}, "target": {"type": "AverageValue", "averageValue": "1"}}}]}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-two-sources" is invalid: spec.metrics[0].pods: Forbidden: must populate the given metric source only"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-behavior-policy", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3, "behavior": {"scaleUp": {"selectPolicy": "Foo", "stabilizationWindowSeconds": -1, "policies": [{"type": "Foo", "value": 0, "periodSeconds": 0}]}}}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-behavior-policy" is invalid: [spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero, spec.behavior.scaleUp.selectPolicy: Unsupported value: "Foo": supported values: "Disabled", "Max", "Min", spec.behavior.scaleUp.policies[0].type: Unsupported value: "Foo": supported values: "Percent", "Pods", spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero, spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 0: must be greater than zero]"#),
            ("autoscaling/v2", "horizontalpodautoscalers", "hpa-ref-bad", json!({"kind": "HorizontalPodAutoscaler", "spec": {"scaleTargetRef": {"kind": "a/b", "name": "x/y"}, "maxReplicas": 3}}),
                r#"HorizontalPodAutoscaler.autoscaling "hpa-ref-bad" is invalid: [spec.scaleTargetRef.kind: Invalid value: "a/b": may not contain '/', spec.scaleTargetRef.name: Invalid value: "x/y": may not contain '/', spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group]"#),
            ("policy/v1", "poddisruptionbudgets", "pdb-both", json!({"kind": "PodDisruptionBudget", "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"app": "x"}}}}),
                r#"PodDisruptionBudget.policy "pdb-both" is invalid: spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"x"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set"#),
            ("policy/v1", "poddisruptionbudgets", "pdb-percent", json!({"kind": "PodDisruptionBudget", "spec": {"minAvailable": "150%"}}),
                r#"PodDisruptionBudget.policy "pdb-percent" is invalid: spec.minAvailable: Invalid value: "150%": must not be greater than 100%"#),
            ("policy/v1", "poddisruptionbudgets", "pdb-negative", json!({"kind": "PodDisruptionBudget", "spec": {"maxUnavailable": -1}}),
                r#"PodDisruptionBudget.policy "pdb-negative" is invalid: spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"#),
            ("policy/v1", "poddisruptionbudgets", "pdb-bad-string", json!({"kind": "PodDisruptionBudget", "spec": {"maxUnavailable": "abc"}}),
                r#"PodDisruptionBudget.policy "pdb-bad-string" is invalid: spec.maxUnavailable: Invalid value: "abc": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"#),
            ("policy/v1", "poddisruptionbudgets", "pdb-policy", json!({"kind": "PodDisruptionBudget", "spec": {"unhealthyPodEvictionPolicy": "Foo"}}),
                r#"PodDisruptionBudget.policy "pdb-policy" is invalid: spec.unhealthyPodEvictionPolicy: Unsupported value: "Foo": supported values: "AlwaysAllow", "IfHealthyBudget""#),
            ("policy/v1", "poddisruptionbudgets", "pdb-selector-bad", json!({"kind": "PodDisruptionBudget", "spec": {"selector": {"matchLabels": {"a b": "c"}}}}),
                r#"PodDisruptionBudget.policy "pdb-selector-bad" is invalid: spec.selector.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-noaddresstype", json!({"kind": "EndpointSlice", "endpoints": []}),
                r#"EndpointSlice.discovery.k8s.io "eps-noaddresstype" is invalid: addressType: Required value"#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-addresstype-bad", json!({"kind": "EndpointSlice", "addressType": "IPv5"}),
                r#"EndpointSlice.discovery.k8s.io "eps-addresstype-bad" is invalid: addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6""#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-addr-bad", json!({"kind": "EndpointSlice", "addressType": "IPv4", "endpoints": [{"addresses": ["foo"]}, {"addresses": []}, {"addresses": ["fd00::1"]}]}),
                r#"EndpointSlice.discovery.k8s.io "eps-addr-bad" is invalid: [endpoints[0].addresses[0]: Invalid value: "foo": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), endpoints[1].addresses: Required value: must contain at least 1 address, endpoints[2].addresses: Invalid value: "fd00::1": must be an IPv4 address]"#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-fqdn", json!({"kind": "EndpointSlice", "addressType": "FQDN", "endpoints": [{"addresses": ["Not_A_Name"]}]}),
                r#"EndpointSlice.discovery.k8s.io "eps-fqdn" is invalid: endpoints[0].addresses[0]: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-port", json!({"kind": "EndpointSlice", "addressType": "IPv4", "ports": [{"protocol": "ICMP", "port": 80}, {"name": "Foo_Bar", "port": 0}, {"name": "a", "port": 1}, {"name": "a", "port": 2}]}),
                r#"EndpointSlice.discovery.k8s.io "eps-port" is invalid: [ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP", ports[1].name: Invalid value: "Foo_Bar": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ports[3].name: Duplicate value: "a"]"#),
            ("discovery.k8s.io/v1", "endpointslices", "eps-hostname", json!({"kind": "EndpointSlice", "addressType": "IPv4", "endpoints": [{"addresses": ["1.2.3.4"], "hostname": "A_B", "nodeName": "n/x", "targetRef": {"kind": "Pod"}}]}),
                r#"EndpointSlice.discovery.k8s.io "eps-hostname" is invalid: [endpoints[0].nodeName: Invalid value: "n/x": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), endpoints[0].hostname: Invalid value: "A_B": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]"#),
            ("scheduling.k8s.io/v1", "priorityclasses", "pc-value-high", json!({"kind": "PriorityClass", "value": 2000000000}),
                r#"PriorityClass.scheduling.k8s.io "pc-value-high" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"#),
            ("scheduling.k8s.io/v1", "priorityclasses", "system-foo", json!({"kind": "PriorityClass", "value": 1}),
                r#"PriorityClass.scheduling.k8s.io "system-foo" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class"#),
            ("scheduling.k8s.io/v1", "priorityclasses", "pc-preemption", json!({"kind": "PriorityClass", "value": 1, "preemptionPolicy": "Sometimes"}),
                r#"PriorityClass.scheduling.k8s.io "pc-preemption" is invalid: preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never""#),
            ("v1", "persistentvolumeclaims", "pvc-empty", json!({"kind": "PersistentVolumeClaim", "spec": {}}),
                r#"PersistentVolumeClaim "pvc-empty" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]"#),
            ("v1", "persistentvolumeclaims", "pvc-mode-bad", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteSometimes"], "resources": {"requests": {"storage": "1Gi"}}}}),
                r#"PersistentVolumeClaim "pvc-mode-bad" is invalid: spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod""#),
            ("v1", "persistentvolumeclaims", "pvc-volmode-bad", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Foo", "resources": {"requests": {"storage": "1Gi"}}}}),
                r#"PersistentVolumeClaim "pvc-volmode-bad" is invalid: spec.volumeMode: Unsupported value: "Foo": supported values: "Block", "Filesystem""#),
            ("v1", "persistentvolumeclaims", "pvc-storage-zero", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}}),
                r#"PersistentVolumeClaim "pvc-storage-zero" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero"#),
            ("v1", "persistentvolumeclaims", "pvc-storage-neg", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "-1Gi"}, "limits": {"storage": "1"}}}}),
                r#"PersistentVolumeClaim "pvc-storage-neg" is invalid: spec.resources[storage]: Invalid value: "-1Gi": must be greater than zero"#),
            ("v1", "persistentvolumeclaims", "pvc-rwop-mix", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
                r#"PersistentVolumeClaim "pvc-rwop-mix" is invalid: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"#),
            ("v1", "persistentvolumeclaims", "pvc-class", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "Bad_Class", "resources": {"requests": {"storage": "1Gi"}}}}),
                r#"PersistentVolumeClaim "pvc-class" is invalid: spec.storageClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#),
            ("v1", "persistentvolumeclaims", "pvc-nostorage", json!({"kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"cpu": "1"}}}}),
                r#"PersistentVolumeClaim "pvc-nostorage" is invalid: spec.resources[storage]: Required value"#),
        ];
        let mut wrong = Vec::new();
        for (gv, plural, name, fields, want) in &cases {
            let r = post_named(&env, gv, plural, name, fields).await;
            if r.status() != (422, "Invalid") || r.message() != *want {
                wrong.push(format!("{name}: {} {}\n  want {want}", r.code, r.message()));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let accepted: Vec<(&str, &str, &str, Value)> = vec![
            ("networking.k8s.io/v1", "ingresses", "ing-tls", json!({"kind": "Ingress", "spec": {"tls": [{"hosts": ["*.a"]}], "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}})),
            ("policy/v1", "poddisruptionbudgets", "pdb-empty", json!({"kind": "PodDisruptionBudget", "spec": {}})),

        ];
        for (gv, plural, name, fields) in &accepted {
            let r = post_named(&env, gv, plural, name, fields).await;
            assert_eq!(r.code, 201, "{name}: {}", r.body);
        }
    })
    .await;
}
