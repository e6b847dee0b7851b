//! Admission webhooks registered by MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration objects, served by `kube-codegen-runtime`'s webhook server
//! on loopback with a development certificate: both servers call them (kube-apiserver
//! reaches 127.0.0.1 too). The configurations select only the case's namespace, so other
//! cases running at the same time never meet them.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::PostParams;
use kube::core::{ApiResource, GroupVersionKind};
use kube_codegen_runtime::webhook::{
    Defaulter, Denial, Request, Validator, Warnings, WebhookServer,
};
use serde_json::json;

use crate::env::{Env, RUN_LABEL, case, eventually, run_id};

/// Defaults `data.defaulted` to `yes`; refuses a `data.forbidden` key; warns on `data.warn`.
struct Hooks;

impl Defaulter<ConfigMap> for Hooks {
    async fn default(&self, cm: &mut ConfigMap, _: &Request<'_>) -> Result<Warnings, Denial> {
        cm.data
            .get_or_insert_with(Default::default)
            .entry("defaulted".to_owned())
            .or_insert_with(|| "yes".to_owned());
        Ok(Warnings::new())
    }
}

impl Validator<ConfigMap> for Hooks {
    async fn validate_create(&self, cm: &ConfigMap, _: &Request<'_>) -> Result<Warnings, Denial> {
        let data = cm.data.clone().unwrap_or_default();
        if data.contains_key("forbidden") {
            return Err(Denial::new("data.forbidden: not in this namespace"));
        }
        Ok(if data.contains_key("warn") {
            vec!["data.warn: careful now".to_owned()]
        } else {
            Warnings::new()
        })
    }
}

pub(crate) fn configuration(env: &Env, mutating: bool, port: u16, ca: &str) -> serde_json::Value {
    let (kind, letter, path) = if mutating {
        ("MutatingWebhookConfiguration", "m", "/mutate")
    } else {
        ("ValidatingWebhookConfiguration", "v", "/validate")
    };
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": env.ns, "labels": {RUN_LABEL: run_id()}},
        "webhooks": [{
            "name": format!("{letter}cm.{}.contract.example.com", env.ns),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "timeoutSeconds": 5,
            "clientConfig": {
                "url": format!("https://127.0.0.1:{port}{path}"),
                "caBundle": apiserver_rules::base64::base64_encode(ca.as_bytes()),
            },
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": env.ns}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}],
        }],
    })
}

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}},
        "data": data.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
    }))
    .unwrap()
}

/// Creates a webhook configuration, removed when the case ends: the object as stored.
pub(crate) async fn register(env: &Env, body: &serde_json::Value) -> serde_json::Value {
    let kind = body["kind"].as_str().unwrap();
    let name = body["metadata"]["name"].as_str().unwrap();
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let path = format!("/apis/admissionregistration.k8s.io/v1/{plural}");
    let r = env
        .raw("POST", &path, "application/json", &body.to_string())
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    env.delete_later(ApiResource::from_gvk_with_plural(&gvk, &plural), name);
    r.body
}

