//! Conversion between versions of a kind whose Rust types differ, through the hub
//! (`kube-codegen-runtime`'s `webhook::conversion`), and served as ConversionReviews.

mod https;

use kube::CustomResource;
use kube::core::conversion::{ConversionRequest, ConversionReview};
use kube_codegen_runtime::webhook::WebhookServer;
use kube_codegen_runtime::webhook::conversion::Conversion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod v1alpha1 {
    use super::*;

    /// The hub: a flat spec.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "conversion.example.com",
        version = "v1alpha1",
        kind = "Gizmo",
        namespaced,
        status = "GizmoStatus"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct GizmoSpec {
        pub deployment_name: String,
        pub replicas: Option<i32>,
    }

    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct GizmoStatus {
        pub available_replicas: i32,
    }
}

mod v1beta1 {
    use super::*;

    /// The spoke: the Deployment nested; the same status.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "conversion.example.com",
        version = "v1beta1",
        kind = "Gizmo",
        namespaced,
        status = "super::v1alpha1::GizmoStatus"
    )]
    pub struct GizmoSpec {
        pub deployment: Deployment,
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    pub struct Deployment {
        pub name: String,
        pub replicas: Option<i32>,
    }
}

impl From<v1beta1::Gizmo> for v1alpha1::Gizmo {
    fn from(g: v1beta1::Gizmo) -> Self {
        let spec = v1alpha1::GizmoSpec {
            deployment_name: g.spec.deployment.name,
            replicas: g.spec.deployment.replicas,
        };
        Self {
            metadata: g.metadata,
            spec,
            status: g.status,
        }
    }
}

impl TryFrom<v1alpha1::Gizmo> for v1beta1::Gizmo {
    type Error = String;

    fn try_from(g: v1alpha1::Gizmo) -> Result<Self, String> {
        if g.spec.deployment_name.contains('/') {
            return Err(format!(
                "`{}` cannot be a Deployment name",
                g.spec.deployment_name
            ));
        }
        let deployment = v1beta1::Deployment {
            name: g.spec.deployment_name,
            replicas: g.spec.replicas,
        };
        Ok(Self {
            metadata: g.metadata,
            spec: v1beta1::GizmoSpec { deployment },
            status: g.status,
        })
    }
}

fn conversion() -> Conversion {
    Conversion::hub::<v1alpha1::Gizmo>().spoke::<v1beta1::Gizmo, v1alpha1::Gizmo>()
}

fn hub_object(name: &str) -> Value {
    json!({
        "apiVersion": "conversion.example.com/v1alpha1", "kind": "Gizmo",
        "metadata": {"name": name, "namespace": "default", "uid": "u-1", "resourceVersion": "7",
            "labels": {"app": "a"}, "generation": 3},
        "spec": {"deploymentName": "a", "replicas": 2},
        "status": {"availableReplicas": 1},
    })
}

#[test]
fn versions_convert_through_the_hub_with_metadata_untouched() {
    let c = conversion();
    assert_eq!(
        c.api_versions(),
        [
            "conversion.example.com/v1alpha1",
            "conversion.example.com/v1beta1"
        ]
    );
    let beta = c
        .convert(hub_object("a"), "conversion.example.com/v1beta1")
        .unwrap();
    assert_eq!(beta["apiVersion"], "conversion.example.com/v1beta1");
    assert_eq!(
        beta["spec"],
        json!({"deployment": {"name": "a", "replicas": 2}})
    );
    assert_eq!(beta["status"], json!({"availableReplicas": 1}));
    assert_eq!(beta["metadata"], hub_object("a")["metadata"]);
    let back = c.convert(beta, "conversion.example.com/v1alpha1").unwrap();
    assert_eq!(back, hub_object("a"));
    // The same version is left as it is.
    assert_eq!(
        c.convert(hub_object("a"), "conversion.example.com/v1alpha1")
            .unwrap(),
        hub_object("a")
    );
    c.assert_lossless(&serde_json::from_value::<v1alpha1::Gizmo>(hub_object("a")).unwrap());
}

