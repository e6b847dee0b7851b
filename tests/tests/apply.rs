//! Apply configurations on the fake API server, through the generated typed clients:
//! extract gives back exactly what a manager applied (one case per kind shape: a CLI kind
//! with nested structs, keyed lists, sets, maps and a status; a cluster-scoped derive kind
//! with a multi-key list; built-in kinds), two managers share and conflict as server-side
//! apply says, and extract reads objects whose `managedFields` a real kube-apiserver wrote.

use codegen_tests::apply_apis::garden::v1::greenhouse::{
    GreenhouseSpecApplyConfiguration, GreenhouseStatusApplyConfiguration, HeaterApplyConfiguration,
    PaneApplyConfiguration,
};
use codegen_tests::apply_apis::garden::v1::planter::{Label, Light, Location, Zone};
use codegen_tests::apply_generated::garden::v1::{
    BedApplyConfiguration, GreenhouseApplyConfiguration, PlanterApplyConfiguration, PlanterClient,
    PlanterConditionApplyConfiguration, PlanterSpecApplyConfiguration,
    PlanterStatusApplyConfiguration, SoilApplyConfiguration, ZoneApplyConfiguration,
    extract_greenhouse, extract_greenhouse_status, extract_planter, extract_planter_status,
};
use codegen_tests::builtins_generated::apps::v1::{
    DeploymentApplyConfiguration, DeploymentClient, extract_deployment,
};
use codegen_tests::builtins_generated::core::v1::{
    ConfigMapApplyConfiguration, extract_config_map,
};
use codegen_tests::{Foo, FooApplyConfiguration, FooStatusApplyConfiguration};
use fake_apiserver::FakeApiServer;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::Client;
use kube_codegen_runtime::FieldManager;
use kube_codegen_runtime::applyconfigurations::apps::v1 as apps_ac;
use kube_codegen_runtime::applyconfigurations::core::v1 as ac;
use serde_json::Value;

/// A fake with the garden CRDs, and a client of it.
fn garden() -> (FakeApiServer, Client) {
    let fake = FakeApiServer::new();
    for crd in codegen_tests::apply_generated::crds().unwrap() {
        fake.seed(crd).unwrap();
    }
    let client = Client::new(fake.clone(), "default");
    (fake, client)
}

fn planters(client: &Client, manager: FieldManager) -> PlanterClient {
    PlanterClient::new(client.clone(), "default", manager)
}

/// Everything a planter can say: nested structs, a keyed list of structs with a set inside,
/// a set, an atomic list, a map of structs, an atomic map, an atomic struct, an enum.
fn full_planter(name: &str) -> PlanterApplyConfiguration {
    PlanterApplyConfiguration::new(name, "default")
        .with_labels([("team", "green")])
        .with_annotations([("note", "round trip")])
        .with_finalizers(["garden.example.com/compost"])
        .with_spec(
            PlanterSpecApplyConfiguration::default()
                .with_size(40)
                .with_soil(
                    SoilApplyConfiguration::default()
                        .with_ph(6.5)
                        .with_mix(["loam".to_owned(), "sand".to_owned()]),
                )
                .with_beds([
                    BedApplyConfiguration::default()
                        .with_name("north")
                        .with_depth_cm(30)
                        .with_plants(["kale".to_owned()]),
                    BedApplyConfiguration::default()
                        .with_name("south")
                        .with_plants(["leek".to_owned(), "chard".to_owned()]),
                ])
                .with_tags(["organic".to_owned()])
                .with_notes(["water weekly".to_owned()])
                .with_zones([(
                    "sunny".to_owned(),
                    ZoneApplyConfiguration::default().with_hours(8),
                )])
                .with_frozen([("cold".to_owned(), Zone { hours: 2 })])
                .with_location(Location {
                    lat: 52.5,
                    lon: 4.25,
                })
                .with_light(Light::Partial)
                .with_label(Label("kitchen".into())),
        )
}