/// A webhook server on loopback, with a development certificate for `host` in its own
/// directory (removed when it stops).
pub(crate) struct Served {
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) ca: String,
    dir: std::path::PathBuf,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Served {
    pub(crate) async fn start(name: &str, host: &str, server: WebhookServer) -> Self {
        let dir = std::env::temp_dir().join(name);
        let ca = kube_codegen_runtime::webhook::dev::certificate(&dir, &[host.to_owned()])
            .expect("a development certificate");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(server.serve_on(listener, dir.clone(), async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            ca,
            dir,
            stop,
            done,
        }
    }

    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        self.done.await.unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn webhooks_default_refuse_warn_and_fail_closed_when_down() {
    case("webhooks", |env| async move {
        let served = Served::start(&format!("contract-webhooks-{}", env.ns), "127.0.0.1", WebhookServer::new().defaulting::<ConfigMap, _>("/mutate", Hooks).validating::<ConfigMap, _>("/validate", Hooks)).await;
        let (port, ca) = (served.addr.port(), served.ca.clone());
        for mutating in [true, false] {
            let stored = register(&env, &configuration(&env, mutating, port, &ca)).await;
            // Defaults the server fills in.
            let hook = &stored["webhooks"][0];
            assert_eq!(hook["matchPolicy"], "Equivalent");
            assert_eq!(hook["rules"][0]["scope"], "*");
            assert_eq!(hook["objectSelector"], json!({}));
            assert_eq!(hook.get("reinvocationPolicy").is_some(), mutating);
        }
        let cms = env.api::<ConfigMap>();
        let pp = PostParams::default();
        // kube-apiserver picks new configurations up within a second or so.
        let mut n = 0;
        eventually("the mutating webhook is called", || {
            n += 1;
            let (cms, pp, name) = (cms.clone(), pp.clone(), format!("probe-{n}"));
            async move {
                let created = cms.create(&pp, &config_map(&name, &[])).await.ok()?;
                created.data?.contains_key("defaulted").then_some(())
            }
        })
        .await;
        let kept = cms.create(&pp, &config_map("kept", &[("defaulted", "no")])).await.unwrap();
        assert_eq!(kept.data.unwrap()["defaulted"], "no");

        let path = env.path("v1", "configmaps");
        let refused = env
            .raw("POST", &path, "application/json", &serde_json::to_string(&config_map("refused", &[("forbidden", "x")])).unwrap())
            .await;
        assert_eq!(refused.status(), (403, "Forbidden"), "{}", refused.body);
        assert_eq!(
            refused.message(),
            format!("admission webhook \"vcm.{}.contract.example.com\" denied the request: data.forbidden: not in this namespace", env.ns)
        );
        let warned = env
            .raw("POST", &path, "application/json", &serde_json::to_string(&config_map("warned", &[("warn", "x")])).unwrap())
            .await;
        assert_eq!(warned.code, 201, "{}", warned.body);
        assert_eq!(warned.warnings, ["data.warn: careful now"]);

        // The server stops: `failurePolicy: Fail` refuses what the webhook cannot see.
        served.stop().await;
        let down = env
            .raw("POST", &path, "application/json", &serde_json::to_string(&config_map("down", &[])).unwrap())
            .await;
        assert_eq!(down.status(), (500, "InternalError"), "{}", down.body);
        let expected = format!(
            "failed calling webhook \"mcm.{}.contract.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/mutate?timeout=5s\": dial tcp 127.0.0.1:{port}: connect: connection refused",
            env.ns
        );
        assert_eq!(down.message(), format!("Internal error occurred: {expected}"));
        assert_eq!(down.body["details"]["causes"][0]["message"], expected);
    })
    .await;
}

#[tokio::test]
async fn webhook_configurations_are_validated() {
    case("webhook-config", |env| async move {
        let body = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": env.ns},
            "webhooks": [{
                "name": "two.segments",
                "admissionReviewVersions": ["v2"],
                "sideEffects": "Some",
                "timeoutSeconds": 31,
                "clientConfig": {"url": "http://127.0.0.1:1/x?y=1"},
                "rules": [{"apiGroups": ["*", "apps"], "apiVersions": ["v1"], "operations": ["GET"], "resources": ["*", "pods"]}],
            }],
        });
        let r = env
            .raw("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "application/json", &body.to_string())
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        let mut causes = r.causes();
        causes.sort();
        let mut expected: Vec<(String, String)> = [
            ("FieldValueInvalid", "webhooks[0].name"),
            ("FieldValueNotSupported", "webhooks[0].rules[0].operations[0]"),
            ("FieldValueInvalid", "webhooks[0].rules[0].apiGroups"),
            ("FieldValueInvalid", "webhooks[0].rules[0].resources"),
            ("FieldValueNotSupported", "webhooks[0].sideEffects"),
            ("FieldValueInvalid", "webhooks[0].timeoutSeconds"),
            ("FieldValueInvalid", "webhooks[0].clientConfig.url"),
            ("FieldValueInvalid", "webhooks[0].admissionReviewVersions"),
        ]
        .iter()
        .map(|(r, f)| ((*r).to_owned(), (*f).to_owned()))
        .collect();
        expected.sort();
        assert_eq!(causes, expected, "{}", r.body);
        for part in [
            "webhooks[0].name: Invalid value: \"two.segments\": should be a domain with at least three segments separated by dots",
            "webhooks[0].rules[0].apiGroups: Invalid value: [\"*\",\"apps\"]: if '*' is present, must not specify other API groups",
            "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
            "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1",
        ] {
            assert!(r.message().contains(part), "`{part}` missing from: {}", r.message());
        }
    })
    .await;
}

/// A Service client configuration: the fake has no cluster network, so a test names the
/// loopback address the Service stands for; the certificate must be for the Service's DNS
/// name, as kube-apiserver requires.
#[tokio::test]
async fn fake_only_a_service_is_reached_at_the_address_the_test_gives() {
    let served = Served::start(
        &format!("fake-webhook-service-{}", std::process::id()),
        "hooks.ops.svc",
        WebhookServer::new().validating::<ConfigMap, _>("/validate", Hooks),
    )
    .await;
    let (addr, ca) = (served.addr, served.ca.clone());
    let fake = fake_apiserver::FakeApiServer::with_config(fake_apiserver::Config {
        webhook_services: [("ops/hooks".to_owned(), addr)].into(),
        ..Default::default()
    });
    fake.seed(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hooks"},
        "webhooks": [{
            "name": "vcm.hooks.example.com",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "clientConfig": {
                "service": {"namespace": "ops", "name": "hooks", "path": "/validate", "port": 443},
                "caBundle": apiserver_rules::base64::base64_encode(ca.as_bytes()),
            },
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}],
        }],
    }))
    .unwrap();
    let cms: kube::Api<ConfigMap> =
        kube::Api::namespaced(kube::Client::new(fake.clone(), "default"), "default");
    let refused = cms
        .create(
            &PostParams::default(),
            &config_map("a", &[("forbidden", "x")]),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(
        status.message,
        "admission webhook \"vcm.hooks.example.com\" denied the request: data.forbidden: not in this namespace"
    );
    cms.create(&PostParams::default(), &config_map("b", &[]))
        .await
        .unwrap();
    served.stop().await;
}