#[test]
fn failures_name_the_object_and_why() {
    let c = conversion();
    let mut bad = hub_object("slashed");
    bad["spec"]["deploymentName"] = json!("a/b");
    assert_eq!(
        c.convert(bad.clone(), "conversion.example.com/v1beta1")
            .unwrap_err(),
        "`a/b` cannot be a Deployment name"
    );
    let unknown = c
        .convert(hub_object("a"), "conversion.example.com/v2")
        .unwrap_err();
    assert_eq!(
        unknown,
        "conversion.example.com/v2 is not a version of Gizmo this webhook converts (it converts conversion.example.com/v1alpha1, conversion.example.com/v1beta1)"
    );
    assert!(
        c.round_trip(&bad)
            .unwrap_err()
            .contains("cannot be a Deployment name")
    );
    // Only this kind, in the versions converted: not another group's object, even one
    // already in the version asked for, nor another kind.
    let mut elsewhere = hub_object("a");
    elsewhere["apiVersion"] = json!("other.example.com/v1");
    assert_eq!(
        c.convert(elsewhere, "other.example.com/v1").unwrap_err(),
        "other.example.com/v1 is not a version of Gizmo this webhook converts (it converts conversion.example.com/v1alpha1, conversion.example.com/v1beta1)"
    );
    let mut widget = hub_object("a");
    widget["kind"] = json!("Widget");
    assert_eq!(
        c.convert(widget, "conversion.example.com/v1beta1")
            .unwrap_err(),
        "the object is a Widget, not a Gizmo"
    );

    let request: ConversionRequest = serde_json::from_value(json!({
        "uid": "r-1", "desiredAPIVersion": "conversion.example.com/v1beta1",
        "objects": [hub_object("a"), bad],
    }))
    .unwrap();
    let response = c.review(request);
    assert_eq!(response.uid, "r-1");
    assert_eq!(
        response.result.status,
        Some(kube::core::response::StatusSummary::Failure)
    );
    assert_eq!(
        response.result.message,
        "converting Gizmo \"slashed\" to conversion.example.com/v1beta1: `a/b` cannot be a Deployment name"
    );
}

#[test]
fn a_lossy_version_fails_the_round_trip() {
    // A spoke that drops `replicas` on the way out.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "conversion.example.com",
        version = "v1",
        kind = "Gizmo",
        namespaced,
        status = "v1alpha1::GizmoStatus"
    )]
    #[serde(rename_all = "camelCase")]
    struct LossySpec {
        deployment_name: String,
    }
    impl From<Gizmo> for v1alpha1::Gizmo {
        fn from(g: Gizmo) -> Self {
            let spec = v1alpha1::GizmoSpec {
                deployment_name: g.spec.deployment_name,
                replicas: None,
            };
            Self {
                metadata: g.metadata,
                spec,
                status: g.status,
            }
        }
    }
    impl From<v1alpha1::Gizmo> for Gizmo {
        fn from(g: v1alpha1::Gizmo) -> Self {
            Self {
                metadata: g.metadata,
                spec: LossySpec {
                    deployment_name: g.spec.deployment_name,
                },
                status: g.status,
            }
        }
    }
    let c = Conversion::hub::<v1alpha1::Gizmo>().spoke::<Gizmo, v1alpha1::Gizmo>();
    let err = c.round_trip(&hub_object("a")).unwrap_err();
    assert!(err.starts_with("conversion.example.com/v1alpha1 -> conversion.example.com/v1 -> conversion.example.com/v1alpha1 is not lossless"), "{err}");
}

