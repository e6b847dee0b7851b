//! The differential test: a seeded sequence of valid and invalid requests on ConfigMaps,
//! Secrets, ServiceAccounts and Deployments (creates, updates, patches of all four types,
//! server-side applies, deletes, gets and lists with odd parameters; bodies that do not
//! decode, such as a malformed time or quantity), each answered with a
//! code and a reason that are compared with kube-apiserver 1.36.2's.
//!
//! On the fake (CI), the answers are compared with the ones recorded from kube-apiserver
//! (`differential-1.36.2.json`). With `KUBE_CONTRACT_KUBECONFIG` the sequence runs on the
//! cluster and on an in-process fake side by side; `DIFFERENTIAL_RECORD=<file>` then writes
//! the cluster's answers as a new recording. Either way the agreement rate and every
//! disagreement are printed, and less than 98% agreement fails. `DIFFERENTIAL_SEED=<n>`
//! draws another sequence (on a cluster only: the recording is of the default one).

use serde_json::{Value, json};

use crate::env::{Env, RUN_LABEL, case, on_cluster, run_id};

const SEED: u64 = 0x5eed_2026;
const REQUESTS: usize = 200;
const RECORDING: &str = include_str!("differential-1.36.2.json");

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Copy)]
struct KindInfo {
    group_version: &'static str,
    plural: &'static str,
    kind: &'static str,
}

const KINDS: [KindInfo; 4] = [
    KindInfo {
        group_version: "v1",
        plural: "configmaps",
        kind: "ConfigMap",
    },
    KindInfo {
        group_version: "v1",
        plural: "secrets",
        kind: "Secret",
    },
    KindInfo {
        group_version: "v1",
        plural: "serviceaccounts",
        kind: "ServiceAccount",
    },
    KindInfo {
        group_version: "apps/v1",
        plural: "deployments",
        kind: "Deployment",
    },
];

fn valid(k: KindInfo, name: &str) -> Value {
    let mut obj = json!({"apiVersion": k.group_version, "kind": k.kind,
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}}});
    match k.kind {
        "ConfigMap" => obj["data"] = json!({"k": "v"}),
        "Secret" => obj["data"] = json!({"k": "dg=="}),
        "Deployment" => {
            obj["spec"] = json!({"replicas": 1, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}})
        }
        _ => {}
    }
    obj
}

/// Changes to a valid object, most of which the real server refuses: (name, merge patch).
fn mutations(kind: &str) -> Vec<(&'static str, Value)> {
    let common = vec![
        ("none", json!({})),
        ("bad-label", json!({"metadata": {"labels": {"a b": "c"}}})),
        (
            "bad-label-value",
            json!({"metadata": {"labels": {"a": "-x-"}}}),
        ),
        (
            "bad-annotation-key",
            json!({"metadata": {"annotations": {"/x": "y"}}}),
        ),
        (
            "bad-finalizer",
            json!({"metadata": {"finalizers": ["no-slash"]}}),
        ),
        (
            "ok-finalizer",
            json!({"metadata": {"finalizers": ["example.com/x"]}}),
        ),
        (
            "bad-time",
            json!({"metadata": {"creationTimestamp": "garbage"}}),
        ),
        ("bad-rv", json!({"metadata": {"resourceVersion": "abc"}})),
    ];
    let own: Vec<(&'static str, Value)> = match kind {
        "ConfigMap" => vec![
            ("dot-key", json!({"data": {".": "x"}})),
            ("slash-key", json!({"data": {"k/x": "x"}})),
            ("space-key", json!({"data": {"k k": "x"}})),
            (
                "dup-binary",
                json!({"data": {"d": "x"}, "binaryData": {"d": "eA=="}}),
            ),
            ("bad-base64", json!({"binaryData": {"b": "%%%"}})),
            ("number-value", json!({"data": {"n": 1}})),
            ("ok-keys", json!({"data": {"a.b-c_d": "x"}})),
            ("immutable", json!({"immutable": true})),
        ],
        "Secret" => vec![
            ("bad-base64", json!({"data": {"k": "%%%"}})),
            ("space-key", json!({"data": {"a b": "eA=="}})),
            ("basic-auth", json!({"type": "kubernetes.io/basic-auth"})),
            ("tls", json!({"type": "kubernetes.io/tls"})),
            (
                "dockerconfigjson",
                json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "YWJj"}}),
            ),
            ("string-data", json!({"stringData": {"s": "plain"}})),
            (
                "ssh",
                json!({"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": "eA=="}}),
            ),
        ],
        "ServiceAccount" => vec![
            (
                "automount-string",
                json!({"automountServiceAccountToken": "yes"}),
            ),
            ("secrets", json!({"secrets": [{"name": "anything"}]})),
            ("pull-secrets", json!({"imagePullSecrets": [{"name": ""}]})),
            ("automount", json!({"automountServiceAccountToken": false})),
        ],
        _ => vec![
            ("no-selector", json!({"spec": {"selector": null}})),
            (
                "mismatch",
                json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
            ),
            (
                "no-containers",
                json!({"spec": {"template": {"spec": {"containers": []}}}}),
            ),
            (
                "nameless",
                json!({"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}}),
            ),
            ("replicas", json!({"spec": {"replicas": -1}})),
            ("replicas-string", json!({"spec": {"replicas": "3"}})),
            ("strategy", json!({"spec": {"strategy": {"type": "Bogus"}}})),
            (
                "recreate-rolling",
                json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}}),
            ),
            (
                "port",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"name": "http"}]}]}}}}),
            ),
            (
                "port-range",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 70000}]}]}}}}),
            ),
            (
                "zero-rolling",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}}),
            ),
            ("scale", json!({"spec": {"replicas": 5}})),
            (
                "bad-quantity",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "banana"}}}]}}}}),
            ),
            (
                "surge-float",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1.5}}}}),
            ),
            (
                "restart",
                json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}),
            ),
        ],
    };
    common.into_iter().chain(own).collect()
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// One request: what it is (for the recording), and how to send it.
struct Request {
    what: String,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: String,
    /// A valid object to create first (the request's target).
    setup: Option<(String, String)>,
}

