//! CRD markers end to end: the generated `crds()` of the `markers` golden case matches its
//! golden YAML, the derive's one-call CRD equals the CLI's, the fake API server accepts the
//! CRDs, applies their defaults and rejects with 422 an object that breaks any marker.
//! Refresh the YAML with `UPDATE_GOLDEN=1 cargo test -p codegen-tests --test crd_markers`.

use codegen_tests::markers_apis::shop::v1::coupon::Coupon;
use codegen_tests::markers_generated::crds;
use fake_apiserver::FakeApiServer;
use serde_json::{Value, json};

fn golden_yaml() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/markers/crds.yaml")
}

#[test]
fn generated_crds_match_the_golden_yaml() {
    let mut yaml = String::new();
    for crd in crds().expect("the markers case builds its CRDs") {
        yaml.push_str("---\n");
        yaml.push_str(&serde_saphyr::to_string(&crd).unwrap());
    }
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(golden_yaml(), &yaml).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(golden_yaml()).unwrap();
    assert_eq!(
        yaml, expected,
        "CRD YAML drifted; refresh with UPDATE_GOLDEN=1 and review"
    );
}

#[test]
fn the_derive_gives_the_crd_the_cli_gives() {
    let from_derive = Coupon::crd_with_markers().unwrap();
    let from_cli = crds()
        .unwrap()
        .into_iter()
        .find(|c| c.spec.names.kind == "Coupon")
        .unwrap();
    assert_eq!(
        serde_json::to_value(&from_derive).unwrap(),
        serde_json::to_value(&from_cli).unwrap()
    );
    // And the markers are in it, not just equally absent from both.
    let schema = serde_json::to_value(&from_derive.spec.versions[0].schema).unwrap();
    let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["properties"]["percent"]["maximum"], 90.0);
    assert_eq!(
        spec["properties"]["products"]["x-kubernetes-list-type"],
        "set"
    );
    assert_eq!(
        from_derive.spec.names.short_names,
        Some(vec!["cpn".to_owned()])
    );
    // Markers of the nested struct and the status, which the derive reaches through
    // `CrdMarkers`.
    let limit = &spec["properties"]["limits"];
    assert_eq!(limit["x-kubernetes-list-map-keys"], json!(["group"]));
    assert_eq!(limit["items"]["properties"]["uses"]["maximum"], 100.0);
    let status = &schema["openAPIV3Schema"]["properties"]["status"];
    assert_eq!(status["properties"]["redeemed"]["minimum"], 0.0);
    // kube-codegen's element marker, on the map's values.
    assert_eq!(
        spec["properties"]["regions"]["additionalProperties"]["maxLength"],
        8
    );
}