#[tokio::test]
async fn conversion_reviews_are_served() {
    let dir = std::env::temp_dir().join(format!("kube-codegen-conversion-{}", std::process::id()));
    let ca =
        kube_codegen_runtime::webhook::dev::certificate(&dir, &["127.0.0.1".to_owned()]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        WebhookServer::new()
            .conversion("/convert", conversion())
            .serve_on(listener, dir.clone(), async {
                let _ = stopped.await;
            }),
    );
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "r-2", "desiredAPIVersion": "conversion.example.com/v1beta1", "objects": [hub_object("a")]},
    });
    let (code, body) = https::call(
        addr,
        ca.as_bytes(),
        "POST",
        "/convert",
        review.to_string().as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    let answer: ConversionReview = serde_json::from_slice(&body).unwrap();
    let response = answer.response.expect("a response");
    assert_eq!(response.uid, "r-2");
    assert_eq!(response.converted_objects.len(), 1);
    assert_eq!(
        response.converted_objects[0]["spec"]["deployment"]["name"],
        "a"
    );

    // What is refused: another review type or media type (400, 415), and, in the review,
    // objects or a version of another group.
    let mut retyped = review.clone();
    retyped["apiVersion"] = json!("foo/v9");
    let (code, body) = https::call(
        addr,
        ca.as_bytes(),
        "POST",
        "/convert",
        retyped.to_string().as_bytes(),
    )
    .await;
    assert_eq!(
        (code, String::from_utf8_lossy(&body).as_ref()),
        (
            400,
            "expected apiVersion `apiextensions.k8s.io/v1` kind `ConversionReview`, got apiVersion `foo/v9` kind `ConversionReview`"
        )
    );
    let (code, _) = https::call_as(
        addr,
        ca.as_bytes(),
        "POST",
        "/convert",
        Some("text/plain"),
        review.to_string().as_bytes(),
    )
    .await;
    assert_eq!(code, 415);
    let failure = |review: Value| {
        let ca = ca.clone();
        async move {
            let (code, body) = https::call(
                addr,
                ca.as_bytes(),
                "POST",
                "/convert",
                review.to_string().as_bytes(),
            )
            .await;
            assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
            let response = serde_json::from_slice::<ConversionReview>(&body)
                .unwrap()
                .response
                .unwrap();
            assert!(response.converted_objects.is_empty());
            assert_eq!(
                response.result.status,
                Some(kube::core::response::StatusSummary::Failure)
            );
            response.result.message
        }
    };
    let mut elsewhere = review.clone();
    elsewhere["request"]["desiredAPIVersion"] = json!("other.example.com/v1");
    elsewhere["request"]["objects"][0]["apiVersion"] = json!("other.example.com/v1");
    assert_eq!(
        failure(elsewhere).await,
        "other.example.com/v1 is not a version of Gizmo this webhook converts (it converts conversion.example.com/v1alpha1, conversion.example.com/v1beta1)"
    );
    let mut widget = review.clone();
    widget["request"]["objects"][0]["kind"] = json!("Widget");
    assert_eq!(
        failure(widget).await,
        "converting Gizmo \"a\" to conversion.example.com/v1beta1: the object is a Widget, not a Gizmo"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn development_mode_points_a_crds_conversion_at_the_server_and_back() {
    use kube::CustomResourceExt;
    use kube_codegen_runtime::webhook::dev;

    let fake = fake_apiserver::FakeApiServer::new();
    let crd = kube::core::crd::merge_crds(
        vec![v1alpha1::Gizmo::crd(), v1beta1::Gizmo::crd()],
        "v1alpha1",
    )
    .unwrap();
    fake.seed(crd).unwrap();
    let client = kube::Client::new(fake.clone(), "default");
    let url = format!(
        "https://127.0.0.1:9443{}",
        kube_codegen_runtime::webhook::conversion::path::<v1alpha1::Gizmo>()
    );
    assert_eq!(
        url,
        "https://127.0.0.1:9443/convert-conversion-example-com-gizmo"
    );
    let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    let installed = dev::install_conversion(
        &client,
        "gizmos.conversion.example.com",
        &url,
        ca,
        "gizmo-dev",
    )
    .await
    .unwrap();
    let read = |fake: &fake_apiserver::FakeApiServer| {
        fake.get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "gizmos.conversion.example.com",
        )
        .unwrap()["spec"]["conversion"]
            .clone()
    };
    let conversion = read(&fake);
    assert_eq!(conversion["strategy"], "Webhook");
    assert_eq!(conversion["webhook"]["clientConfig"]["url"], url.as_str());
    assert_eq!(
        conversion["webhook"]["conversionReviewVersions"],
        json!(["v1"])
    );
    installed.uninstall().await.unwrap();
    assert_eq!(read(&fake), json!({"strategy": "None"}));
}

/// The `conversion` golden case's generated `conversions()`: the kind at the path `crds
/// --conversion-service` writes, converting through its hub with the input's `From` and
/// `TryFrom`, and a `TryFrom` error as the review's failure.
#[test]
fn generated_conversions_convert_through_the_hub() {
    use codegen_tests::conversion_apis::shop::{v1, v2};
    let conversions = codegen_tests::conversion_generated::conversion::conversions();
    let [(path, conversion)] = conversions.as_slice() else {
        panic!("one kind: {conversions:?}")
    };
    assert_eq!(path, "/convert-shop-example-com-gadget");
    let hub = v1::gadget::Gadget::new(
        "g",
        v1::gadget::GadgetSpec {
            color: "red".into(),
            size: 3,
        },
    );
    conversion.assert_lossless(&hub);
    let spoke = conversion
        .convert(serde_json::to_value(&hub).unwrap(), "shop.example.com/v2")
        .unwrap();
    let spoke: v2::gadget::Gadget = serde_json::from_value(spoke).unwrap();
    assert_eq!(spoke.spec.look.color, "red");
    let mut negative = hub.clone();
    negative.spec.size = -1;
    let err = conversion
        .convert(
            serde_json::to_value(&negative).unwrap(),
            "shop.example.com/v2",
        )
        .unwrap_err();
    assert_eq!(err, "size -1 is negative");
}
