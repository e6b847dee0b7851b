//! How request bodies are read: JSON, and protobuf for built-in kinds (what kubectl's
//! typed commands send); which type a body must name; and when `metadata.generation`
//! counts an object's changes.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::env::{RUN_LABEL, case, run_id};
use crate::{Widget, install_widgets};

/// A protobuf field: key, then a varint or the length-delimited bytes.
fn field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
    out.push((number << 3) | 2);
    let mut len = bytes.len();
    while len >= 0x80 {
        out.push((len as u8) | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(bytes);
}

/// A map entry of a protobuf map field: `{1: key, 2: value}`.
fn entry(out: &mut Vec<u8>, number: u8, key: &str, value: &str) {
    let mut e = Vec::new();
    field(&mut e, 1, key.as_bytes());
    field(&mut e, 2, value.as_bytes());
    field(out, number, &e);
}

/// The body kubectl sends for a ConfigMap named `name` with this run's label and `data`:
/// `k8s\0`, then `runtime.Unknown{typeMeta{apiVersion, kind}, raw: ConfigMap}`.
fn protobuf_configmap(api_version: &str, kind: &str, name: &str, data: &[(&str, &str)]) -> Vec<u8> {
    let mut meta = Vec::new();
    field(&mut meta, 1, name.as_bytes());
    entry(&mut meta, 11, RUN_LABEL, run_id());
    let mut cm = Vec::new();
    field(&mut cm, 1, &meta);
    for (k, v) in data {
        entry(&mut cm, 2, k, v);
    }
    let mut type_meta = Vec::new();
    field(&mut type_meta, 1, api_version.as_bytes());
    field(&mut type_meta, 2, kind.as_bytes());
    let mut body = b"k8s\0".to_vec();
    field(&mut body, 1, &type_meta);
    field(&mut body, 2, &cm);
    body
}

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

#[tokio::test]
async fn built_in_kinds_are_created_from_protobuf_bodies() {
    case("protobuf", |env| async move {
        let cms = env.path("v1", "configmaps");
        let body = protobuf_configmap("v1", "ConfigMap", "pb", &[("a", "b"), ("empty", "")]);
        let r = env.raw_bytes("POST", &cms, PROTOBUF, &body).await;
        assert_eq!(r.code, 201, "{}", r.body);
        assert_eq!(r.body["data"], json!({"a": "b", "empty": ""}));
        let stored = env.api::<ConfigMap>().get("pb").await.unwrap();
        assert_eq!(stored.metadata.labels.unwrap()[RUN_LABEL], run_id());

        // Read the type first, then the object, as the scheme does.
        let wrong = protobuf_configmap("v1", "Namespace", "pb2", &[]);
        let r = env.raw_bytes("POST", &cms, PROTOBUF, &wrong).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            "Namespace in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Namespace) to (core.ConfigMap): unknown conversion"
        );
        let r = env.raw_bytes("POST", &cms, PROTOBUF, b"{\"a\":1}").await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"a\":1})"
        );
        let r = env.raw_bytes("POST", &cms, PROTOBUF, &body[..20]).await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert!(r.message().contains("unexpected EOF"), "{}", r.message());
    })
    .await;
}

