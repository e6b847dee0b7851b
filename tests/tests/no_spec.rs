//! A kind whose properties sit at the root (`#[kube(no_spec)]`), as imported CRDs with an
//! optional `spec` or root properties beside it need: its CRD (markers at root paths, `spec`
//! not required), the fake refusing what the schema refuses at those paths, objects without
//! a spec read and written through the typed client, and apply configurations that flatten
//! the root's properties and come back from `extract`.

use codegen_tests::apply_apis::garden::v1::shed::{Shed, ShedFields, ShedSpec};
use codegen_tests::apply_generated::garden::v1::{
    ShedApplyConfiguration, ShedClient, ShedFieldsApplyConfiguration, ShedSpecApplyConfiguration,
    extract_shed,
};
use fake_apiserver::FakeApiServer;
use kube::Client;
use kube::api::PostParams;
use kube_codegen_runtime::FieldManager;
use serde_json::{Value, json};

fn shed_crd() -> Value {
    let crd = codegen_tests::apply_generated::crds()
        .unwrap()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some("sheds.garden.example.com"))
        .expect("the Shed CRD");
    serde_json::to_value(crd).unwrap()
}

#[test]
fn the_crd_keeps_spec_optional_and_markers_at_the_root() {
    let crd = shed_crd();
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    assert!(!required.contains(&json!("spec")), "{schema}");
    assert_eq!(schema["properties"]["owner"]["maxLength"], 20, "{schema}");
    assert_eq!(
        schema["properties"]["spec"]["properties"]["tools"]["minimum"], 0.0,
        "{schema}"
    );
    assert!(
        schema["properties"]["spec"].get("nullable").is_none(),
        "{schema}"
    );
    let columns = &crd["spec"]["versions"][0]["additionalPrinterColumns"];
    assert_eq!(columns[0]["jsonPath"], ".owner", "{columns}");
    assert_eq!(columns[1]["jsonPath"], ".spec.tools", "{columns}");
}

fn garden() -> (FakeApiServer, Client) {
    let fake = FakeApiServer::new();
    for crd in codegen_tests::apply_generated::crds().unwrap() {
        fake.seed(crd).unwrap();
    }
    let client = Client::new(fake.clone(), "default");
    (fake, client)
}

fn shed(name: &str, spec: Option<ShedSpec>, owner: Option<&str>) -> Shed {
    let fields = ShedFields {
        spec,
        owner: owner.map(str::to_owned),
    };
    Shed::new(name, fields)
}

#[tokio::test]
async fn objects_without_a_spec_are_read_and_written_and_the_root_is_validated() {
    let (fake, client) = garden();
    let sheds = ShedClient::new(client.clone(), "default", FieldManager::new("keeper"));
    let pp = PostParams::default();
    let bare = sheds
        .create(&shed("bare", None, Some("ann")), &pp)
        .await
        .unwrap();
    assert_eq!(bare.spec.spec, None);
    assert_eq!(bare.spec.owner.as_deref(), Some("ann"));
    let stored = fake
        .get("garden.example.com/v1", "Shed", Some("default"), "bare")
        .unwrap();
    assert!(stored.get("spec").is_none(), "no spec is written: {stored}");
    assert_eq!(stored["owner"], "ann");
    assert_eq!(sheds.get("bare").await.unwrap().spec, bare.spec);

    let long = sheds
        .create(&shed("long", None, Some("a name far too long to fit")), &pp)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = long else {
        panic!("{long:?}")
    };
    assert_eq!(status.code, 422);
    let causes = status.details.unwrap().causes;
    assert_eq!(causes[0].field, "owner", "{causes:?}");

    let negative = sheds
        .create(&shed("negative", Some(ShedSpec { tools: -1 }), None), &pp)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = negative else {
        panic!("{negative:?}")
    };
    let causes = status.details.unwrap().causes;
    assert_eq!(causes[0].field, "spec.tools", "{causes:?}");
}

#[tokio::test]
async fn apply_configurations_flatten_the_root_and_extract_gives_them_back() {
    let (_fake, client) = garden();
    let sheds = ShedClient::new(client.clone(), "default", FieldManager::new("keeper"));
    let config = ShedApplyConfiguration::new("s1", "default").with_fields(
        ShedFieldsApplyConfiguration::default()
            .with_owner("ann")
            .with_spec(ShedSpecApplyConfiguration::default().with_tools(3)),
    );
    let wire = serde_json::to_value(&config).unwrap();
    assert_eq!(wire["owner"], "ann", "{wire}");
    assert_eq!(wire["spec"]["tools"], 3, "{wire}");
    let applied = sheds.apply(&config).await.unwrap();
    assert_eq!(applied.spec.spec, Some(ShedSpec { tools: 3 }));
    assert_eq!(extract_shed(&applied, "keeper").unwrap(), config);

    // Another manager's root property: each owns its own.
    let other = ShedClient::new(client, "default", FieldManager::new("locksmith"));
    let theirs = ShedApplyConfiguration::new("s1", "default")
        .with_fields(ShedFieldsApplyConfiguration::default().with_owner("bob"));
    let err = other.apply(&theirs).await.unwrap_err();
    assert!(err.to_string().contains("conflict"), "{err}");
}