#[test]
fn markers_land_where_controller_gen_puts_them() {
    let order = crds()
        .unwrap()
        .into_iter()
        .find(|c| c.spec.names.kind == "Order")
        .unwrap();
    let crd = serde_json::to_value(&order).unwrap();
    let version = &crd["spec"]["versions"][0];
    let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let required: Vec<&str> = spec["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        required.contains(&"currency"),
        "+required on an Option: {required:?}"
    );
    assert!(!required.contains(&"replicas"), "+optional: {required:?}");
    assert_eq!(
        spec["x-kubernetes-validations"][0]["rule"],
        "self.replicas <= 5 || self.express"
    );
    let line = &spec["properties"]["items"]["items"];
    assert_eq!(
        line["x-kubernetes-validations"][0]["reason"],
        "FieldValueInvalid"
    );
    assert_eq!(line["x-kubernetes-map-type"], "atomic");
    assert_eq!(line["properties"]["sku"]["pattern"], "^[A-Z]{3}-[0-9]+$");
    let status = &version["schema"]["openAPIV3Schema"]["properties"]["status"];
    assert_eq!(status["properties"]["replicas"]["minimum"], 0.0);
    assert_eq!(crd["spec"]["names"]["shortNames"], json!(["ord", "ords"]));
    assert_eq!(crd["spec"]["names"]["singular"], "order");
    assert_eq!(
        version["subresources"]["scale"]["specReplicasPath"],
        ".spec.replicas"
    );
    assert_eq!(version["additionalPrinterColumns"][1]["priority"], 1);
    assert_eq!(version["selectableFields"][0]["jsonPath"], ".spec.customer");
    // controller-gen's items:, Type, XIntOrString and deprecatedversion markers.
    let tags = &spec["properties"]["tags"]["items"];
    assert_eq!(
        (tags["maxLength"].clone(), tags["pattern"].clone()),
        (json!(12), json!("^[a-z]+$"))
    );
    let voucher = &spec["properties"]["voucher"];
    assert_eq!(voucher["x-kubernetes-int-or-string"], true);
    assert!(voucher.get("type").is_none(), "{voucher}");
    assert_eq!(spec["properties"]["table"]["type"], "string");
    assert_eq!(version["deprecated"], true);
    assert_eq!(
        version["deprecationWarning"],
        "shop.example.com/v1 Order is deprecated; use v2"
    );
    // Documentation markers.
    let replicas = &spec["properties"]["replicas"];
    assert_eq!(
        (replicas["title"].clone(), replicas["example"].clone()),
        (json!("Order count"), json!(2))
    );
    assert_eq!(
        line["externalDocs"],
        json!({"url": "https://shop.example.com/docs/lines", "description": "How lines are priced"})
    );
    // Schemaless: the field's description and its other markers, nothing of its type.
    assert_eq!(
        spec["properties"]["sampleLine"],
        json!({
            "description": "A line kept as written: its type is not looked into, so neither its fields nor\nits markers are in the schema.",
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true
        })
    );
    // Marker lines are instructions, not documentation.
    assert!(
        !crd.to_string().contains("+kubebuilder"),
        "a marker leaked into a description"
    );
}

fn server() -> FakeApiServer {
    let fake = FakeApiServer::new();
    for crd in crds().unwrap() {
        fake.seed(&crd)
            .expect("the fake API server accepts the generated CRD");
    }
    fake
}

fn order(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "shop.example.com/v1",
        "kind": "Order",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    })
}

fn valid() -> Value {
    json!({
        "customer": "ada",
        "currency": "EUR",
        "items": [{"sku": "TEA-1", "quantity": 2}],
        "weight": 1500,
        "volumes": {"small": "2Gi", "large": "1.5e3"},
    })
}

#[test]
fn a_valid_order_is_stored_with_the_marker_defaults() {
    let fake = server();
    let stored = fake.seed(order("ok", valid())).unwrap();
    let spec = &stored["spec"];
    assert_eq!(spec["replicas"], 1, "+kubebuilder:default=1");
    assert_eq!(spec["payment"], "card");
    assert_eq!(spec["express"], false);
    assert_eq!(spec["size"], "Medium");
}

#[test]
fn union_markers_are_controller_gens_rules_after_the_structs_own() {
    let coupon = crds()
        .unwrap()
        .into_iter()
        .find(|c| c.spec.names.kind == "Coupon")
        .unwrap();
    let crd = serde_json::to_value(&coupon).unwrap();
    let rules = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"];
    assert_eq!(
        rules,
        &json!([
            {"rule": "self.code.startsWith('SHOP')", "message": "codes start with SHOP"},
            {"rule": "(has(self.days)?1:0)+(has(self.note)?1:0) <= 1",
                "message": "at most one of the fields in [days note] may be set"},
            {"rule": "(has(self.until)?1:0)+(has(self.days)?1:0) == 1",
                "message": "exactly one of the fields in [until days] must be set"},
            {"rule": "has(self.until)||has(self.note)",
                "message": "at least one of the fields in [until note] must be set"},
        ])
    );
    let fake = server();
    let coupon = |spec: Value| {
        let mut spec = spec;
        spec["code"] = json!("SHOPNOW");
        json!({"apiVersion": "shop.example.com/v1", "kind": "Coupon",
            "metadata": {"name": "c", "namespace": "default"}, "spec": spec})
    };
    for (spec, message) in [
        (
            json!({"until": "2026-12-31", "days": 3}),
            "exactly one of the fields in [until days] must be set",
        ),
        (
            json!({"days": 3, "note": "staff"}),
            "at most one of the fields in [days note] may be set",
        ),
        (
            json!({"days": 3}),
            "at least one of the fields in [until note] must be set",
        ),
    ] {
        let err = fake.seed(coupon(spec)).unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"), "{err:?}");
        assert!(err.message.contains(message), "{}", err.message);
    }
    fake.seed(coupon(json!({"until": "2026-12-31", "note": "staff"})))
        .expect("until alone of until and days, note alone of days and note");
}

