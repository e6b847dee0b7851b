//! Bodies nested deeper than any client writes them, to every verb that reads a body:
//! create, update, the four patch types (apply included) and delete, as JSON and YAML.
//!
//! The answers are kube-apiserver 1.36.2's (`deep-1.36.2.json`: code, reason, and message
//! with the case's namespace replaced by `NAMESPACE`). With `KUBE_CONTRACT_KUBECONFIG` the
//! cluster must give them again; with `DEEP_RECORD=<file>` as well, they are written as a
//! new recording instead. The fake gives them too, except where the real server reads a
//! body that the fake does not ([`FAKE_READS_LESS`]): valid JSON nested more than 127
//! deep (kube-apiserver reads 10,000), or YAML more than 64 deep. There the fake answers
//! 400 BadRequest saying so. Afterwards the server must still answer.

use serde_json::{Value, json};

use crate::env::{Env, RUN_LABEL, case, on_cluster, run_id};

const RECORDING: &str = include_str!("deep-1.36.2.json");

/// The cases kube-apiserver reads and the fake refuses, for depth alone.
const FAKE_READS_LESS: &[&str] = &[
    "create-json-objects-3000",
    "create-json-configmap-data-objects-3000",
    "create-yaml-objects-3000",
    "create-yaml-block-1000",
    "update-json-objects-3000",
    "merge-patch-objects-3000",
    "strategic-merge-patch-objects-3000",
    "json-patch-objects-3000",
    "apply-objects-3000",
];

fn arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn objects(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

/// A ConfigMap named `name` whose `data` is `data`.
fn configmap(name: &str, data: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{data}}}"#
    )
}

/// Block YAML (`a:` under `a:` ...) `depth` deep.
fn block(depth: usize) -> String {
    let mut out: String = (0..depth)
        .map(|i| format!("{}a:\n", "  ".repeat(i)))
        .collect();
    out.push_str(&format!("{}b: 1\n", "  ".repeat(depth)));
    out
}

/// One request: its name, method, whether it addresses the object `c` (else the
/// collection), query, content type and body.
struct Deep {
    name: &'static str,
    method: &'static str,
    item: bool,
    content_type: &'static str,
    body: String,
}

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";
const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