fn generate(env: &Env, seed: u64) -> Vec<Request> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for i in 0..REQUESTS {
        let k = *rng.pick(&KINDS);
        let name = format!("o{i}");
        let collection = env.path(k.group_version, k.plural);
        let item = format!("{collection}/{name}");
        let muts = mutations(k.kind);
        let (m, change) = rng.pick(&muts).clone();
        let op = *rng.pick(&[
            "create",
            "create",
            "update",
            "merge",
            "json",
            "strategic",
            "apply",
            "delete",
            "get",
            "list",
        ]);
        let setup = Some((collection.clone(), valid(k, &name).to_string()));
        let mut changed = valid(k, &name);
        merge(&mut changed, &change);
        let (method, path, content_type, body, setup) = match op {
            "create" => (
                "POST",
                collection.clone(),
                "application/json",
                changed.to_string(),
                None,
            ),
            "update" => ("PUT", item, "application/json", changed.to_string(), setup),
            "merge" => (
                "PATCH",
                item,
                "application/merge-patch+json",
                change.to_string(),
                setup,
            ),
            "strategic" => (
                "PATCH",
                item,
                "application/strategic-merge-patch+json",
                change.to_string(),
                setup,
            ),
            "json" => {
                let ops: Vec<Value> = change
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| json!({"op": "add", "path": format!("/{k}"), "value": v}))
                    .collect();
                let ops = if rng.chance(15) {
                    json!([{"op": "remove", "path": "/metadata/name"}])
                } else if rng.chance(10) {
                    json!([{"op": "remove", "path": "/nothing/here"}])
                } else {
                    Value::Array(ops)
                };
                (
                    "PATCH",
                    item,
                    "application/json-patch+json",
                    ops.to_string(),
                    setup,
                )
            }
            "apply" => {
                // No manager, or an empty one: both the PatchOptions 422.
                let manager = if rng.chance(15) {
                    if i % 2 == 0 { "" } else { "?fieldManager=" }
                } else {
                    "?fieldManager=differential"
                };
                let existing = if rng.chance(50) { setup } else { None };
                (
                    "PATCH",
                    format!("{item}{manager}"),
                    "application/apply-patch+yaml",
                    changed.to_string(),
                    existing,
                )
            }
            "delete" => {
                let options = *rng.pick(&[
                    "{}",
                    r#"{"propagationPolicy":"Sideways"}"#,
                    r#"{"gracePeriodSeconds":-5}"#,
                    r#"{"preconditions":{"uid":"not-it"}}"#,
                ]);
                let existing = if rng.chance(70) { setup } else { None };
                (
                    "DELETE",
                    item,
                    "application/json",
                    options.to_owned(),
                    existing,
                )
            }
            "get" => {
                let existing = if rng.chance(50) { setup } else { None };
                ("GET", item, "", String::new(), existing)
            }
            _ => {
                let query = *rng.pick(&[
                    "limit=2",
                    "limit=-1",
                    "limit=abc",
                    "labelSelector=a%3Db%2C%3D",
                    "labelSelector=app+in+(a,b)",
                    "fieldSelector=metadata.name%3Dx",
                    "fieldSelector=spec.bogus%3D1",
                    "resourceVersionMatch=NotOlderThan",
                    "resourceVersion=0&resourceVersionMatch=Exact",
                    "timeoutSeconds=abc",
                ]);
                (
                    "GET",
                    format!("{collection}?{query}"),
                    "",
                    String::new(),
                    None,
                )
            }
        };
        let strict = op != "get" && op != "list" && op != "delete" && rng.chance(15);
        let path = if strict {
            let sep = if path.contains('?') { '&' } else { '?' };
            format!("{path}{sep}fieldValidation=Strict")
        } else {
            path
        };
        let what = format!(
            "{i} {op} {} {m}{}",
            k.plural,
            if strict { " strict" } else { "" }
        );
        out.push(Request {
            what,
            method,
            path,
            content_type,
            body,
            setup,
        });
    }
    out
}