#[tokio::test]
async fn k8s_immutable_fields_keep_their_values_and_stay_once_set() {
    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    let fake = server();
    let orders: Api<DynamicObject> = Api::namespaced_with(
        kube::Client::new(fake.clone(), "default"),
        "default",
        &ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk(
            "shop.example.com",
            "v1",
            "Order",
        )),
    );
    let mut spec = valid();
    spec["email"] = json!("ada@example.com");
    let created: DynamicObject = serde_json::from_value(order("kept", spec)).unwrap();
    let created = orders
        .create(&PostParams::default(), &created)
        .await
        .unwrap();
    let changed = |edit: &dyn Fn(&mut Value)| {
        let mut obj = serde_json::to_value(&created).unwrap();
        edit(&mut obj["spec"]);
        serde_json::from_value::<DynamicObject>(obj).unwrap()
    };
    for (edit, field, message) in [
        (
            changed(&|s| s["currency"] = json!("USD")),
            "spec.currency",
            "Invalid value: \"USD\": field is immutable",
        ),
        (
            changed(&|s| {
                s.as_object_mut().unwrap().remove("email");
            }),
            "spec",
            "Invalid value: field email is immutable once set",
        ),
    ] {
        let err = orders
            .replace("kept", &PostParams::default(), &edit)
            .await
            .unwrap_err();
        let kube::Error::Api(status) = err else {
            panic!("{err}")
        };
        assert_eq!(status.code, 422, "{status:?}");
        assert!(
            status.message.contains(&format!("{field}: {message}")),
            "{}",
            status.message
        );
    }
    // Other fields change freely.
    orders
        .replace(
            "kept",
            &PostParams::default(),
            &changed(&|s| s["replicas"] = json!(2)),
        )
        .await
        .expect("replicas is not immutable");
}

