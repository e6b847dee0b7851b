//! Custom resources: serving, defaulting, pruning, validation and the status subresource.

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::env::{case, status};
use crate::{Widget, WidgetSpec, WidgetStatus, install_widgets};

#[tokio::test]
async fn crds_serve_validate_default_and_prune() {
    case("crd", |env| async move {
        install_widgets(&env.client).await;
        let widgets: Api<Widget> = env.api();
        let mut raw = serde_json::to_value(Widget::new(
            "w",
            WidgetSpec {
                replicas: 2,
                color: "red".into(),
            },
        ))
        .unwrap();
        raw["spec"]["unknown"] = json!("dropped");
        raw["spec"].as_object_mut().unwrap().remove("color");
        let dynamic: Api<kube::core::DynamicObject> = Api::namespaced_with(
            env.client.clone(),
            &env.ns,
            &kube::core::ApiResource::erase::<Widget>(&()),
        );
        let created = dynamic
            .create(
                &PostParams::default(),
                &serde_json::from_value(raw).unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(
            created.data["spec"],
            json!({"replicas": 2, "color": "blue"}),
            "defaulted and pruned"
        );

        let err = widgets
            .create(
                &PostParams::default(),
                &Widget::new(
                    "bad",
                    WidgetSpec {
                        replicas: 11,
                        color: "red".into(),
                    },
                ),
            )
            .await
            .unwrap_err();
        let s = status(err);
        assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
        assert_eq!(
            s.message,
            "Widget.contract.example.com \"bad\" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        );
        assert_eq!(crate::env::causes(&s), [("FieldValueInvalid".to_owned(), "spec.replicas".to_owned())]);
    })
    .await;
}

#[tokio::test]
async fn the_status_subresource_splits_spec_and_status() {
    case("status", |env| async move {
        install_widgets(&env.client).await;
        let widgets: Api<Widget> = env.api();
        let mut w = Widget::new(
            "w",
            WidgetSpec {
                replicas: 1,
                color: "red".into(),
            },
        );
        w.status = Some(WidgetStatus { ready: 5 });
        let created = widgets.create(&PostParams::default(), &w).await.unwrap();
        assert_eq!(created.status, None, "create drops the status");
        assert_eq!(created.metadata.generation, Some(1));

        let status = widgets
            .patch_status(
                "w",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"ready": 1}, "spec": {"replicas": 9}})),
            )
            .await
            .unwrap();
        assert_eq!(status.status, Some(WidgetStatus { ready: 1 }));
        assert_eq!(status.spec.replicas, 1, "/status ignores the spec");
        assert_eq!(
            status.metadata.generation,
            Some(1),
            "a status write keeps the generation"
        );

        let spec = widgets
            .patch(
                "w",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"ready": 7}, "spec": {"replicas": 3}})),
            )
            .await
            .unwrap();
        assert_eq!(spec.spec.replicas, 3);
        assert_eq!(
            spec.status,
            Some(WidgetStatus { ready: 1 }),
            "the main endpoint ignores the status"
        );
        assert_eq!(
            spec.metadata.generation,
            Some(2),
            "a spec change bumps the generation"
        );
    })
    .await;
}

/// Installs (or updates) the Gadget CRD of `group`, served in `v1` and `v2` with conversion
/// `None` and stored in `storage`, and waits until both versions answer.
async fn install_gadgets(client: &kube::Client, group: &str, storage: &str) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
    }}});
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gadgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [
                {"name": "v1", "served": true, "storage": storage == "v1", "schema": schema},
                {"name": "v2", "served": true, "storage": storage == "v2", "schema": schema},
            ],
        },
    }))
    .unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        &format!("gadgets.{group}"),
        &PatchParams::apply("contract-suite").force(),
        &Patch::Apply(crd),
    )
    .await
    .expect("the Gadget CRD is accepted");
    for version in ["v1", "v2"] {
        let api: Api<kube::core::DynamicObject> =
            Api::all_with(client.clone(), &gadget_resource(group, version));
        crate::env::eventually("gadgets are served", || async {
            api.list(&Default::default()).await.ok().map(|_| ())
        })
        .await;
    }
}

fn gadget_resource(group: &str, version: &str) -> kube::core::ApiResource {
    kube::core::ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    }
}

#[tokio::test]
async fn every_served_version_reads_the_stored_object_in_its_own_version() {
    use futures::TryStreamExt;
    case("versions", |env| async move {
        // Shared by every run, never deleted.
        install_gadgets(&env.client, "contract.example.com", "v1").await;
        let api = |version: &str| -> Api<kube::core::DynamicObject> {
            Api::namespaced_with(
                env.client.clone(),
                &env.ns,
                &gadget_resource("contract.example.com", version),
            )
        };
        let (v1, v2) = (api("v1"), api("v2"));
        // A watch in v2 from now on.
        let from = v2
            .list(&Default::default())
            .await
            .unwrap()
            .metadata
            .resource_version;
        let events = v2
            .watch(
                &kube::api::WatchParams::default().timeout(10),
                &from.unwrap_or_default(),
            )
            .await
            .unwrap();
        let gadget: kube::core::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "contract.example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "labels": {crate::env::RUN_LABEL: crate::env::run_id()}},
            "spec": {"size": 3},
        }))
        .unwrap();
        let created = v1.create(&PostParams::default(), &gadget).await.unwrap();
        assert_eq!(
            created.types.as_ref().map(|t| t.api_version.as_str()),
            Some("contract.example.com/v1")
        );
        let got = v2.get("g").await.unwrap();
        assert_eq!(
            got.types.as_ref().map(|t| t.api_version.as_str()),
            Some("contract.example.com/v2")
        );
        assert_eq!(got.data["spec"]["size"], 3);
        let listed = v2.list(&env.ours()).await.unwrap();
        let versions: Vec<_> = listed
            .items
            .iter()
            .map(|o| o.types.as_ref().map(|t| t.api_version.clone()))
            .collect();
        assert_eq!(versions, [Some("contract.example.com/v2".to_owned())]);
        let mut events = events.boxed();
        let added = loop {
            match events.try_next().await.unwrap() {
                Some(kube::api::WatchEvent::Added(o))
                    if o.metadata.name.as_deref() == Some("g") =>
                {
                    break o;
                }
                Some(_) => {}
                None => panic!("the watch ended without ADDED for g"),
            }
        };
        assert_eq!(
            added.types.as_ref().map(|t| t.api_version.as_str()),
            Some("contract.example.com/v2")
        );
    })
    .await;
}