#[tokio::test]
async fn extract_gives_back_what_was_applied_to_a_cli_kind_and_its_status() {
    let (_fake, client) = garden();
    let gardener = planters(&client, FieldManager::new("gardener"));
    let config = full_planter("p1");
    gardener.apply(&config).await.unwrap();
    let obj = gardener.get("p1").await.unwrap();
    assert_eq!(extract_planter(&obj, "gardener").unwrap(), config);
    // A newtype is applied as what it holds.
    assert_eq!(
        serde_json::to_value(&obj).unwrap()["spec"]["label"],
        "kitchen"
    );

    let status = PlanterApplyConfiguration::new("p1", "default").with_status(
        PlanterStatusApplyConfiguration::default()
            .with_conditions([PlanterConditionApplyConfiguration::default()
                .with_type("Watered")
                .with_status("True")])
            .with_watered("2026-11-23"),
    );
    let thermometer = planters(&client, FieldManager::new("thermometer"));
    thermometer.apply_status(&status).await.unwrap();
    let obj = gardener.get("p1").await.unwrap();
    assert_eq!(extract_planter_status(&obj, "thermometer").unwrap(), status);
    // Each manager still owns exactly its own part.
    assert_eq!(extract_planter(&obj, "gardener").unwrap(), config);
    assert_eq!(
        extract_planter(&obj, "thermometer").unwrap(),
        PlanterApplyConfiguration::new("p1", "default")
    );
}

#[tokio::test]
async fn extract_gives_back_what_was_applied_to_a_derive_kind() {
    let (_fake, client) = garden();
    let greenhouses = codegen_tests::apply_generated::garden::v1::GreenhouseClient::new(
        client.clone(),
        FieldManager::new("glazier"),
    );
    let config = GreenhouseApplyConfiguration::new("g1").with_spec(
        GreenhouseSpecApplyConfiguration::default()
            .with_panes([
                PaneApplyConfiguration::default().with_row(1).with_column(1),
                PaneApplyConfiguration::default()
                    .with_row(1)
                    .with_column(2)
                    .with_tinted(true),
            ])
            .with_heater(
                HeaterApplyConfiguration::default()
                    .with_watts(500)
                    .with_schedule([("06".to_owned(), 18.5), ("22".to_owned(), 12.0)]),
            ),
    );
    greenhouses.apply(&config).await.unwrap();
    let status = GreenhouseApplyConfiguration::new("g1")
        .with_status(GreenhouseStatusApplyConfiguration::default().with_temperature(21.5));
    greenhouses.apply_status(&status).await.unwrap();
    let obj = greenhouses.get("g1").await.unwrap();
    assert_eq!(extract_greenhouse(&obj, "glazier").unwrap(), config);
    assert_eq!(extract_greenhouse_status(&obj, "glazier").unwrap(), status);
}

#[tokio::test]
async fn extract_gives_back_what_was_applied_to_built_in_kinds() {
    let fake = FakeApiServer::new();
    let client = Client::new(fake.clone(), "default");
    let labels = [("app".to_owned(), "web".to_owned())];
    let container = ac::ContainerApplyConfiguration::default()
        .with_name("nginx")
        .with_image("nginx:1.27")
        .with_args(["--port=80".to_owned()])
        .with_ports([ac::ContainerPortApplyConfiguration::default()
            .with_container_port(80)
            .with_protocol("TCP")])
        .with_env([ac::EnvVarApplyConfiguration::default()
            .with_name("MODE")
            .with_value("prod")])
        .with_resources(
            ac::ResourceRequirementsApplyConfiguration::default()
                .with_limits([("memory", Quantity("128Mi".into()))]),
        );
    let config = DeploymentApplyConfiguration::new("web", "default")
        .with_labels(labels.clone())
        .with_spec(
            apps_ac::DeploymentSpecApplyConfiguration::default()
                .with_replicas(2)
                .with_selector(LabelSelector {
                    match_labels: Some(labels.clone().into()),
                    ..LabelSelector::default()
                })
                .with_template(
                    ac::PodTemplateSpecApplyConfiguration::default()
                        .with_metadata(kube::api::ObjectMeta {
                            labels: Some(labels.clone().into()),
                            ..Default::default()
                        })
                        .with_spec(
                            ac::PodSpecApplyConfiguration::default()
                                .with_containers([container])
                                .with_node_selector([("disk", "ssd".to_owned())]),
                        ),
                ),
        );
    let deployments = DeploymentClient::new(client.clone(), "default", FieldManager::new("web-op"));
    deployments.apply(&config).await.unwrap();
    let obj = deployments.get("web").await.unwrap();
    assert_eq!(extract_deployment(&obj, "web-op").unwrap(), config);

    let config_map = ConfigMapApplyConfiguration::new("settings", "default")
        .with_data([("a", "1".to_owned()), ("b", "2".to_owned())]);
    let config_maps = codegen_tests::builtins_generated::core::v1::ConfigMapClient::new(
        client,
        "default",
        FieldManager::new("cm-op"),
    );
    config_maps.apply(&config_map).await.unwrap();
    let obj = config_maps.get("settings").await.unwrap();
    assert_eq!(extract_config_map(&obj, "cm-op").unwrap(), config_map);
}