/// Writes into `data.<key>` how many other keys it sees.
struct Counter(&'static str);

impl Defaulter<ConfigMap> for Counter {
    async fn default(&self, cm: &mut ConfigMap, _: &Request<'_>) -> Result<Warnings, Denial> {
        let data = cm.data.get_or_insert_with(Default::default);
        let others = data.keys().filter(|k| *k != self.0).count();
        data.insert(self.0.to_owned(), others.to_string());
        Ok(Warnings::new())
    }
}

#[tokio::test]
async fn a_webhook_that_asks_is_called_again_after_a_later_one_changed_the_object() {
    case("reinvocation", |env| async move {
        let served = Served::start(
            &format!("contract-reinvocation-{}", env.ns),
            "127.0.0.1",
            WebhookServer::new()
                .defaulting::<ConfigMap, _>("/mutate", Counter("a"))
                .defaulting::<ConfigMap, _>("/other", Counter("b")),
        )
        .await;
        let (port, ca) = (served.addr.port(), served.ca.clone());
        // Two configurations, called in the order of their names: `a` asks to be called
        // again if needed, then `b` adds a key.
        for (prefix, path, reinvoke) in [("a", "/mutate", "IfNeeded"), ("b", "/other", "Never")] {
            let mut body = configuration(&env, true, port, &ca);
            let name = format!("{prefix}-{}", env.ns);
            body["metadata"]["name"] = json!(name);
            body["webhooks"][0]["name"] =
                json!(format!("{prefix}.{}.contract.example.com", env.ns));
            body["webhooks"][0]["clientConfig"]["url"] =
                json!(format!("https://127.0.0.1:{port}{path}"));
            body["webhooks"][0]["reinvocationPolicy"] = json!(reinvoke);
            register(&env, &body).await;
        }
        let cms = env.api::<ConfigMap>();
        let mut n = 0;
        let data = eventually("both webhooks are called", || {
            n += 1;
            let (cms, name) = (cms.clone(), format!("probe-{n}"));
            async move {
                let created = cms
                    .create(&PostParams::default(), &config_map(&name, &[]))
                    .await
                    .ok()?;
                let data = created.data?;
                (data.contains_key("a") && data.contains_key("b")).then_some(data)
            }
        })
        .await;
        // `a` first saw no other key, then, called again, `b`.
        assert_eq!(
            (data["a"].as_str(), data["b"].as_str()),
            ("1", "1"),
            "{data:?}"
        );
        served.stop().await;
    })
    .await;
}

/// Refuses every object, saying in which version it saw it.
struct SeenAs;

impl Validator<kube::core::DynamicObject> for SeenAs {
    async fn validate_create(
        &self,
        obj: &kube::core::DynamicObject,
        _: &Request<'_>,
    ) -> Result<Warnings, Denial> {
        let api_version = obj.types.as_ref().map_or("", |t| t.api_version.as_str());
        Err(Denial::new(format!("seen as {api_version}")))
    }
}

#[tokio::test]
async fn an_equivalent_match_sees_the_request_in_the_version_its_rules_name() {
    case("equivalent", |env| async move {
        let group = format!("equivalent-{}.contract.example.com", run_id());
        let version = |name: &str, storage: bool| {
            json!({"name": name, "served": true, "storage": storage,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}})
        };
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("gizmos.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": "gizmos", "kind": "Gizmo"},
                "versions": [version("v1", true), version("v2", false)]}
        });
        let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let r = env.raw("POST", crds, "application/json", &crd.to_string()).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let crd_gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        env.delete_later(
            ApiResource::from_gvk_with_plural(&crd_gvk, "customresourcedefinitions"),
            &format!("gizmos.{group}"),
        );

        let served = Served::start(&format!("contract-equivalent-{}", env.ns), "127.0.0.1", WebhookServer::new().validating::<kube::core::DynamicObject, _>("/validate", SeenAs)).await;
        let (port, ca) = (served.addr.port(), served.ca.clone());
        // Registered for v1 only, with the default `matchPolicy: Equivalent`.
        let mut body = configuration(&env, false, port, &ca);
        body["webhooks"][0]["rules"] = json!([{"apiGroups": [group], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["gizmos"]}]);
        register(&env, &body).await;

        let path = format!("/apis/{group}/v2/namespaces/{}/gizmos", env.ns);
        let mut n = 0;
        let refused = eventually("the CRD is served and the webhook called", || {
            n += 1;
            let gizmo = json!({"apiVersion": format!("{group}/v2"), "kind": "Gizmo",
                "metadata": {"name": format!("g{n}"), "labels": {RUN_LABEL: run_id()}}, "spec": {}});
            let (env, path) = (env.clone(), path.clone());
            async move {
                let r = env.raw("POST", &path, "application/json", &gizmo.to_string()).await;
                (r.code == 403).then_some(r)
            }
        })
        .await;
        assert_eq!(
            refused.message(),
            format!("admission webhook \"vcm.{}.contract.example.com\" denied the request: seen as {group}/v1", env.ns)
        );
        served.stop().await;
    })
    .await;
}