#[tokio::test]
async fn objects_stored_before_a_storage_version_change_are_served_in_the_version_asked() {
    case("storage", |env| async move {
        // A CRD of this run alone: its storage version changes under the test.
        let group = format!("g{}.contract.example.com", crate::env::run_id());
        env.delete_later(
            kube::core::ApiResource::erase::<
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
            >(&()),
            &format!("gadgets.{group}"),
        );
        install_gadgets(&env.client, &group, "v1").await;
        let api = |version: &str| -> Api<kube::core::DynamicObject> {
            Api::namespaced_with(env.client.clone(), &env.ns, &gadget_resource(&group, version))
        };
        let gadget: kube::core::DynamicObject = serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"),
            "kind": "Gadget",
            "metadata": {"name": "old"},
            "spec": {"size": 1},
        }))
        .unwrap();
        api("v1").create(&PostParams::default(), &gadget).await.unwrap();
        // v2 becomes the storage version; `old` stays stored as it was written, in v1.
        install_gadgets(&env.client, &group, "v2").await;
        let v2 = api("v2");
        let version_of = |o: &kube::core::DynamicObject| {
            o.types.as_ref().map(|t| t.api_version.clone()).unwrap_or_default()
        };
        let expected = format!("{group}/v2");
        crate::env::eventually("v2 is the storage version", || async {
            // The real server switches a moment after the CRD update.
            let got = v2.get("old").await.ok()?;
            (version_of(&got) == expected).then_some(())
        })
        .await;
        let listed = v2.list(&Default::default()).await.unwrap();
        assert_eq!(
            listed.items.iter().map(version_of).collect::<Vec<_>>(),
            std::slice::from_ref(&expected)
        );
        let initial: Vec<_> = v2
            .watch(&kube::api::WatchParams::default().timeout(1), "0")
            .await
            .unwrap()
            .collect::<Vec<_>>()
            .await;
        let added: Vec<String> = initial
            .into_iter()
            .filter_map(|e| match e {
                Ok(kube::api::WatchEvent::Added(o)) => Some(version_of(&o)),
                _ => None,
            })
            .collect();
        assert_eq!(added, std::slice::from_ref(&expected));
        assert_eq!(version_of(&api("v1").get("old").await.unwrap()), format!("{group}/v1"));
    })
    .await;
}

#[tokio::test]
async fn integers_outside_their_format_are_refused_in_the_real_servers_words() {
    case("crd-integers", |env| async move {
        install_widgets(&env.client).await;
        let widgets = env.path("contract.example.com/v1", "widgets");
        let body = |replicas: &str| {
            format!(
                r#"{{"apiVersion":"contract.example.com/v1","kind":"Widget","metadata":{{"name":"w","labels":{{"{}":"{}"}}}},"spec":{{"replicas":{replicas}}}}}"#,
                crate::env::RUN_LABEL,
                crate::env::run_id()
            )
        };
        // `replicas` is `integer`, `format: int32`, 1 to 10 (an `i32` with a range).
        let checked = "<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in spec.replicas";
        let float = "spec.replicas: Invalid value: \"float64\": spec.replicas in body must be of type int32: \"float64\"";
        for (replicas, message, causes) in [
            (
                "1.5",
                format!("[{float}, {checked}]"),
                vec![("FieldValueTypeInvalid", "spec.replicas"), ("FieldValueInvalid", "<nil>")],
            ),
            // An int64 outside int32: the format check's error, then the bound's.
            (
                "3000000000",
                format!("[{checked}, spec.replicas: Invalid value: 3000000000: spec.replicas in body should be less than or equal to 10]"),
                vec![("FieldValueInvalid", "<nil>"), ("FieldValueInvalid", "spec.replicas")],
            ),
            (
                "true",
                "spec.replicas: Invalid value: \"\": spec.replicas in body must be of type int32: \"\"".to_owned(),
                vec![("FieldValueTypeInvalid", "spec.replicas")],
            ),
        ] {
            let r = env.raw("POST", &widgets, "application/json", &body(replicas)).await;
            assert_eq!(r.status(), (422, "Invalid"), "{replicas}: {}", r.body);
            assert_eq!(
                r.message(),
                format!("Widget.contract.example.com \"w\" is invalid: {message}"),
                "{replicas}"
            );
            let got: Vec<(String, String)> = r.body["details"]["causes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
                    (s("reason"), s("field"))
                })
                .collect();
            let want: Vec<(String, String)> = causes
                .iter()
                .map(|(r, f)| ((*r).to_owned(), (*f).to_owned()))
                .collect();
            assert_eq!(got, want, "{replicas}: causes in the server's order");
        }
    })
    .await;
}