#[tokio::test]
async fn bodies_naming_another_type_are_refused_in_the_real_servers_words() {
    case("typemeta", |env| async move {
        let cms = env.path("v1", "configmaps");
        let post = |body: &'static str| {
            let (env, cms) = (env.clone(), cms.clone());
            async move { env.raw("POST", &cms, "application/json", body).await }
        };
        let cases = [
            (
                r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"a"}}"#,
                "Namespace in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Namespace) to (core.ConfigMap): unknown conversion",
            ),
            (
                r#"{"kind":"Nothing","apiVersion":"v1","metadata":{"name":"a"}}"#,
                "Nothing in version \"v1\" cannot be handled as a ConfigMap: no kind \"Nothing\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            ),
            (
                r#"{"kind":"ConfigMap","apiVersion":"v2","metadata":{"name":"a"}}"#,
                "ConfigMap in version \"v2\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is registered for version \"v2\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
            ),
            (
                r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a"}}"#,
                "Deployment in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion",
            ),
            (
                r#"{"metadata":{"name":"a"} 1}"#,
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character '1' after object key:value pair ({\"metadata\":{\"name\":\"a\"} 1})",
            ),
            (
                "[]",
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (5b5d)",
            ),
        ];
        for (body, message) in cases {
            let r = post(body).await;
            assert_eq!(r.status(), (400, "BadRequest"), "{body}: {}", r.body);
            assert_eq!(r.message(), message, "{body}");
        }
        // Left out, the URL's type fills in.
        let r = post(r#"{"metadata":{"name":"typeless","labels":{"x":"y"}}}"#).await;
        assert_eq!(r.code, 201, "{}", r.body);

        install_widgets(&env.client).await;
        let widgets = env.path("contract.example.com/v1", "widgets");
        let r = env
            .raw("POST", &widgets, "application/json", r#"{"apiVersion":"contract.example.com/v1","metadata":{"name":"w"}}"#)
            .await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{\"apiVersion\":\"contract.example.com/v1\",\"metadata\":{\"name\":\"w\"}}' ({\"apiVersion\":\"contract.exampl ...)"
        );
        let r = env
            .raw("POST", &widgets, "application/json", r#"{"kind":"Widget","apiVersion":"v1","metadata":{"name":"w"}}"#)
            .await;
        assert_eq!(r.status(), (400, "BadRequest"), "{}", r.body);
        assert_eq!(
            r.message(),
            "the API version in the data (v1) does not match the expected API version (contract.example.com/v1)"
        );
        // Another kind of the same group version is decoded, then refused by validation.
        let r = env
            .raw("POST", &widgets, "application/json", r#"{"kind":"Gadget","apiVersion":"contract.example.com/v1","metadata":{"name":"w"},"spec":{"replicas":1}}"#)
            .await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            "Gadget.contract.example.com \"w\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
        );
        assert_eq!(r.body["details"]["kind"], "Gadget");
        assert_eq!(r.causes(), [("FieldValueInvalid".to_owned(), "kind".to_owned())]);
    })
    .await;
}

/// The generation of `obj` when created, then after each merge patch in turn.
async fn generations<K>(
    api: &Api<K>,
    obj: serde_json::Value,
    patches: &[serde_json::Value],
) -> Vec<Option<i64>>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(obj).unwrap();
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    let name = created.meta().name.clone().unwrap();
    let mut out = vec![created.meta().generation];
    for patch in patches {
        let patched = api
            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap();
        out.push(patched.meta().generation);
    }
    out
}

#[tokio::test]
async fn generation_counts_changes_only_for_kinds_that_track_it() {
    case("generation", |env| async move {
        let labels = json!({RUN_LABEL: run_id()});
        let label = json!({"metadata": {"labels": {"x": "y"}}});
        let annotate = json!({"metadata": {"annotations": {"x": "y"}}});

        // A ConfigMap's generation is whatever the client sent, and then stays.
        let cms: Api<ConfigMap> = env.api();
        let cm = json!({"metadata": {"name": "cm", "labels": labels}});
        assert_eq!(generations(&cms, cm, &[]).await, [None]);
        let cm = json!({"metadata": {"name": "cm5", "generation": 5, "labels": labels}});
        let set = json!({"metadata": {"generation": 9}, "data": {"a": "b"}});
        assert_eq!(generations(&cms, cm, &[set]).await, [Some(5), Some(5)]);

        // An Ingress counts spec changes, not metadata ones.
        let ing = json!({
            "metadata": {"name": "ing", "generation": 7, "labels": labels},
            "spec": {"defaultBackend": {"service": {"name": "a", "port": {"number": 80}}}},
        });
        let spec = json!({"spec": {"defaultBackend": {"service": {"name": "b"}}}});
        let patches = [label.clone(), annotate.clone(), spec];
        let ingresses: Api<Ingress> = env.api();
        assert_eq!(
            generations(&ingresses, ing, &patches).await,
            [Some(1), Some(1), Some(1), Some(2)]
        );

        // A Deployment counts annotation changes too (paused: no controller touches it).
        let d = json!({
            "metadata": {"name": "d", "labels": labels},
            "spec": {
                "paused": true,
                "replicas": 0,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        });
        let deployments: Api<Deployment> = env.api();
        let patches = [label.clone(), annotate.clone()];
        assert_eq!(
            generations(&deployments, d, &patches).await,
            [Some(1), Some(1), Some(2)]
        );

        // A custom resource counts everything but metadata and status.
        install_widgets(&env.client).await;
        let w = json!({
            "apiVersion": "contract.example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "labels": labels},
            "spec": {"replicas": 1, "color": "red"},
        });
        let patches = [annotate, json!({"spec": {"replicas": 2}})];
        assert_eq!(
            generations(&env.api::<Widget>(), w, &patches).await,
            [Some(1), Some(1), Some(2)]
        );
    })
    .await;
}