/// Answers after two seconds.
struct Slow;

impl Validator<ConfigMap> for Slow {
    async fn validate_create(&self, _: &ConfigMap, _: &Request<'_>) -> Result<Warnings, Denial> {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        Ok(Warnings::new())
    }
}

#[tokio::test]
async fn object_selectors_timeouts_and_failure_policies() {
    case("webhook-timeout", |env| async move {
        let served = Served::start(&format!("contract-timeout-{}", env.ns), "127.0.0.1", WebhookServer::new().validating::<ConfigMap, _>("/validate", Slow)).await;
        let (port, ca) = (served.addr.port(), served.ca.clone());
        let mut body = configuration(&env, false, port, &ca);
        body["webhooks"][0]["timeoutSeconds"] = json!(1);
        body["webhooks"][0]["objectSelector"] = json!({"matchLabels": {"check": "yes"}});
        register(&env, &body).await;
        let configs = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

        let path = env.path("v1", "configmaps");
        let object = |name: &str, checked: bool| {
            let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {RUN_LABEL: run_id()}}});
            if checked {
                cm["metadata"]["labels"]["check"] = json!("yes");
            }
            cm.to_string()
        };
        // The webhook is too slow: with `failurePolicy: Fail` the request fails.
        let mut n = 0;
        let failed = eventually("the webhook is called", || {
            n += 1;
            let (env, path, body) = (env.clone(), path.clone(), object(&format!("slow-{n}"), true));
            async move {
                let r = env.raw("POST", &path, "application/json", &body).await;
                (r.code == 500).then_some(r)
            }
        })
        .await;
        assert_eq!(
            failed.message(),
            format!("Internal error occurred: failed calling webhook \"vcm.{}.contract.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=1s\": context deadline exceeded", env.ns)
        );
        // Objects the object selector leaves out never meet it.
        let r = env.raw("POST", &path, "application/json", &object("unchecked", false)).await;
        assert_eq!(r.code, 201, "{}", r.body);
        // With `failurePolicy: Ignore` the slow webhook is skipped.
        let name = &env.ns;
        let patch = json!({"webhooks": [{"name": format!("vcm.{name}.contract.example.com"), "failurePolicy": "Ignore"}]});
        let r = env
            .raw("PATCH", &format!("{configs}/{name}"), "application/strategic-merge-patch+json", &patch.to_string())
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
        let mut m = 0;
        eventually("the failure is ignored", || {
            m += 1;
            let (env, path, body) = (env.clone(), path.clone(), object(&format!("ignored-{m}"), true));
            async move { (env.raw("POST", &path, "application/json", &body).await.code == 201).then_some(()) }
        })
        .await;
        served.stop().await;
    })
    .await;
}