#[test]
fn each_violated_marker_is_a_422_naming_the_field() {
    let fake = server();
    let with = |key: &str, value: Value| {
        let mut spec = valid();
        spec[key] = value;
        spec
    };
    let mut no_currency = valid();
    no_currency.as_object_mut().unwrap().remove("currency");
    let cases: Vec<(&str, Value, &str)> = vec![
        ("MinLength", with("customer", json!("a")), "spec.customer"),
        (
            "MaxLength",
            with("customer", json!("a".repeat(21))),
            "spec.customer",
        ),
        ("Pattern", with("customer", json!("Ada")), "spec.customer"),
        (
            "a Quantity's pattern",
            with("weight", json!("2kg")),
            "spec.weight",
        ),
        (
            "a Quantity's pattern, as a map's values",
            with("volumes", json!({"small": "banana"})),
            "spec.volumes.small",
        ),
        ("Minimum", with("replicas", json!(0)), "spec.replicas"),
        ("Maximum", with("replicas", json!(11)), "spec.replicas"),
        ("ExclusiveMinimum", with("tip", json!(0)), "spec.tip"),
        ("MultipleOf", with("tip", json!(0.3)), "spec.tip"),
        ("Enum", with("payment", json!("bitcoin")), "spec.payment"),
        ("MinItems", with("items", json!([])), "spec.items"),
        (
            "MaxItems",
            with(
                "items",
                json!(
                    (0..6)
                        .map(|i| json!({"sku": format!("TEA-{i}"), "quantity": 1}))
                        .collect::<Vec<_>>()
                ),
            ),
            "spec.items",
        ),
        (
            "listMapKey",
            with(
                "items",
                json!([{"sku": "TEA-1", "quantity": 1}, {"sku": "TEA-1", "quantity": 2}]),
            ),
            "spec.items[1]",
        ),
        (
            "nested Pattern",
            with("items", json!([{"sku": "tea", "quantity": 1}])),
            "spec.items[0].sku",
        ),
        (
            "nested Minimum",
            with("items", json!([{"sku": "TEA-1", "quantity": 0}])),
            "spec.items[0].quantity",
        ),
        (
            "UniqueItems",
            with("tags", json!(["hot", "hot"])),
            "spec.tags[1]",
        ),
        (
            "MaxProperties",
            with("notes", json!({"a": "1", "b": "2", "c": "3", "d": "4"})),
            "spec.notes",
        ),
        ("required", no_currency, "spec.currency"),
        (
            "XValidation",
            with("replicas", json!(7)),
            "spec: Invalid value: more than 5 needs express delivery",
        ),
        (
            "nested XValidation with fieldPath",
            with("items", json!([{"sku": "TEA-1", "quantity": 101}])),
            "spec.items[0].quantity: Invalid value: at most 100 of one SKU",
        ),
    ];
    for (i, (marker, spec, field)) in cases.into_iter().enumerate() {
        let err = fake
            .seed(order(&format!("bad-{i}"), spec))
            .expect_err(marker);
        assert_eq!(err.code, 422, "{marker}: {}", err.message);
        assert!(
            err.message.contains(field),
            "{marker}: `{field}` not in: {}",
            err.message
        );
    }
}

mod tagged {
    use kube::CustomResource;
    use kube_codegen_runtime::GenClient;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The derive cannot see `Shape` (another item), so the check the CLI makes at
    /// generation time happens here at run time: an error, not kube's panic.
    #[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
    pub struct WidgetSpec {
        pub shape: Shape,
    }

    #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[serde(tag = "kind")]
    pub enum Shape {
        Round { radius: i32 },
        Square { side: i32 },
    }
}

#[test]
fn a_schema_kube_cannot_build_is_an_error_not_a_panic() {
    let err = tagged::Widget::crd_with_markers().unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, kube_codegen_runtime::crd::CrdError::Schema { .. }),
        "{text}"
    );
    assert!(text.contains("widgets.example.com"), "{text}");
}

// The default on an `Option` is the point of these cases: the derive's warning about it is
// expected here.
#[allow(deprecated)]
mod unseen {
    use kube::CustomResource;
    use kube_codegen_runtime::GenClient;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// What the derive cannot see at compile time is checked when the CRD is built: a
    /// nested struct's markers without `CrdMarkers`, a marker on a field whose type turns
    /// out to be an object (but a value validation, which is kept), a default outside an
    /// enum defined elsewhere.
    #[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Gadget", namespaced)]
    pub struct GadgetSpec {
        pub part: Part,
        /// +listType=atomic
        pub shape: Part,
        /// A value validation of another type is kept, as kube-apiserver keeps it.
        /// +kubebuilder:validation:Minimum=1
        pub size: Part,
        /// +kubebuilder:default=urgent
        pub priority: Option<Priority>,
    }

    /// No `CrdMarkers`: its markers cannot reach the CRD.
    #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
    pub struct Part {
        /// +kubebuilder:validation:MaxLength=3
        /// +k8s:immutable
        pub name: String,
    }

    #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Priority {
        Low,
        High,
    }
}

