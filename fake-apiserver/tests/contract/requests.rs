//! Requests the real server refuses before it looks at an object: malformed or forbidden
//! query parameters, methods a path does not take, media types it cannot read or write,
//! resource versions it has not reached, and delete options and preconditions; and the one
//! conversion clients ask of every kind, `as=PartialObjectMetadata(List)`.

use serde_json::json;

use crate::env::{case, configmap};

#[tokio::test]
async fn malformed_parameters_are_bad_requests_in_the_real_servers_words() {
    case("params", |env| async move {
        let cms = env.path("v1", "configmaps");
        let expect = |r: crate::env::Raw, message: &str| {
            assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
            assert_eq!(r.message(), message);
        };
        expect(
            env.raw("GET", &format!("{cms}?limit=abc"), "", "").await,
            "strconv.ParseInt: parsing \"abc\": invalid syntax",
        );
        expect(
            env.raw("GET", &format!("{cms}?resourceVersion=abc"), "", "").await,
            "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax",
        );
        expect(
            env.raw("GET", &format!("{cms}?labelSelector=a%20b"), "", "").await,
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        );
        expect(
            env.raw("GET", &format!("{cms}?fieldSelector=data.k%3Dv"), "", "").await,
            "\"data.k\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        );
        expect(
            env.raw("GET", &format!("{}?fieldSelector=spec.bogus%3Dx", env.path("v1", "pods")), "", "").await,
            "field label not supported: spec.bogus",
        );
        expect(
            env.raw("GET", &format!("{cms}?continue=nonsense!"), "", "").await,
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 8",
        );
        // The real parser takes an empty set.
        let r = env.raw("GET", &format!("{cms}?labelSelector=a%20in%20()"), "", "").await;
        assert_eq!(r.code, 200, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn list_and_write_options_are_validated() {
    case("options", |env| async move {
        let cms = env.path("v1", "configmaps");
        let r = env
            .raw("GET", &format!("{cms}?resourceVersionMatch=Exact"), "", "")
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        assert_eq!(r.body["details"]["group"], "meta.k8s.io");
        assert_eq!(r.body["details"]["kind"], "ListOptions");
        assert_eq!(
            r.causes(),
            [("FieldValueForbidden".to_owned(), "resourceVersionMatch".to_owned())]
        );
        let r = env
            .raw("GET", &format!("{cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact"), "", "")
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.causes(),
            [
                ("FieldValueForbidden".to_owned(), "resourceVersionMatch".to_owned()),
                ("FieldValueNotSupported".to_owned(), "resourceVersionMatch".to_owned()),
            ]
        );

        let body = serde_json::to_string(&configmap("opts", &[])).unwrap();
        let r = env
            .raw("POST", &format!("{cms}?dryRun=foo&fieldValidation=bad"), "application/json", &body)
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "CreateOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: [\"foo\"]: supported values: \"All\", fieldValidation: Unsupported value: \"bad\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
        );
        let r = env
            .raw("POST", &format!("{cms}?dryRun=All"), "application/json", &body)
            .await;
        assert_eq!(r.code, 201);
        assert_eq!(
            env.raw("GET", &format!("{cms}/opts"), "", "").await.code,
            404,
            "a dry run stores nothing"
        );
        assert_eq!(env.raw("POST", &cms, "application/json", &body).await.code, 201);
        let r = env
            .raw("PATCH", &format!("{cms}/opts?force=true"), "application/merge-patch+json", "{}")
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
    })
    .await;
}

#[tokio::test]
async fn a_resource_version_the_server_has_not_reached_is_a_timeout() {
    case("rv-too-large", |env| async move {
        let cms = env.path("v1", "configmaps");
        let list = env.raw("GET", &cms, "", "").await;
        let current: u64 = list.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let ahead = current + 1_000_000;
        let r = env
            .raw("GET", &format!("{cms}?resourceVersion={ahead}"), "", "")
            .await;
        assert_eq!(r.status(), (504, "Timeout"));
        assert!(
            r.message().starts_with(&format!(
                "Timeout: Too large resource version: {ahead}, current: "
            )),
            "{}",
            r.message()
        );
        assert_eq!(
            r.body["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        assert_eq!(r.body["details"]["retryAfterSeconds"], 1);
    })
    .await;
}

#[tokio::test]
async fn delete_options_and_preconditions_are_checked() {
    case("delete-options", |env| async move {
        let cms = env.path("v1", "configmaps");
        // Checked before the object is looked up: a 422, not a 404.
        let r = env
            .raw("DELETE", &format!("{cms}/missing?propagationPolicy=Sideways"), "", "")
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
        assert_eq!(
            r.causes(),
            [("FieldValueNotSupported".to_owned(), "propagationPolicy".to_owned())]
        );
        let body = serde_json::to_string(&configmap("pre", &[])).unwrap();
        assert_eq!(env.raw("POST", &cms, "application/json", &body).await.code, 201);
        let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}});
        let r = env
            .raw("DELETE", &format!("{cms}/pre"), "application/json", &options.to_string())
            .await;
        assert_eq!(r.status(), (409, "Conflict"));
        assert!(
            r.message().starts_with("Operation cannot be fulfilled on ConfigMap \"pre\": the UID in the precondition (nope) does not match the UID in record ("),
            "{}",
            r.message()
        );
        assert_eq!(r.body["details"]["kind"], "ConfigMap");
        let r = env.raw("DELETE", "/api/v1/namespaces/default", "", "").await;
        assert_eq!(r.status(), (403, "Forbidden"));
        assert_eq!(
            r.message(),
            "namespaces \"default\" is forbidden: this namespace may not be deleted"
        );
    })
    .await;
}

#[tokio::test]
async fn methods_a_path_does_not_take_are_405() {
    case("methods", |env| async move {
        let cms = env.path("v1", "configmaps");
        for (method, path) in [
            ("POST", format!("{cms}/x")),
            ("PUT", cms.clone()),
            ("PATCH", cms.clone()),
            ("DELETE", "/api/v1/namespaces".to_owned()),
            ("POST", "/api/v1/configmaps".to_owned()),
            ("DELETE", format!("{cms}/x/status")),
        ] {
            let path = if path.ends_with("/status") {
                format!(
                    "{}/status",
                    env.path("v1", "pods").replace("/pods", "/pods/x")
                )
            } else {
                path
            };
            let r = env.raw(method, &path, "application/json", "{}").await;
            assert_eq!(
                r.status(),
                (405, "MethodNotAllowed"),
                "{method} {path}: {}",
                r.body
            );
            assert_eq!(
                r.message(),
                "the server does not allow this method on the requested resource"
            );
            assert_eq!(r.body["details"], json!({}));
        }
    })
    .await;
}

#[tokio::test]
async fn media_types_the_server_cannot_read_or_write() {
    case("media", |env| async move {
        let cms = env.path("v1", "configmaps");
        let body = serde_json::to_string(&configmap("media", &[])).unwrap();
        let r = env.raw("POST", &cms, "text/plain", &body).await;
        assert_eq!(r.status(), (415, "UnsupportedMediaType"));
        assert_eq!(
            r.message(),
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        assert_eq!(env.raw("POST", &cms, "application/json", &body).await.code, 201);
        let r = env.raw("PATCH", &format!("{cms}/media"), "text/plain", "{}").await;
        assert_eq!(r.status(), (415, "UnsupportedMediaType"));
        assert_eq!(r.message(), "415: Unsupported Media Type");

        crate::install_widgets(&env.client).await;
        let widgets = env.path("contract.example.com/v1", "widgets");
        let w = json!({"apiVersion": "contract.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 1}});
        assert_eq!(env.raw("POST", &widgets, "application/json", &w.to_string()).await.code, 201);
        let r = env
            .raw("PATCH", &format!("{widgets}/w"), "application/strategic-merge-patch+json", "{}")
            .await;
        assert_eq!(r.status(), (415, "UnsupportedMediaType"));
        assert_eq!(
            r.message(),
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
    })
    .await;
}

#[tokio::test]
async fn unknown_fields_of_custom_resources_warn_or_fail_when_strict() {
    case("unknown-fields", |env| async move {
        crate::install_widgets(&env.client).await;
        let widgets = env.path("contract.example.com/v1", "widgets");
        let w = |name: &str| json!({"apiVersion": "contract.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"replicas": 1, "bogus": 2}, "top": 1}).to_string();
        let r = env.raw("POST", &widgets, "application/json", &w("warned")).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let mut warnings = r.warnings.clone();
        warnings.sort();
        assert_eq!(warnings, ["unknown field \"spec.bogus\"", "unknown field \"top\""]);
        let r = env
            .raw("POST", &format!("{widgets}?fieldValidation=Strict"), "application/json", &w("strict"))
            .await;
        assert_eq!(r.status(), (400, "BadRequest"));
        assert_eq!(
            r.message(),
            "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\", unknown field \"top\""
        );
        let r = env
            .raw("POST", &format!("{widgets}?fieldValidation=Ignore"), "application/json", &w("ignored"))
            .await;
        assert_eq!((r.code, r.warnings.len()), (201, 0));
    })
    .await;
}

#[tokio::test]
async fn an_accept_header_nothing_satisfies_is_406() {
    case("accept", |env| async move {
        let cms = env.path("v1", "configmaps");
        let mut req = http::Request::get(&cms);
        req = req.header("accept", "text/html");
        let req = req.body(kube::client::Body::empty()).unwrap();
        let response = env.client.send(req).await.unwrap();
        assert_eq!(response.status().as_u16(), 406);
    })
    .await;
}

#[tokio::test]
async fn built_in_kinds_are_decoded_into_their_go_types() {
    case("decode", |env| async move {
        let cms = env.path("v1", "configmaps");
        let r = env
            .raw("POST", &cms, "application/json", &json!({"metadata": {"name": "n"}, "data": {"a": 1}}).to_string())
            .await;
        assert_eq!(r.status(), (400, "BadRequest"));
        assert_eq!(
            r.message(),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        let deployments = env.path("apps/v1", "deployments");
        let r = env
            .raw("POST", &deployments, "application/json", &json!({"metadata": {"name": "d"}, "spec": {"replicas": "x"}}).to_string())
            .await;
        assert_eq!(
            r.message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let body = json!({"metadata": {"name": "w", "labels": {crate::env::RUN_LABEL: crate::env::run_id()}, "bad": 1}, "x": 2}).to_string();
        let r = env.raw("POST", &format!("{cms}?fieldValidation=Strict"), "application/json", &body).await;
        assert_eq!(r.status(), (400, "BadRequest"));
        assert_eq!(
            r.message(),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"metadata.bad\", unknown field \"x\""
        );
        let r = env.raw("POST", &cms, "application/json", &body).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let mut warnings = r.warnings.clone();
        warnings.sort();
        assert_eq!(warnings, ["unknown field \"metadata.bad\"", "unknown field \"x\""]);
    })
    .await;
}

/// A GET with an `Accept` header, its status and body (JSON, or the text as a string).
async fn get_as(env: &crate::env::Env, path: &str, accept: &str) -> (u16, serde_json::Value) {
    use http_body_util::BodyExt;
    let req = http::Request::get(path).header("accept", accept);
    let req = req.body(kube::client::Body::empty()).unwrap();
    let response = env.client.send(req).await.unwrap();
    let code = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
    (code, body)
}

#[tokio::test]
async fn partial_object_metadata_is_metadata_only_and_its_list_keeps_the_list_metadata() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::PostParams;
    const OBJECT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    const LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    case("partial", |env| async move {
        let api = env.api::<ConfigMap>();
        for name in ["a", "b"] {
            api.create(&PostParams::default(), &configmap(name, &[])).await.unwrap();
        }
        let cms = env.path("v1", "configmaps");
        let (code, one) = get_as(&env, &format!("{cms}/a"), OBJECT).await;
        assert_eq!(code, 200, "{one}");
        assert_eq!((one["kind"].as_str(), one["apiVersion"].as_str()), (Some("PartialObjectMetadata"), Some("meta.k8s.io/v1")));
        assert_eq!(one["metadata"]["name"], "a");
        assert!(one.get("data").is_none(), "metadata only: {one}");
        let run = format!("{}={}", crate::env::RUN_LABEL, crate::env::run_id());
        let (code, list) = get_as(&env, &format!("{cms}?limit=1&labelSelector={run}"), LIST).await;
        assert_eq!(code, 200, "{list}");
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
        assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");
        assert!(list["metadata"]["continue"].is_string(), "list metadata kept: {list}");
        let item = &list["items"][0];
        assert_eq!((item["kind"].as_str(), item["metadata"]["name"].as_str()), (Some("PartialObjectMetadata"), Some("a")));
        assert!(item.get("data").is_none(), "{item}");
        // Asking for the one of a list, the list of one, or another conversion: 406.
        let (code, refused) = get_as(&env, &cms, OBJECT).await;
        assert_eq!((code, refused["reason"].as_str()), (406, Some("NotAcceptable")));
        assert_eq!(refused["message"], "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)");
        let (code, refused) = get_as(&env, &format!("{cms}/a"), LIST).await;
        assert_eq!(code, 406);
        assert_eq!(refused["message"], "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)");
        let (code, refused) = get_as(&env, &cms, "application/json;as=Foo;g=meta.k8s.io;v=v1").await;
        assert_eq!((code, refused["reason"].as_str()), (406, Some("NotAcceptable")));
        assert_eq!(refused["message"], "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf");
        // kube's metadata calls ask for the same, and watch events carry it too.
        let metas = api.list_metadata(&env.ours()).await.unwrap();
        assert_eq!(metas.items.len(), 2);
        assert_eq!(metas.types.kind, "PartialObjectMetadataList");
        let types = metas.items[0].types.clone().unwrap_or_default();
        assert_eq!((types.api_version.as_str(), types.kind.as_str()), ("meta.k8s.io/v1", "PartialObjectMetadata"));
        let (code, events) = get_as(&env, &format!("{cms}?watch=1&timeoutSeconds=1&labelSelector={run}"), OBJECT).await;
        assert_eq!(code, 200);
        let events = events.as_str().map(str::to_owned).unwrap_or_else(|| events.to_string());
        let objects: Vec<serde_json::Value> = events
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["object"].clone())
            .collect();
        assert_eq!(objects.len(), 2, "{events}");
        for obj in &objects {
            assert_eq!(obj["kind"], "PartialObjectMetadata", "{obj}");
            assert!(obj.get("data").is_none(), "{obj}");
        }
    })
    .await;
}