/// Refuses deletes of objects labelled `protect=yes`, saying whether it was a dry run.
struct Protect;

impl Validator<ConfigMap> for Protect {
    async fn validate_delete(&self, cm: &ConfigMap, req: &Request<'_>) -> Result<Warnings, Denial> {
        let labels = cm.metadata.labels.clone().unwrap_or_default();
        if labels.get("protect").map(String::as_str) == Some("yes") {
            return Err(Denial::new(format!(
                "protected (dry run: {})",
                req.dry_run()
            )));
        }
        Ok(Warnings::new())
    }
}

#[tokio::test]
async fn deletes_go_through_webhooks_whose_rules_name_subresources_too() {
    case("webhook-delete", |env| async move {
        let served = Served::start(&format!("contract-delete-{}", env.ns), "127.0.0.1", WebhookServer::new().validating::<ConfigMap, _>("/validate", Protect)).await;
        let (port, ca) = (served.addr.port(), served.ca.clone());
        // `configmaps/*` matches the resource itself as well as its subresources.
        let mut body = configuration(&env, false, port, &ca);
        body["webhooks"][0]["rules"] = json!([{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["DELETE"], "resources": ["configmaps/*"]}]);
        register(&env, &body).await;

        let cms = env.api::<ConfigMap>();
        let mut cm = config_map("kept", &[]);
        cm.metadata.labels.get_or_insert_with(Default::default).insert("protect".into(), "yes".into());
        cms.create(&PostParams::default(), &cm).await.unwrap();
        let denied = |e: kube::Error| match e {
            kube::Error::Api(s) => (s.code, s.message),
            other => panic!("{other:?}"),
        };
        let expected = |dry: bool| {
            format!("admission webhook \"vcm.{}.contract.example.com\" denied the request: protected (dry run: {dry})", env.ns)
        };
        let dry = kube::api::DeleteParams { dry_run: true, ..Default::default() };
        let (code, message) = eventually("the webhook sees deletes", || {
            let (cms, dry) = (cms.clone(), dry.clone());
            async move { cms.delete("kept", &dry).await.err().map(denied) }
        })
        .await;
        assert_eq!((code, message), (403, expected(true)));
        let (code, message) = denied(cms.delete("kept", &Default::default()).await.unwrap_err());
        assert_eq!((code, message), (403, expected(false)));
        served.stop().await;
    })
    .await;
}