#[tokio::test]
async fn two_managers_share_merge_and_conflict() {
    let (_fake, client) = garden();
    let alice = planters(&client, FieldManager::new("alice"));
    let bob = planters(&client, FieldManager::new("bob"));
    let alice_config = PlanterApplyConfiguration::new("shared", "default").with_spec(
        PlanterSpecApplyConfiguration::default()
            .with_size(10)
            .with_soil(SoilApplyConfiguration::default().with_ph(6.0))
            .with_tags(["a".to_owned()])
            .with_zones([(
                "x".to_owned(),
                ZoneApplyConfiguration::default().with_hours(1),
            )])
            .with_light(Light::Full),
    );
    alice.apply(&alice_config).await.unwrap();
    let bob_config = PlanterApplyConfiguration::new("shared", "default").with_spec(
        PlanterSpecApplyConfiguration::default()
            .with_tags(["b".to_owned()])
            .with_zones([(
                "y".to_owned(),
                ZoneApplyConfiguration::default().with_hours(2),
            )])
            .with_beds([BedApplyConfiguration::default()
                .with_name("n1")
                .with_depth_cm(5)]),
    );
    bob.apply(&bob_config).await.unwrap();

    // A set and a map merge item by item: both managers' items are there, each owned by
    // the manager that applied it.
    let obj = alice.get("shared").await.unwrap();
    assert_eq!(obj.spec.tags, ["a", "b"]);
    assert_eq!(obj.spec.zones.keys().collect::<Vec<_>>(), ["x", "y"]);
    assert_eq!(extract_planter(&obj, "alice").unwrap(), alice_config);
    assert_eq!(extract_planter(&obj, "bob").unwrap(), bob_config);

    // Bob setting a field Alice owns, to another value, conflicts.
    let takeover = bob_config
        .clone()
        .with_spec(bob_config.spec.clone().unwrap().with_size(20));
    let err = bob.apply(&takeover).await.unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (409, "Conflict"),
        "{status:?}"
    );
    assert!(
        status.message.contains(r#"conflict with "alice""#)
            && status.message.contains(".spec.size"),
        "{}",
        status.message
    );
    assert_eq!(alice.get("shared").await.unwrap().spec.size, Some(10));

    // Forced, Bob takes the field: Alice no longer owns it.
    let forced = planters(&client, FieldManager::new("bob").force());
    forced.apply(&takeover).await.unwrap();
    let obj = alice.get("shared").await.unwrap();
    assert_eq!(obj.spec.size, Some(20));
    assert_eq!(extract_planter(&obj, "bob").unwrap(), takeover);
    let mut alice_now = alice_config.clone();
    alice_now.spec.as_mut().unwrap().size = None;
    assert_eq!(extract_planter(&obj, "alice").unwrap(), alice_now);

    // Alice stops applying her tag and zone: they go; Bob's stay.
    let mut smaller = alice_now.clone();
    let spec = smaller.spec.as_mut().unwrap();
    spec.tags = None;
    spec.zones = None;
    alice.apply(&smaller).await.unwrap();
    let obj = alice.get("shared").await.unwrap();
    assert_eq!(obj.spec.tags, ["b"]);
    assert_eq!(obj.spec.zones.keys().collect::<Vec<_>>(), ["y"]);
    assert_eq!(extract_planter(&obj, "alice").unwrap(), smaller);
}