/// `(code, reason)` of each request, in order.
async fn run(env: &Env, requests: &[Request]) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    for r in requests {
        if let Some((collection, object)) = &r.setup {
            let made = env
                .raw("POST", collection, "application/json", object)
                .await;
            assert_eq!(made.code, 201, "setup of {}: {}", r.what, made.body);
        }
        let answer = env.raw(r.method, &r.path, r.content_type, &r.body).await;
        out.push((answer.code, answer.status().1.to_owned()));
    }
    out
}

fn compare(label: &str, requests: &[Request], theirs: &[(u16, String)], ours: &[(u16, String)]) {
    let mut agree = 0;
    let mut report = String::new();
    for ((r, t), o) in requests.iter().zip(theirs).zip(ours) {
        if t == o {
            agree += 1;
        } else {
            report.push_str(&format!(
                "  {}: {label} {} {}, fake {} {}\n",
                r.what, t.0, t.1, o.0, o.1
            ));
        }
    }
    let rate = agree as f64 * 100.0 / requests.len() as f64;
    println!(
        "differential: fake agrees with {label} on {agree} of {} requests ({rate:.1}%)",
        requests.len()
    );
    print!("{report}");
    assert!(rate >= 98.0, "agreement {rate:.1}% is below 98%:\n{report}");
}

#[tokio::test]
async fn the_fake_answers_random_requests_as_kube_apiserver_does() {
    case("differential", |env| async move {
        // Another seed (`DIFFERENTIAL_SEED`) only where there is a cluster to compare with.
        let seed = std::env::var("DIFFERENTIAL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|_| on_cluster())
            .unwrap_or(SEED);
        let requests = generate(&env, seed);
        let answers = run(&env, &requests).await;
        if on_cluster() {
            if let Ok(file) = std::env::var("DIFFERENTIAL_RECORD") {
                let recorded: Vec<Value> = requests
                    .iter()
                    .zip(&answers)
                    .map(|(r, (code, reason))| json!({"request": r.what, "code": code, "reason": reason}))
                    .collect();
                let text = serde_json::to_string_pretty(&json!({
                    "recorded": "kube-apiserver by the differential test (DIFFERENTIAL_RECORD)",
                    "answers": recorded,
                }))
                .unwrap();
                std::fs::write(&file, text + "\n").unwrap();
            }
            let twin = env.fake_twin().await;
            let fake = run(&twin, &generate(&twin, seed)).await;
            compare("the cluster", &requests, &answers, &fake);
        } else {
            let recording: Value = serde_json::from_str(RECORDING).unwrap();
            let recorded = recording["answers"].as_array().unwrap();
            assert_eq!(recorded.len(), requests.len(), "the generator changed: record again");
            let mut theirs = Vec::new();
            for (r, rec) in requests.iter().zip(recorded) {
                assert_eq!(rec["request"], r.what.as_str(), "the generator changed: record again");
                theirs.push((rec["code"].as_u64().unwrap() as u16, rec["reason"].as_str().unwrap().to_owned()));
            }
            compare("kube-apiserver 1.36.2 (recorded)", &requests, &theirs, &answers);
        }
    })
    .await;
}