fn cases() -> Vec<Deep> {
    let deep = |name, method, item, content_type, body| Deep {
        name,
        method,
        item,
        content_type,
        body,
    };
    vec![
        // The reproduction of the issue: 100,000 arrays, 200 KB.
        deep(
            "create-json-arrays-100000",
            "POST",
            false,
            JSON,
            arrays(100_000),
        ),
        deep(
            "create-json-arrays-10001",
            "POST",
            false,
            JSON,
            arrays(10_001),
        ),
        deep(
            "create-json-arrays-4500",
            "POST",
            false,
            JSON,
            arrays(4_500),
        ),
        deep(
            "create-json-arrays-3000",
            "POST",
            false,
            JSON,
            arrays(3_000),
        ),
        deep(
            "create-json-objects-3000",
            "POST",
            false,
            JSON,
            objects(3_000),
        ),
        deep(
            "create-json-objects-10001",
            "POST",
            false,
            JSON,
            objects(10_001),
        ),
        deep(
            "create-json-configmap-data-arrays-100000",
            "POST",
            false,
            JSON,
            configmap("x", &arrays(100_000)),
        ),
        deep(
            "create-json-configmap-data-objects-3000",
            "POST",
            false,
            JSON,
            configmap("x", &objects(3_000)),
        ),
        deep(
            "create-yaml-arrays-100000",
            "POST",
            false,
            YAML,
            arrays(100_000),
        ),
        deep(
            "create-yaml-arrays-3000",
            "POST",
            false,
            YAML,
            arrays(3_000),
        ),
        deep(
            "create-yaml-objects-3000",
            "POST",
            false,
            YAML,
            objects(3_000),
        ),
        deep(
            "create-yaml-configmap-data-arrays-100000",
            "POST",
            false,
            YAML,
            configmap("x", &arrays(100_000)),
        ),
        deep("create-yaml-block-1000", "POST", false, YAML, block(1_000)),
        deep(
            "update-json-arrays-100000",
            "PUT",
            true,
            JSON,
            arrays(100_000),
        ),
        deep("update-json-arrays-3000", "PUT", true, JSON, arrays(3_000)),
        deep(
            "update-json-objects-3000",
            "PUT",
            true,
            JSON,
            objects(3_000),
        ),
        deep(
            "update-yaml-arrays-100000",
            "PUT",
            true,
            YAML,
            arrays(100_000),
        ),
        deep(
            "merge-patch-arrays-100000",
            "PATCH",
            true,
            MERGE,
            arrays(100_000),
        ),
        deep(
            "merge-patch-objects-3000",
            "PATCH",
            true,
            MERGE,
            objects(3_000),
        ),
        deep(
            "merge-patch-data-arrays-100000",
            "PATCH",
            true,
            MERGE,
            format!(r#"{{"data":{{"k":{}}}}}"#, arrays(100_000)),
        ),
        deep(
            "strategic-merge-patch-arrays-100000",
            "PATCH",
            true,
            STRATEGIC,
            arrays(100_000),
        ),
        deep(
            "strategic-merge-patch-objects-3000",
            "PATCH",
            true,
            STRATEGIC,
            objects(3_000),
        ),
        deep(
            "json-patch-arrays-100000",
            "PATCH",
            true,
            JSON_PATCH,
            arrays(100_000),
        ),
        deep(
            "json-patch-objects-3000",
            "PATCH",
            true,
            JSON_PATCH,
            objects(3_000),
        ),
        deep(
            "json-patch-value-arrays-100000",
            "PATCH",
            true,
            JSON_PATCH,
            format!(
                r#"[{{"op":"add","path":"/data/k","value":{}}}]"#,
                arrays(100_000)
            ),
        ),
        deep("apply-arrays-100000", "PATCH", true, APPLY, arrays(100_000)),
        deep("apply-objects-3000", "PATCH", true, APPLY, objects(3_000)),
        deep(
            "apply-configmap-data-arrays-100000",
            "PATCH",
            true,
            APPLY,
            configmap("c", &arrays(100_000)),
        ),
        deep(
            "delete-json-arrays-100000",
            "DELETE",
            true,
            JSON,
            arrays(100_000),
        ),
    ]
}

/// Sends one case; its answer as recorded: code, reason, message.
async fn send(env: &Env, deep: &Deep) -> Value {
    let mut path = env.path("v1", "configmaps");
    if deep.item {
        path.push_str("/c");
    }
    if deep.content_type == APPLY {
        path.push_str("?fieldManager=deep");
    }
    let r = env
        .raw(deep.method, &path, deep.content_type, &deep.body)
        .await;
    let (code, reason) = r.status();
    json!({
        "case": deep.name,
        "code": code,
        "reason": reason,
        "message": r.message().replace(&env.ns, "NAMESPACE"),
    })
}

#[tokio::test]
async fn deep_bodies_get_kube_apiservers_answers_and_the_server_stays_up() {
    case("deep", |env| async move {
        let labels = json!({RUN_LABEL: run_id()});
        let target = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": labels}, "data": {"k": "v"}});
        let r = env
            .raw(
                "POST",
                &env.path("v1", "configmaps"),
                JSON,
                &target.to_string(),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);

        let cases = cases();
        let mut answers = Vec::new();
        for deep in &cases {
            answers.push(send(&env, deep).await);
        }
        let record = std::env::var("DEEP_RECORD").ok().filter(|_| on_cluster());
        if let Some(file) = record {
            let text = serde_json::to_string_pretty(&json!({
                "recorded": "kube-apiserver 1.36.2 by the deep-bodies contract case (DEEP_RECORD)",
                "answers": answers,
            }))
            .unwrap();
            std::fs::write(&file, text + "\n").unwrap();
        } else {
            let recording: Value = serde_json::from_str(RECORDING).unwrap();
            let recorded = recording["answers"].as_array().unwrap();
            assert_eq!(
                recorded.len(),
                cases.len(),
                "the cases changed: record again"
            );
            for (got, want) in answers.iter().zip(recorded) {
                assert_eq!(got["case"], want["case"], "the cases changed: record again");
                let name = want["case"].as_str().unwrap();
                if !on_cluster() && FAKE_READS_LESS.contains(&name) {
                    assert_eq!(
                        (got["code"].as_u64(), got["reason"].as_str()),
                        (Some(400), Some("BadRequest")),
                        "{name}: {got}"
                    );
                    let message = got["message"].as_str().unwrap();
                    assert!(
                        message.contains("which the fake API server does not read"),
                        "{name}: {message}"
                    );
                } else {
                    assert_eq!(got, want, "{name}");
                }
            }
        }

        // Still serving: the object is there, and a new one is created.
        let r = env
            .raw(
                "GET",
                &format!("{}/c", env.path("v1", "configmaps")),
                "",
                "",
            )
            .await;
        assert_eq!(
            (r.code, r.body["data"]["k"].as_str()),
            (200, Some("v")),
            "{}",
            r.body
        );
        let after = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "after", "labels": {RUN_LABEL: run_id()}}});
        let r = env
            .raw(
                "POST",
                &env.path("v1", "configmaps"),
                JSON,
                &after.to_string(),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}
