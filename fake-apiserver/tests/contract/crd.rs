//! Custom resources: serving, defaulting, pruning, validation and the status subresource.

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