mod schemaless {
    use kube::CustomResource;
    use kube_codegen_runtime::GenClient;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Plugin", namespaced)]
    pub struct PluginSpec {
        /// Settings, checked by the plugin itself.
        ///
        /// +kubebuilder:validation:Schemaless
        /// +kubebuilder:validation:Type=object
        /// +kubebuilder:pruning:PreserveUnknownFields
        pub settings: Option<serde_json::Value>,
        /// A struct of another crate's, kept as written: without `Schemaless` its markers
        /// would have to reach the CRD through `CrdMarkers`.
        ///
        /// +kubebuilder:validation:Schemaless
        /// +kubebuilder:validation:Type=object
        /// +kubebuilder:validation:XPreserveUnknownFields
        pub part: Option<super::unseen::Part>,
        /// A list of them, its items kept as written.
        ///
        /// +kubebuilder:validation:items:Schemaless
        /// +kubebuilder:validation:items:Type=object
        /// +kubebuilder:validation:items:XPreserveUnknownFields
        #[serde(default)]
        pub parts: Vec<super::unseen::Part>,
    }
}

#[test]
fn a_schemaless_field_is_its_description_and_its_markers_alone() {
    let crd = schemaless::Plugin::crd_with_markers().expect("the CRD builds");
    let crd = serde_json::to_value(&crd).unwrap();
    let props = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(
        props["settings"],
        json!({"description": "Settings, checked by the plugin itself.", "type": "object",
            "x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(props["part"]["type"], "object");
    assert_eq!(props["part"]["x-kubernetes-preserve-unknown-fields"], true);
    assert!(
        props["part"].get("properties").is_none(),
        "{}",
        props["part"]
    );
    assert!(props["part"].get("nullable").is_none(), "{}", props["part"]);
    assert_eq!(props["parts"]["type"], "array");
    let items = &props["parts"]["items"];
    assert_eq!(items["type"], "object");
    assert_eq!(items["x-kubernetes-preserve-unknown-fields"], true);
    assert!(items.get("properties").is_none(), "{items}");
}

#[test]
fn what_the_derive_cannot_see_fails_the_crd_build_naming_the_marker() {
    let err = unseen::Gadget::crd_with_markers().unwrap_err();
    let kube_codegen_runtime::crd::CrdError::Invalid { name, problems } = &err else {
        panic!("{err}");
    };
    assert_eq!(name, "gadgets.example.com");
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m
            .starts_with("spec.part.name: `+kubebuilder:validation:MaxLength=3` was not applied")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("spec.part.name: `+k8s:immutable` was not applied")),
        "{messages:?}"
    );
    assert!(
        messages.contains(
            &"spec.shape: `x-kubernetes-list-type` applies to lists, but the schema there is of type object"
        ),
        "{messages:?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("minimum")),
        "{messages:?}"
    );
    // Marker problems first; what the API server would refuse is reported once they are fixed.
    assert!(
        !messages.iter().any(|m| m.contains("urgent")),
        "{messages:?}"
    );
}

#[allow(deprecated)]
mod refused {
    use kube::CustomResource;
    use kube_codegen_runtime::GenClient;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, GenClient, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Gizmo", namespaced)]
    pub struct GizmoSpec {
        /// +kubebuilder:default=urgent
        pub priority: Option<super::unseen::Priority>,
    }
}

#[test]
fn a_crd_the_api_server_would_refuse_is_an_error_in_its_words() {
    let err = refused::Gizmo::crd_with_markers().unwrap_err();
    let kube_codegen_runtime::crd::CrdError::Invalid { problems, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(problems.len(), 1, "{err}");
    assert_eq!(
        problems[0].message,
        // As kube-apiserver 1.36 words it (schemars lists `null` for an `Option` enum).
        "spec.validation.openAPIV3Schema.properties[spec].properties[priority].default: Unsupported value: \"urgent\": supported values: \"low\", \"high\", \"null\""
    );
    assert_eq!(problems[0].path, ["spec", "priority"]);
    assert_eq!(problems[0].key.as_deref(), Some("default"));
}