fn recorded(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fake-apiserver/tests/fixtures/real-apiserver")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn extract_reads_what_a_real_kube_apiserver_recorded() {
    // Two managers applied to one Deployment, then `kubectl scale` took `replicas`
    // (shared/testdata/real-apiserver/dep-a.yaml and dep-b.yaml).
    let web: k8s_openapi::api::apps::v1::Deployment =
        serde_json::from_value(recorded("real-deployment-two-managers.json")).unwrap();
    let labels = [("app".to_owned(), "web".to_owned())];
    let manager_a = DeploymentApplyConfiguration::new("web", "mf")
        .with_labels(labels.clone())
        .with_spec(
            apps_ac::DeploymentSpecApplyConfiguration::default()
                .with_selector(LabelSelector {
                    match_labels: Some(labels.clone().into()),
                    ..LabelSelector::default()
                })
                .with_template(
                    ac::PodTemplateSpecApplyConfiguration::default()
                        .with_metadata(kube::api::ObjectMeta {
                            labels: Some(labels.clone().into()),
                            ..Default::default()
                        })
                        .with_spec(
                            ac::PodSpecApplyConfiguration::default().with_containers([
                                ac::ContainerApplyConfiguration::default()
                                    .with_name("nginx")
                                    .with_image("nginx:1.27")
                                    .with_ports([ac::ContainerPortApplyConfiguration::default()
                                        .with_container_port(80)
                                        .with_protocol("TCP")])
                                    .with_env([ac::EnvVarApplyConfiguration::default()
                                        .with_name("MODE")
                                        .with_value("prod")]),
                            ]),
                        ),
                ),
        );
    assert_eq!(extract_deployment(&web, "manager-a").unwrap(), manager_a);
    let manager_b = DeploymentApplyConfiguration::new("web", "mf")
        .with_annotations([("owner-b", "yes")])
        .with_spec(
            apps_ac::DeploymentSpecApplyConfiguration::default().with_template(
                ac::PodTemplateSpecApplyConfiguration::default().with_spec(
                    ac::PodSpecApplyConfiguration::default().with_containers([
                        ac::ContainerApplyConfiguration::default()
                            .with_name("nginx")
                            .with_env([ac::EnvVarApplyConfiguration::default()
                                .with_name("EXTRA")
                                .with_value("1")]),
                        ac::ContainerApplyConfiguration::default()
                            .with_name("sidecar")
                            .with_image("busybox:1.36"),
                    ]),
                ),
            ),
        );
    assert_eq!(extract_deployment(&web, "manager-b").unwrap(), manager_b);
    // `kubectl scale` updated; it applied nothing.
    assert_eq!(
        extract_deployment(&web, "kubectl").unwrap(),
        DeploymentApplyConfiguration::new("web", "mf")
    );

    // manager-b applied `data: {}` over manager-a's entries: it owns none of them.
    let shared: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(recorded("real-configmap-co-owned-after-b-drops-k.json")).unwrap();
    let b = extract_config_map(&shared, "manager-b").unwrap();
    assert_eq!(b.data, None, "{b:?}");
    let a = extract_config_map(&shared, "manager-a").unwrap();
    assert!(a.data.is_some_and(|d| d.contains_key("k")));

    // A Foo: finalizers as a set (`v:` keys) and a status applied through `/status`.
    let foo: Foo =
        serde_json::from_value(recorded("real-foo-spec-and-status-managers.json")).unwrap();
    let spec = codegen_tests::extract_foo(&foo, "manager-a").unwrap();
    assert_eq!(
        spec.metadata.unwrap().finalizers.unwrap(),
        ["example.com/a", "example.com/b"]
    );
    assert_eq!(
        codegen_tests::extract_foo_status(&foo, "status-writer").unwrap(),
        FooApplyConfiguration::new("f1", "mf")
            .with_status(FooStatusApplyConfiguration::default().with_available_replicas(1))
    );
}
