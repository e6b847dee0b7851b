//! Answers at the edges of what clients send, each as kube-apiserver 1.36 gives it: a name
//! that cannot be a path segment, an empty namespace in a path (every namespace), strings
//! Go reads as U+FFFD (invalid UTF-8, an unpaired surrogate escape), a watch whose deadline
//! is already past, continue tokens in the real server's own format, and a request with
//! many headers.

use serde_json::{Value, json};

use crate::env::{RUN_LABEL, case, run_id};

#[tokio::test]
async fn requests_at_the_edges_get_the_real_servers_answers() {
    case("edges", |env| async move {
        let cms = env.path("v1", "configmaps");

        // `..` as a name (percent-encoded, so no client folds it away).
        let r = env.raw("GET", &format!("{cms}/%2E%2E"), "", "").await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(r.message(), "Name parameter invalid: \"..\": may not be '..'");

        // Invalid UTF-8 and a lone surrogate in a string: stored as U+FFFD.
        let mut body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"odd","labels":{{"{RUN_LABEL}":"{}"}}}},"data":{{"bytes":""#,
            run_id()
        )
        .into_bytes();
        body.extend_from_slice(b"a\xffb");
        body.extend_from_slice(br#"","escape":"x\ud800y","pair":"\ud83d\ude00"}}"#);
        let r = env.raw_bytes("POST", &cms, "application/json", &body).await;
        assert_eq!(r.code, 201, "{}", r.body);
        assert_eq!(r.body["data"]["bytes"], "a\u{fffd}b");
        assert_eq!(r.body["data"]["escape"], "x\u{fffd}y");
        assert_eq!(r.body["data"]["pair"], "\u{1f600}");

        // An empty namespace in the path lists every namespace.
        let all = format!(
            "/api/v1/namespaces//configmaps?labelSelector={RUN_LABEL}%3D{}",
            run_id()
        );
        let r = env.raw("GET", &all, "", "").await;
        assert_eq!(r.code, 200, "{}", r.body);
        let names: Vec<&str> = r.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["metadata"]["namespace"] == env.ns.as_str())
            .filter_map(|i| i["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["odd"], "{}", r.body);

        // A watch whose timeout is already past: one error event.
        let r = env
            .raw("GET", &format!("{cms}?watch=true&timeoutSeconds=-1"), "", "")
            .await;
        assert_eq!(r.code, 200);
        assert_eq!(
            r.body,
            json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": "context deadline exceeded", "reason": "InternalError", "code": 500}})
        );

        // Continue tokens in the real server's format (base64 without padding): a page of
        // a list continues with the token it handed out; one from a version the server has
        // not reached is a 504; padding is not its alphabet.
        for i in 0..3 {
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("page-{i}"), "labels": {RUN_LABEL: run_id()}}});
            let r = env.raw("POST", &cms, "application/json", &cm.to_string()).await;
            assert_eq!(r.code, 201, "{}", r.body);
        }
        let r = env.raw("GET", &format!("{cms}?limit=2"), "", "").await;
        let token = r.body["metadata"]["continue"].as_str().unwrap().to_owned();
        assert!(!token.contains('=') && !token.contains('+') && !token.contains('/'), "{token}");
        let r = env
            .raw("GET", &format!("{cms}?limit=2&continue={token}"), "", "")
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
        let future = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk5OTk5OTk5OSwic3RhcnQiOiJhXHUwMDAwIn0";
        let r = env
            .raw("GET", &format!("{cms}?limit=1&continue={future}"), "", "")
            .await;
        assert_eq!(r.status(), (504, "Timeout"), "{}", r.body);
        assert!(
            r.message().starts_with("Timeout: Too large resource version: 9999999999, current: "),
            "{}",
            r.message()
        );
        let r = env
            .raw("GET", &format!("{cms}?limit=1&continue={future}="), "", "")
            .await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 75"
        );
        let _: Value = r.body;
    })
    .await;
}
